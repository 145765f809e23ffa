package ledger

import (
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
)

// Line renders the event for the run log: one line, no timestamp.
func (e Event) Line() string {
	switch e.Type {
	case RunStarted:
		return fmt.Sprintf("run started: up to %d iterations%s", e.MaxIterations, suffix(e.Reason))
	case RunResumed:
		return fmt.Sprintf("run resumed after iteration %d (was %s)", e.Iteration, e.Status)
	case BudgetRaised:
		return "budget raised: " + e.Reason
	case WorkspaceRestored:
		return fmt.Sprintf("workspace restored from the checkpoint's snapshot %s: %s", phrase.Short(e.Snapshot), e.Reason)
	case IterationStarted:
		return fmt.Sprintf("iteration %d/%d started", e.Iteration, e.MaxIterations)
	case Perturbed:
		return fmt.Sprintf("perturbed (%s, seed %d) after %d stale iterations: %s", e.Kind, e.Seed, e.Stale, e.Reason)
	case NodeDispatched:
		return fmt.Sprintf("node %s dispatched (%s on %s, %s tier)", e.Node, e.Role, e.Provider, e.Tier)
	case NodeSucceeded:
		return fmt.Sprintf("node %s succeeded in %s%s", e.Node, phrase.Duration(e.Duration), spend(e))
	case NodeFailed:
		return fmt.Sprintf("node %s failed after %s%s: %s", e.Node, phrase.Duration(e.Duration), spend(e), e.Reason)
	case NodeSkipped:
		return fmt.Sprintf("node %s skipped: %s", e.Node, e.Reason)
	case JudgeRetried:
		return fmt.Sprintf("judge %s re-dispatched: %s", e.Node, e.Reason)
	case ProtectedReverted:
		return fmt.Sprintf("protected path %s reverted (%s%s)", e.Path, e.Reason, by(e.Nodes))
	case GitReverted:
		return fmt.Sprintf("git path %s reverted (%s%s)", e.Path, e.Reason, by(e.Nodes))
	case RootReverted:
		return fmt.Sprintf("loop root path %s reverted: %s outside the worktrees of isolated nodes%s", e.Path, e.Reason, by(e.Nodes))
	case UncarriedRemoved:
		return fmt.Sprintf("ignored path %s removed before measuring: %s since the session started; no commit carries it", e.Path, e.Reason)
	case MeasurementVoid:
		return fmt.Sprintf("measurement of iteration %d void: %s", e.Iteration, e.Reason)
	case Published:
		return fmt.Sprintf("node %s published %s (%s)", e.Node, e.Path, e.Kind)
	case PublishConflict:
		return fmt.Sprintf("node %s's change to %s not published: %s wrote it first", e.Node, e.Path, e.Winner)
	case PublishRefused:
		return fmt.Sprintf("node %s's change to %s refused: %s", e.Node, e.Path, e.Reason)
	case DeletionKept:
		return fmt.Sprintf("node %s deleted %s in its worktree; deletions are not propagated", e.Node, e.Path)
	case GateEvaluated:
		return fmt.Sprintf("gate: %d of %d goals satisfied, %d of %d checks pass (%s)", e.Satisfied, e.Goals, e.Passed, e.Checks, e.Signature)
	case GoalSatisfied:
		return fmt.Sprintf("goal %s satisfied", e.Goal)
	case GoalRevoked:
		return fmt.Sprintf("goal %s REVOKED: %s", e.Goal, e.Reason)
	case ReviewRequested:
		return fmt.Sprintf("review requested for goal %s (snapshot %s): %s", e.Goal, phrase.Short(e.Snapshot), e.Reason)
	case ReviewDecided:
		return fmt.Sprintf("goal %s %s by %s for snapshot %s%s", e.Goal, e.Verdict, e.By, phrase.Short(e.Snapshot), suffix(e.Reason))
	case StageOpened:
		return fmt.Sprintf("stage %s opened", e.Stage)
	case StageClosed:
		return fmt.Sprintf("stage %s closed", e.Stage)
	case StopTriggered:
		return fmt.Sprintf("stop: %s: %s", e.Status, e.Reason)
	case RunFinished:
		return fmt.Sprintf("run finished: %s after %d iterations%s", e.Status, e.Iteration, spend(e))
	case ExportWritten:
		return "success export written to " + e.Path
	case CheckpointSaved:
		return fmt.Sprintf("checkpoint saved after iteration %d", e.Iteration)
	}
	return fmt.Sprintf("%s %s", e.Type, e.Reason)
}

func spend(e Event) string {
	if e.Tokens == 0 && e.CostUSD == 0 {
		return ""
	}
	est := ""
	if e.Estimated {
		est = " (estimated)"
	}
	return fmt.Sprintf(", %d tokens%s, $%.4f", e.Tokens, est, e.CostUSD)
}

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// by names the nodes that may have made a change, if any.
func by(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return "; changed by " + strings.Join(nodes, " or ")
}
