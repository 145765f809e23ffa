package delivery

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// token is what the test server takes; it must never show.
const token = "ghs_deliverytoken0123456789abcdef"

// transport is a way to reach a bare repository: over file:// or over
// smart HTTP with the token.
type transport struct {
	name string
	// serve returns the URL to push to and the repository's path now.
	serve func(t *testing.T, bare string) (url, path string, srv *gitfake.Server)
}

var transports = []transport{
	{"file", func(t *testing.T, bare string) (string, string, *gitfake.Server) { return "file://" + bare, bare, nil }},
	{"http", func(t *testing.T, bare string) (string, string, *gitfake.Server) {
		srv := gitfake.Start(t, gitfake.Options{Tokens: []string{token}})
		url, path := srv.Host(t, bare, "origin.git")
		return url, path, srv
	}},
}

// world is a remote holding the project and a depth-1 clone of it whose
// calc.sh an agent fixed.
type world struct {
	url, bare, head, root string
	srv                   *gitfake.Server
	remote                Remote
}

func newWorld(t *testing.T, tr transport) *world {
	t.Helper()
	bare, head := origin(t, project, "tracked.log")
	w := &world{head: head}
	w.url, w.bare, w.srv = tr.serve(t, bare)
	w.remote = Remote{URL: w.url, Token: token}
	w.root = clone(t, "file://"+w.bare)
	write(t, w.root, files{"calc.sh": "echo $(($1 + $2))\n"})
	return w
}

// tip is where branch is in the remote, "" when it does not exist.
func (w *world) tip(t *testing.T, branch string) string {
	t.Helper()
	out := gitfake.Git(t, "", "--git-dir="+w.bare, "for-each-ref", "--format=%(objectname)", "refs/heads/"+branch)
	return strings.TrimSpace(out)
}

// someoneElse pushes a commit of their own onto main and returns it.
func (w *world) someoneElse(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "other")
	gitfake.Git(t, "", "clone", "-q", w.bare, dir)
	write(t, dir, files{"README.md": "# calc, by someone else\n"})
	gitfake.Git(t, dir, "commit", "-qam", "someone else")
	gitfake.Git(t, dir, "push", "-q", "origin", "main")
	return strings.TrimSpace(gitfake.Git(t, dir, "rev-parse", "HEAD"))
}

func (w *world) build(t *testing.T) *Delivery {
	t.Helper()
	d, err := Build(context.Background(), spec(w.root, w.head))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPush(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			t.Run("onto the head it started from", func(t *testing.T) {
				w := newWorld(t, tr)
				d := w.build(t)
				before := objectCount(t, w.bare)
				if err := d.Push(context.Background(), w.remote, "refs/heads/main", w.head); err != nil {
					t.Fatal(err)
				}
				if got := w.tip(t, "main"); got != d.SHA {
					t.Errorf("main is at %s, want the delivery %s", got, d.SHA)
				}
				// The commit, the root tree and calc.sh's blob: nothing the remote had.
				if got := objectCount(t, w.bare) - before; got != 3 {
					t.Errorf("the push added %d objects to the remote, want 3", got)
				}
				gitfake.Fsck(t, w.bare)
			})
			t.Run("a branch that moved is never overwritten", func(t *testing.T) {
				w := newWorld(t, tr)
				d := w.build(t)
				theirs := w.someoneElse(t)
				err := d.Push(context.Background(), w.remote, "refs/heads/main", w.head)
				if !errors.Is(err, ErrMoved) {
					t.Fatalf("Push: %v, want ErrMoved", err)
				}
				if got := w.tip(t, "main"); got != theirs {
					t.Errorf("main is at %s, want theirs %s", got, theirs)
				}
				gitfake.Fsck(t, w.bare)
			})
			t.Run("create-only on an existing branch", func(t *testing.T) {
				w := newWorld(t, tr)
				err := w.build(t).Push(context.Background(), w.remote, "refs/heads/main", "")
				if !errors.Is(err, ErrMoved) {
					t.Fatalf("Push: %v, want ErrMoved", err)
				}
				if got := w.tip(t, "main"); got != w.head {
					t.Errorf("main is at %s, want %s", got, w.head)
				}
			})
			t.Run("create a branch", func(t *testing.T) {
				w := newWorld(t, tr)
				d := w.build(t)
				if err := d.Push(context.Background(), w.remote, "refs/heads/loop/calc", ""); err != nil {
					t.Fatal(err)
				}
				if got, err := Tip(context.Background(), w.remote, "refs/heads/loop/calc"); err != nil || got != d.SHA {
					t.Errorf("Tip = %q, %v; want %s", got, err, d.SHA)
				}
				if got := w.tip(t, "main"); got != w.head {
					t.Errorf("main moved to %s", got)
				}
				gitfake.Fsck(t, w.bare)
			})
			t.Run("declined by a hook", func(t *testing.T) {
				w := newWorld(t, tr)
				hook := filepath.Join(w.bare, "hooks", "pre-receive")
				if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				err := w.build(t).Push(context.Background(), w.remote, "refs/heads/main", w.head)
				if err == nil || errors.Is(err, ErrMoved) || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("Push: %v, want a refusal that is not ErrMoved", err)
				}
				if got := w.tip(t, "main"); got != w.head {
					t.Errorf("main moved to %s", got)
				}
			})
			t.Run("a base the remote lacks", func(t *testing.T) {
				w := newWorld(t, tr)
				gitfake.Git(t, w.root, "commit", "-qam", "local only")
				local := strings.TrimSpace(gitfake.Git(t, w.root, "rev-parse", "HEAD"))
				write(t, w.root, files{"README.md": "changed on the local commit\n"})
				d, err := Build(context.Background(), spec(w.root, local))
				if err != nil {
					t.Fatal(err)
				}
				err = d.Push(context.Background(), w.remote, "refs/heads/loop/calc", "")
				if err == nil || errors.Is(err, ErrMoved) {
					t.Fatalf("Push: %v, want an error that is not ErrMoved", err)
				}
				if got := w.tip(t, "loop/calc"); got != "" {
					t.Errorf("loop/calc was created at %s", got)
				}
				gitfake.Fsck(t, w.bare)
			})
		})
	}
}

