package action

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestAuthorizeOpensNoFileOfTheWorkspace: the authorize job reads the
// event and the API only. Every directory of the hostile workspace is
// watched with inotify while the job runs: nothing in it is opened — not
// its loop config, its package.json or its .git — whatever the event. The
// run mode, as a control, opens the workspace's .git/config (it looks for
// persisted credentials), which the watch sees; so does a read after the
// job. A workspace that does not exist is no matter either.
func TestAuthorizeOpensNoFileOfTheWorkspace(t *testing.T) {
	// Not parallel: inotify sees every process's opens of the workspace,
	// and this test alone touches it.
	w := newAuthorizeWorld(t)
	_, comment := w.comment(7, "writer", "", "/loop run")
	_, refused := w.comment(7, "stranger", "", "/loop run")
	for _, tc := range []struct {
		name   string
		mode   string
		event  string
		ev     map[string]any
		opened bool
	}{
		{"a writer's command", "authorize", "issue_comment", comment, false},
		{"a stranger's command", "authorize", "issue_comment", refused, false},
		{"a fork's pull request", "authorize", "pull_request", azPullEvent("opened", 8, azFork, "mallory/demo"), false},
		{"schedule", "authorize", "schedule", map[string]any{}, false},
		{"the run mode", "run", "issue_comment", refused, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			watch := watchTree(t, w.ws)
			res := w.run(tc.event, tc.ev, map[string]string{"INPUT_MODE": tc.mode})
			opened := watch.opened()
			if tc.mode == "authorize" && res.code != exitOK {
				t.Fatalf("exit %d\n%s", res.code, res.log)
			}
			if (len(opened) > 0) != tc.opened {
				t.Errorf("opened in the workspace: %q; want some: %t\n%s", opened, tc.opened, res.log)
			}
			if _, err := os.ReadFile(filepath.Join(w.ws, "package.json")); err != nil {
				t.Fatal(err)
			}
			if got := watch.opened(); len(got) == 0 {
				t.Error("the watch does not see a read of package.json: it could not have seen the job's")
			}
			if tc.mode == "run" {
				os.Remove(filepath.Join(w.home, ".gitconfig")) // the run mode trusts its workspace there
			}
			w.untouched()
		})
	}
	t.Run("no workspace at all", func(t *testing.T) {
		if err := os.RemoveAll(w.ws); err != nil {
			t.Fatal(err)
		}
		res := w.run("issue_comment", comment, nil)
		if res.code != exitOK || res.outputs["proceed"] != "true" || res.outputs["head-sha"] != azHead {
			t.Errorf("exit %d, outputs %v\n%s", res.code, res.outputs, res.log)
		}
		if _, err := os.Lstat(w.ws); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the workspace was created: %v", err)
		}
	})
}

// treeWatch is an inotify watch on every directory of a tree.
type treeWatch struct {
	t    *testing.T
	fd   int
	dirs map[int]string // by watch descriptor
}

func watchTree(t *testing.T, root string) *treeWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	tw := &treeWatch{t: t, fd: fd, dirs: map[int]string{}}
	t.Cleanup(func() { unix.Close(fd) })
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_ACCESS)
		tw.dirs[wd] = p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.opened() // the walk's own
	return tw
}

// opened drains the events seen since the last call: the paths opened or
// read (a directory's own path when it was listed).
func (tw *treeWatch) opened() []string {
	var out []string
	buf := make([]byte, 64*1024)
	for {
		n, err := unix.Read(tw.fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			tw.t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			out = append(out, filepath.Join(tw.dirs[int(ev.Wd)], string(trimNUL(name))))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
