package evidence

import (
	"context"
	"sync"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

// commandCheck is one command check to run.
type commandCheck struct {
	id gate.CheckID
	ch loop.Check
}

// atOnce measures the checks into ev with up to n command checks running
// at once (n <= 0: all of them), started in config order; file checks are
// looked at once every command has finished. Each command is still swept
// after it (process.Run), sparing only the commands still running. When
// any sweep fails, processes that could not be killed were running beside
// every other command: no check of the measurement counts, every one fails
// with the reason (the first in config order), which atOnce returns.
func (c *Collector) atOnce(ctx context.Context, ev *gate.Evidence, cfg *loop.Config, n int) error {
	var cmds []commandCheck
	for _, g := range cfg.Goals {
		for i, ch := range g.Checks {
			if ch.IsCommand() {
				cmds = append(cmds, commandCheck{gate.CheckID{Goal: g.Name, Index: i}, ch})
			}
		}
	}
	results, void := c.commands(ctx, cmds, n)
	for i, cc := range cmds {
		if void != nil {
			results[i] = voidCommand(cc.ch.Run, cc.ch.Argv, void)
		}
		ev.Commands[cc.id] = results[i]
	}
	for _, g := range cfg.Goals {
		for i, ch := range g.Checks {
			if !ch.IsCommand() {
				void = c.check(ctx, ev, gate.CheckID{Goal: g.Name, Index: i}, ch, void)
			}
		}
	}
	return void
}

// commands runs cmds, up to n at once (n <= 0: all), and returns their
// results in order and the first reason, in order, to stop measuring.
func (c *Collector) commands(ctx context.Context, cmds []commandCheck, n int) ([]gate.CommandResult, error) {
	if n <= 0 || n > len(cmds) {
		n = len(cmds)
	}
	results := make([]gate.CommandResult, len(cmds))
	voids := make([]error, len(cmds))
	slots := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for i, cc := range cmds {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			results[i], voids[i] = c.command(ctx, cc.ch.Run, cc.ch.Argv, cc.ch.Timeout.Duration)
		})
	}
	wg.Wait()
	for _, v := range voids {
		if v != nil {
			return results, v
		}
	}
	return results, nil
}
