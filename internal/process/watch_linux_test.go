package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGroupSignalledOnlyBeforeReap: every signal Run sends to a group —
// the termination's SIGTERM and SIGKILL, and the kill of what the leader
// left behind — goes out while the leader is still unreaped, so that its
// pid, the group's id, cannot belong to another process yet. Not
// parallel: it watches every group signal the package sends.
func TestGroupSignalledOnlyBeforeReap(t *testing.T) {
	var mu sync.Mutex
	var late []string
	groupSignalled = func(pgid int, sig syscall.Signal) {
		if s, ok := readStat(pgid); !ok || s.pgrp != pgid {
			mu.Lock()
			late = append(late, sig.String())
			mu.Unlock()
		}
	}
	defer func() { groupSignalled = nil }()
	specs := map[string]Spec{
		"leftover":  {Argv: ShellArgv("sleep 30 & echo $$ $!")},
		"timeout":   {Argv: ShellArgv(`sleep 30 & echo $$ $!; wait`), Timeout: 50 * time.Millisecond},
		"term kept": {Argv: ShellArgv(`(trap "" TERM; sleep 30) & echo $$ $!; wait`), Timeout: 50 * time.Millisecond, KillGrace: 100 * time.Millisecond},
	}
	for name, spec := range specs {
		res := runTimed(t, spec)
		waitAllGone(t, res.Stdout)
		mu.Lock()
		if len(late) > 0 {
			t.Errorf("%s: %v sent to a group whose leader was already reaped", name, late)
		}
		late = nil
		mu.Unlock()
	}
}

// TestGraceOutlivesTheLeader: when a termination's SIGTERM ends the leader
// at once, the rest of its group still gets the grace to finish: a member
// that cleans up for a while on SIGTERM is not killed when the leader
// exits, and Run returns once it is done, well before the grace is over.
// Not parallel: it would be slow beside other tests' children, and a
// member reparented to this process is spared by their sweeps only while
// its leader's Run is going (TestGraceSurvivesOtherRunsSweeps).
func TestGraceOutlivesTheLeader(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "cleaned")
	member := `trap 'sleep 0.3; echo cleaned > ` + marker + `; exit 0' TERM; echo ready; while :; do sleep 0.05; done`
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res := runTimedCtx(t, ctx, Spec{
		Argv:      ShellArgv(`trap 'exit 5' TERM; sh -c '` + strings.ReplaceAll(member, "'", `'\''`) + `' & wait`),
		KillGrace: time.Minute,
		StdoutTee: cancelOnOutput{cancel},
	})
	if !res.Canceled || res.ExitCode != 5 {
		t.Errorf("Canceled=%v ExitCode=%d, want true 5", res.Canceled, res.ExitCode)
	}
	got, err := os.ReadFile(marker)
	if err != nil {
		t.Fatalf("the member was killed before it had cleaned up: %v", err)
	}
	if diff := cmp.Diff("cleaned\n", string(got)); diff != "" {
		t.Errorf("marker (-want +got):\n%s", diff)
	}
}

// TestGraceSurvivesOtherRunsSweeps: a member of a group whose leader has
// exited is handed to this process; the sweeps of other Runs meanwhile
// must leave it its grace, as its own Run does (TestGraceOutlivesTheLeader
// with other children ending all along). Not parallel, for the same reason.
func TestGraceSurvivesOtherRunsSweeps(t *testing.T) {
	stop := make(chan struct{})
	var others sync.WaitGroup
	others.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			Run(t.Context(), Spec{Argv: []string{"true"}})
		}
	})
	defer others.Wait()
	defer close(stop)
	TestGraceOutlivesTheLeader(t)
}
