package gitfake_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// TestPushesRecordTheirRefs pushes two branches with git and checks that
// the server records the refs the push updates and the token it came with.
func TestPushesRecordTheirRefs(t *testing.T) {
	t.Parallel()
	s := gitfake.Start(t, gitfake.Options{Tokens: []string{"tok-123456"}})
	remote, bare := s.Repo(t, "o/r.git")
	u, err := url.Parse(remote)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("x-access-token", "tok-123456")
	work := t.TempDir()
	gitfake.Git(t, work, "init", "-q", "-b", "main")
	gitfake.Git(t, work, "commit", "-q", "--allow-empty", "-m", "one")
	gitfake.Git(t, work, "push", "-q", u.String(), "main", "main:refs/heads/feature")
	pushes := s.Pushes()
	if len(pushes) != 1 {
		t.Fatalf("pushes %+v, want one", pushes)
	}
	got := slices.Sorted(slices.Values(pushes[0].Refs))
	if want := []string{"refs/heads/feature", "refs/heads/main"}; !slices.Equal(got, want) || pushes[0].Token != "tok-123456" {
		t.Errorf("push %+v, want refs %v with the token", pushes[0], want)
	}
	gitfake.Fsck(t, bare)
}
