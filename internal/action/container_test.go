//go:build container

package action

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestContainerPullRequestReviewApprove runs the scenario with the action
// in the real image (.ci/container builds it and sets LOOP_ACTION_IMAGE),
// started the way the Actions runner starts a Docker action.
func TestContainerPullRequestReviewApprove(t *testing.T) {
	if os.Getenv("LOOP_ACTION_IMAGE") == "" {
		t.Skip("LOOP_ACTION_IMAGE is unset: run .ci/container")
	}
	scenario(t, newWorld(t), inContainer)
}

// inContainer runs the image as the runner would: the workspace, the
// workflow directory (event.json), the file commands and HOME mounted at
// their /github paths, the job's variables passed with -e, and the host's
// network, so the fakes on 127.0.0.1 are reached.
func inContainer(t *testing.T, w *world, d jobDirs, event, eventFile string, inputs map[string]string) (int, string) {
	t.Helper()
	env := w.env(event, "/github/workflow/event.json", "/github/workspace", "/github/file_commands", "/github/home", inputs)
	args := []string{"--cgroup-manager=cgroupfs", "run", "--rm", "--runtime", "runc", "--ulimit", "host", "--network", "host",
		"-v", d.workspace + ":/github/workspace", "-v", d.workflow + ":/github/workflow",
		"-v", d.commands + ":/github/file_commands", "-v", d.home + ":/github/home", "-w", "/github/workspace"}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, os.Getenv("LOOP_ACTION_IMAGE"))
	podman := strings.Fields(os.Getenv("LOOP_ACTION_PODMAN"))
	if len(podman) == 0 {
		podman = []string{"podman"}
	}
	cmd := exec.Command(podman[0], append(podman[1:], args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("podman: %v\n%s", err, out)
	return -1, ""
}

// TestContainerDeliversOntoThePullRequest runs the delivery scenario with
// the action in the real image: it pushes the certified fix onto the pull
// request's branch of the smart-HTTP remote, and only that commit gets
// success.
func TestContainerDeliversOntoThePullRequest(t *testing.T) {
	if os.Getenv("LOOP_ACTION_IMAGE") == "" {
		t.Skip("LOOP_ACTION_IMAGE is unset: run .ci/container")
	}
	deliveryScenario(t, newWorldAgent(t, deliverLoop, fixer("")), inContainer)
}
