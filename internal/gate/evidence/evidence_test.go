package evidence

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLook(t *testing.T) {
	t.Parallel()
	outer := t.TempDir()
	root := filepath.Join(outer, "root")
	write(t, filepath.Join(root, "docs/guide.md"), "# Guide\n")
	write(t, filepath.Join(root, "docs/empty.md"), "")
	write(t, filepath.Join(outer, "secret"), "s3cret\n")
	for link, target := range map[string]string{
		"up":            "..",
		"abs":           outer,
		"inside":        "docs",
		"secret-link":   "../secret",
		"broken-escape": "../../nowhere/at/all",
		"broken-inside": "docs/missing.md",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path string
		read bool
		want gate.FileResult
	}{
		{"docs/guide.md", true, gate.FileResult{Exists: true, Size: 8, Content: []byte("# Guide\n")}},
		{"docs/guide.md", false, gate.FileResult{Exists: true, Size: 8}},
		{"docs/empty.md", false, gate.FileResult{Exists: true}},
		{"docs", false, gate.FileResult{Exists: true, Dir: true, Entries: 2}},
		{"docs/none.md", false, gate.FileResult{}},
		{"inside/guide.md", true, gate.FileResult{Exists: true, Size: 8, Content: []byte("# Guide\n")}},
		{"up/secret", true, gate.FileResult{Escapes: ".."}},
		{"abs/secret", true, gate.FileResult{Escapes: outer}},
		{"secret-link", true, gate.FileResult{Escapes: "../secret"}},
		{"broken-escape", false, gate.FileResult{Escapes: "../../nowhere/at/all"}},
		{"broken-inside", false, gate.FileResult{}},
		{"../secret", true, gate.FileResult{Escapes: "../secret"}},
		{"/etc/passwd", true, gate.FileResult{Escapes: "/etc/passwd"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got := Look(root, tt.path, tt.read)
			tt.want.Path, tt.want.ReadLimit = tt.path, ReadLimit
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Look(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestLookTooLarge(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(ReadLimit + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := Look(root, "big.log", true)
	if !got.TooLarge || got.Content != nil || got.Size != ReadLimit+1 {
		t.Errorf("Look of a file over the limit = %+v", got)
	}
}

func TestCollect(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "report.md"), "# Report\n")
	write(t, filepath.Join(root, "metrics.sh"), `echo '{"coverage": 81}'`)
	cfg, err := loop.Parse("loop.toml", []byte(`
name = "c"
[stop]
max_tokens = 1
[metrics]
command = "sh metrics.sh"
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "echo out; echo err >&2; exit 4"
  [[goal.check]]
  type = "command"
  argv = ["sleep", "600"]
  timeout = "200ms"
  [[goal.check]]
  type = "regex"
  path = "report.md"
  pattern = "Report"
  [[goal.check]]
  type = "metric"
  name = "coverage"
  op = ">"
  value = 80
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ev := (&Collector{Root: root}).Collect(context.Background(), cfg)
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("Collect took %v: the timed-out check was not killed", took)
	}
	first := ev.Commands[gate.CheckID{Goal: "g", Index: 0}]
	if first.ExitCode != 4 || first.Command != "echo out; echo err >&2; exit 4" || !strings.Contains(first.Tail, "out\n") || !strings.Contains(first.Tail, "err\n") {
		t.Errorf("first check = %+v", first)
	}
	slow := ev.Commands[gate.CheckID{Goal: "g", Index: 1}]
	if !slow.TimedOut || slow.Command != "sleep 600" {
		t.Errorf("slow check = %+v, want timed out", slow)
	}
	if r := ev.Files[gate.CheckID{Goal: "g", Index: 2}]; string(r.Content) != "# Report\n" {
		t.Errorf("regex file = %+v", r)
	}
	if ev.Metrics == nil || strings.TrimSpace(ev.Metrics.Command.Stdout) != `{"coverage": 81}` {
		t.Errorf("metrics = %+v", ev.Metrics)
	}
	if len(ev.Snapshot) != 40 {
		t.Errorf("snapshot = %q, want a 40-hex tree id", ev.Snapshot)
	}
	verdicts := gate.Evaluate(cfg, ev)
	var statuses []gate.Status
	for _, c := range verdicts[0].Checks {
		statuses = append(statuses, c.Status)
	}
	if diff := cmp.Diff([]gate.Status{gate.Fail, gate.Fail, gate.Pass, gate.Pass}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestCollectStoppedByContext(t *testing.T) {
	t.Parallel()
	cfg, err := loop.Parse("loop.toml", []byte(`
name = "c"
[stop]
max_tokens = 1
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  argv = ["sleep", "600"]
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(errBudget) })
	ev := (&Collector{Root: t.TempDir()}).Collect(ctx, cfg)
	r := ev.Commands[gate.CheckID{Goal: "g"}]
	if r.Stopped != "wall-clock budget spent" || r.TimedOut {
		t.Errorf("stopped check = %+v, want Stopped by the cause", r)
	}
}

var errBudget = errorString("wall-clock budget spent")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestMasked(t *testing.T) {
	t.Parallel()
	mask := strings.NewReplacer("s3cret", "***").Replace
	id := gate.CheckID{Goal: "g"}
	ev := gate.Evidence{
		Commands: map[gate.CheckID]gate.CommandResult{id: {Command: "echo s3cret", Tail: "token s3cret\n", Stdout: "s3cret"}},
		Metrics:  &gate.MetricsResult{Command: gate.CommandResult{Tail: "s3cret"}},
		Judges:   map[string]gate.JudgeResult{"j": {Answers: []string{`{"verdict":"pass","evidence":"s3cret"}`}, Err: "s3cret"}},
		Files:    map[gate.CheckID]gate.FileResult{id: {Path: "a.md", Content: []byte("# s3cret\n"), Escapes: "/s3cret", Err: "open s3cret"}},
	}
	got := Masked(ev, mask)
	if strings.Contains(fmt.Sprintf("%+v %+v %s", got, *got.Metrics, got.Files[id].Content), "s3cret") {
		t.Errorf("masked evidence still carries the secret: %+v", got)
	}
	if ev.Commands[id].Tail != "token s3cret\n" || string(ev.Files[id].Content) != "# s3cret\n" {
		t.Error("Masked changed the evidence it was given")
	}
}

// TestBesideRunsOnceAfterTheChecks: Beside is called once, after every
// check and the metrics command have ended (it sees what the last one
// wrote), and Collect returns only once it has returned; a void
// measurement, whose snapshot is not taken, still calls it.
func TestBesideRunsOnceAfterTheChecks(t *testing.T) {
	t.Parallel()
	cfg, err := loop.Parse("loop.toml", []byte(`name = "b"
[stop]
max_tokens = 1
[run]
check_concurrency = 0
[metrics]
command = "touch metrics-ran; echo {}"
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "sleep 0.05; touch check-ran"
  [[goal.check]]
  type = "test"
  run = "true"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, swept := range []error{nil, fmt.Errorf("1 process survived")} {
		root := t.TempDir()
		var calls int
		var saw []string
		c := &Collector{Root: root, Beside: func() {
			calls++
			for _, f := range []string{"check-ran", "metrics-ran"} {
				if _, err := os.Stat(filepath.Join(root, f)); err == nil {
					saw = append(saw, f)
				}
			}
			time.Sleep(20 * time.Millisecond)
			saw = append(saw, "returned")
		}}
		ev := c.CollectSwept(t.Context(), cfg, swept)
		want := []string{"check-ran", "metrics-ran", "returned"}
		if swept != nil {
			want = []string{"returned"} // nothing ran
		}
		if diff := cmp.Diff(want, saw); calls != 1 || diff != "" {
			t.Errorf("swept %v: %d calls; what Beside saw (-want +got):\n%s", swept, calls, diff)
		}
		if (ev.Snapshot == "") != (swept != nil) {
			t.Errorf("swept %v: snapshot %q", swept, ev.Snapshot)
		}
	}
}

// TestLookSwappedSymlink: an agent's process swings a symlink between a
// file inside the root and a secret outside it while the gate looks at
// the link. However the swaps fall between Look's steps, the secret is
// never read: every step goes through an os.Root. (A check of the path
// with filepath.EvalSymlinks followed by a read of the path reads the
// secret whenever the swap lands between the two.) Bounded by a count of
// looks, not by time.
func TestLookSwappedSymlink(t *testing.T) {
	t.Parallel()
	outer := t.TempDir()
	root := filepath.Join(outer, "root")
	write(t, filepath.Join(root, "docs/guide.md"), "# Guide\n")
	write(t, filepath.Join(outer, "secret"), "s3cret\n")
	swing := filepath.Join(root, "swing")
	if err := os.Symlink("docs/guide.md", swing); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { // the agent: renames a fresh link over swing, in and out, until told to stop
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			target := []string{"docs/guide.md", "../secret"}[i%2]
			tmp := filepath.Join(root, ".swing.tmp")
			if err := os.Symlink(target, tmp); err != nil {
				done <- err
				return
			}
			if err := os.Rename(tmp, swing); err != nil {
				done <- err
				return
			}
		}
	}()
	seen := map[string]int{}
	for range 3000 {
		got := Look(root, "swing", true)
		if strings.Contains(string(got.Content), "s3cret") {
			t.Fatalf("Look read the secret outside the root through the swapped link: %+v", got)
		}
		switch {
		case got.Escapes != "":
			seen["escapes"]++
		case got.Content != nil:
			seen["read"]++
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("looks: %v", seen)
}
