package runner

import (
	"context"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/gate/evidence"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// CheckEnv is the environment checks and the metrics command run with,
// inside a run or outside one: env without the job's file commands, and
// with git's fsmonitor and hooks turned off (GitEnv).
func CheckEnv(env []string) []string { return GitEnv(WithoutFileCommands(env)) }

// Measure rules on the loop root as it is, outside any run: it collects the
// evidence with the checks' environment (CheckEnv), masks the providers'
// secrets in it, puts the job's file commands back (the checks ran the
// workspace's code) and lets the gate rule. It is what `loop-action gate`
// and the action's gate-only evaluation of a fork run; a run measures the
// same way in each iteration. The snapshot converts files with the git
// settings of k (ReadCheckout) from the root's HEAD, and holds no file
// larger than the config's run.max_file_size.
func Measure(ctx context.Context, cfg *loop.Config, root string, env []string, k workspace.Checkout) (gate.Evidence, []gate.Verdict, error) {
	files, err := GuardFileCommands(env)
	if err != nil {
		return gate.Evidence{}, nil, err
	}
	k.MaxFileSize = cfg.Run.MaxFileSize.Bytes
	ev := evidence.Masked(checkCollector(cfg, root, env, workspace.NewHasherWith(root, k)).Collect(ctx, cfg), Masker(cfg, env))
	if err := files.Restore(); err != nil {
		return gate.Evidence{}, nil, err
	}
	verdicts := gate.Evaluate(cfg, ev)
	if ev.Void != "" {
		verdicts = voided(verdicts, ev.Void)
	}
	return ev, verdicts, nil
}

// checkCollector collects the evidence in root as every measurement does,
// in a run or outside one: its checks run with CheckEnv of env less the
// openai providers' keys (WithoutAPIKeys), and h takes the snapshot.
func checkCollector(cfg *loop.Config, root string, env []string, h *workspace.Hasher) *evidence.Collector {
	return &evidence.Collector{Root: root, Env: CheckEnv(WithoutAPIKeys(cfg, env)), Hasher: h}
}

// GateOnly is the status of an outcome measured outside any run
// (GateOnlyOutcome): no agent ran, nothing was saved, and Success says
// whether the gate holds on the workspace as it is. No checkpoint has it.
const GateOnly state.Status = "gate-only"

// GateOnlyOutcome is the outcome of a gate-only evaluation of verdicts
// (from Measure): the action's on a fork's pull request. It belongs to no
// run, so it has no run id, no iterations and no spend.
func GateOnlyOutcome(cfg *loop.Config, verdicts []gate.Verdict) Outcome {
	return Outcome{Status: GateOnly, Success: gate.OverallSuccess(cfg, verdicts), Verdicts: verdicts}
}
