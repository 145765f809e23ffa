package action

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
)

// worldGit is the Git of the world's jobs, which leave `deliver: none`:
// it reads a commit's tree from the checkout's repository with the git
// CLI, so the checkout check and the status rule work on real clones.
// Delivery itself is not driven here (deliver_test.go drives it in memory;
// the end-to-end tests with package delivery): building and pushing fail.
type worldGit struct{}

var errNotDelivering = errors.New("the world's jobs do not deliver: use deliver: none")

func (worldGit) CommitSnapshot(root, sha string) (string, error) {
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", sha+"^{tree}")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New("commit " + sha + ": object not found")
	}
	return strings.TrimSpace(string(out)), nil
}

func (worldGit) Build(context.Context, CommitSpec) (*Built, error) { return nil, errNotDelivering }

func (worldGit) Tip(context.Context, Remote, string) (string, error) { return "", errNotDelivering }
