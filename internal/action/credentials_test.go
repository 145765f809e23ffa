//go:build unix

package action

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPersistedCredentials finds the token actions/checkout leaves for git
// (persist-credentials, its default) in both of its forms, and nothing in
// a clean config.
func TestPersistedCredentials(t *testing.T) {
	t.Parallel()
	const clean = "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://github.com/o/r\n"
	for _, tc := range []struct {
		name, config, included, want string
	}{
		{"clean", clean, "", ""},
		{"v4 extraheader", clean + "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n", "", ".git/config"},
		{"v6 includeIf", clean + "[includeIf \"gitdir:WS/.git\"]\n\tpath = INC\n", "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n", "a file that .git/config includes"},
		{"include without a token", clean + "[include]\n\tpath = INC\n", "[user]\n\tname = x\n", ""},
		{"a FIFO instead", "FIFO", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			inc := filepath.Join(t.TempDir(), "git-credentials.config")
			if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			cfgPath := filepath.Join(ws, ".git", "config")
			if tc.config == "FIFO" {
				if err := mkfifo(cfgPath); err != nil {
					t.Skip(err)
				}
			} else {
				writeFile(t, cfgPath, strings.NewReplacer("WS", ws, "INC", inc).Replace(tc.config))
			}
			if tc.included != "" {
				writeFile(t, inc, tc.included)
			}
			if got := persistedCredentials(ws); got != tc.want {
				t.Errorf("persistedCredentials = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWarnsOfPersistedCredentials: a job whose checkout persisted the
// token says so, with the setting that stops it.
func TestWarnsOfPersistedCredentials(t *testing.T) {
	w := newWorld(t)
	d := w.jobDirs("feature")
	f, err := os.OpenFile(filepath.Join(d.workspace, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic " + w.token + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	_, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), nil)
	if !strings.Contains(log, "::warning::actions/checkout left its token in .git/config") || !strings.Contains(log, "persist-credentials: false") {
		t.Errorf("no warning about the persisted token in:\n%s", log)
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
