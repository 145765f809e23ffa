package ledger

import (
	"fmt"
	"strings"
)

// guardLine renders the events of the runner's guards: paths put back
// after a wave or a measurement, and measurements made void.
func (e Event) guardLine() (string, bool) {
	switch e.Type {
	case ProtectedReverted:
		return fmt.Sprintf("protected path %s reverted (%s%s)", e.Path, e.Reason, by(e.Nodes)), true
	case GitReverted:
		return fmt.Sprintf("git path %s reverted (%s%s)", e.Path, e.Reason, by(e.Nodes)), true
	case RootReverted:
		return fmt.Sprintf("loop root path %s reverted: %s outside the worktrees of isolated nodes%s", e.Path, e.Reason, by(e.Nodes)), true
	case UncarriedRemoved:
		return fmt.Sprintf("ignored path %s removed before measuring: %s since the session started; no commit carries it", e.Path, e.Reason), true
	case MeasurementVoid:
		return fmt.Sprintf("measurement of iteration %d void: %s", e.Iteration, e.Reason), true
	}
	return "", false
}

// by names the nodes that may have made a change, if any.
func by(nodes []string) string {
	if len(nodes) == 0 {
		return ""
	}
	return "; changed by " + strings.Join(nodes, " or ")
}