// TestPushMovedDuringExchange moves the branch between the push's
// advertisement and its update: the server's compare-and-swap refuses it.
func TestPushMovedDuringExchange(t *testing.T) {
	w := newWorld(t, transports[1])
	d := w.build(t)
	var (
		once   sync.Once
		moved  atomic.Value
		theirs string
	)
	move := func() { once.Do(func() { moved.Store(w.someoneElse(t)) }) }
	w.srv.OnPush(func(gitfake.Push) { move() })
	err := d.Push(context.Background(), w.remote, "refs/heads/main", w.head)
	if !errors.Is(err, ErrMoved) {
		t.Fatalf("Push: %v, want ErrMoved", err)
	}
	theirs, _ = moved.Load().(string)
	if theirs == "" {
		t.Fatal("the branch was not moved during the push")
	}
	if got := w.tip(t, "main"); got != theirs {
		t.Errorf("main is at %s, want theirs %s", got, theirs)
	}
	gitfake.Fsck(t, w.bare)
}

func TestPushKeepsTheTokenOut(t *testing.T) {
	w := newWorld(t, transports[1])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wrong := Remote{URL: w.url, Token: "ghs_wrongtoken0123456789"}
	err := w.build(t).Push(ctx, wrong, "refs/heads/main", w.head)
	if err == nil || !strings.Contains(err.Error(), "the token was refused") || strings.Contains(err.Error(), wrong.Token) {
		t.Errorf("Push with a wrong token: %v; want a refusal that does not hold it", err)
	}
	if _, err := Tip(ctx, wrong, "refs/heads/main"); err == nil || strings.Contains(err.Error(), wrong.Token) {
		t.Errorf("Tip with a wrong token: %v; want an error that does not hold it", err)
	}
	inURL := Remote{URL: strings.Replace(w.url, "://", "://x-access-token:"+wrong.Token+"@", 1)}
	if err := w.build(t).Push(ctx, inURL, "refs/heads/main", w.head); err == nil || strings.Contains(err.Error(), wrong.Token) {
		t.Errorf("Push with a password in the URL: %v; want an error that does not hold it", err)
	}

	write(t, w.root, files{"leak.txt": "GITHUB_TOKEN=" + token + "\n"})
	err = w.build(t).Push(ctx, w.remote, "refs/heads/main", w.head)
	if err == nil || !strings.Contains(err.Error(), "holds the push token") || strings.Contains(err.Error(), token) {
		t.Errorf("Push of a file holding the token: %v; want a refusal that does not hold it", err)
	}
	if got := w.tip(t, "main"); got != w.head {
		t.Errorf("main moved to %s", got)
	}
	for _, ref := range []string{"main", "refs/tags/v1", "HEAD", "refs/heads/", "refs/heads/a..b"} {
		if err := w.build(t).Push(ctx, w.remote, ref, w.head); err == nil || !strings.Contains(err.Error(), "is not a branch") {
			t.Errorf("Push to %q: %v, want a refusal", ref, err)
		}
	}
}
