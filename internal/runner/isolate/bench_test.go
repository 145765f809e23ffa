package isolate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// buildRepo writes files small files in 100 directories under a new
// temporary root, with mtimes an hour old as in a checked-out repository,
// and commits them when commit is set.
func buildRepo(b *testing.B, files int, commit bool) string {
	b.Helper()
	root := b.TempDir()
	old := time.Now().Add(-time.Hour)
	writeFile(&testing.T{}, root, ".gitignore", "*.log\nbuild/\n")
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("dir%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range files / 100 {
			p := filepath.Join(dir, fmt.Sprintf("file%03d.go", f))
			content := fmt.Sprintf("package dir%02d\n\n// File %d of a generated tree.\nconst N%d = %d\n", d, f, f, d*100+f)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				b.Fatal(err)
			}
		}
	}
	if commit {
		git(b, root, "init", "-q")
		// No gc in the background after the commit: it would pack and
		// remove loose objects while the benchmark measures.
		git(b, root, "config", "gc.auto", "0")
		git(b, root, "add", "-A")
		git(b, root, "commit", "-qm", "init")
	}
	return root
}

// calls makes the content changeFiles writes differ on every call.
var calls atomic.Int64

// changeFiles writes n files of dir (one per directory first), with
// content that differs on every call.
func changeFiles(b *testing.B, dir string, n int) []string {
	b.Helper()
	i := calls.Add(1)
	var rels []string
	for k := range n {
		rel := fmt.Sprintf("dir%02d/file%03d.go", k%100, k/100)
		overwrite(b, filepath.Join(dir, rel), fmt.Sprintf("// changed %d %d\n", i, k))
		rels = append(rels, rel)
	}
	return rels
}

// overwrite writes content over the file name without truncating it to
// zero first: on ext4, truncating to zero makes close start writing the
// data back (auto_da_alloc), and that I/O then slows whatever is measured
// next.
func overwrite(b *testing.B, name, content string) {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt([]byte(content), 0)
	}
	if err == nil {
		err = f.Truncate(int64(len(content)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSetupAndPublish10k compares a cold Prepare, a node changing 10
// files and a Publish ("isolate") with `git worktree add --detach` of the
// same commit and copying the 10 files back by hand ("git"). Each iteration
// runs both, in alternating order, so that both see the same machine; ns/op
// is their sum, and the metrics give each and the ratio isolate/git.
// testdata/bench.sh runs it and prints the ratio.
func BenchmarkSetupAndPublish10k(b *testing.B) {
	root := buildRepo(b, 10_000, true)
	var spent [2]time.Duration
	for i := 0; i < b.N; i++ {
		for k := range 2 {
			run := []func(*testing.B, string) time.Duration{setupIsolate, setupGit}[(i+k)%2]
			spent[(i+k)%2] += run(b, root)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(spent[0].Milliseconds())/n, "isolate-ms/op")
	b.ReportMetric(float64(spent[1].Milliseconds())/n, "git-ms/op")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "isolate/git")
}

// setupIsolate returns how long Prepare, changing 10 files and Publish took.
func setupIsolate(b *testing.B, root string) time.Duration {
	start := time.Now()
	m := New(root, Options{})
	dir, err := m.Prepare(context.Background(), "coder")
	if err != nil {
		b.Fatal(err)
	}
	changeFiles(b, dir, 10)
	rep, err := m.Publish(context.Background(), []string{"coder"})
	if err != nil || len(rep.Published) != 10 {
		b.Fatalf("Publish = %+v, %v; want 10 published", rep, err)
	}
	spent := time.Since(start)
	if err := m.Remove(); err != nil {
		b.Fatal(err)
	}
	return spent
}

// setupGit returns how long git worktree add, changing 10 files and copying
// them into the root took.
func setupGit(b *testing.B, root string) time.Duration {
	dir := filepath.Join(b.TempDir(), "wt")
	start := time.Now()
	git(b, root, "worktree", "add", "-q", "--detach", dir, "HEAD")
	for _, rel := range changeFiles(b, dir, 10) {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err == nil {
			err = os.WriteFile(filepath.Join(root, rel), data, 0o644)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	spent := time.Since(start)
	if out, err := exec.Command("git", "-C", root, "worktree", "remove", "--force", dir).CombinedOutput(); err != nil {
		b.Fatalf("git worktree remove: %v\n%s", err, out)
	}
	return spent
}

// BenchmarkPublish publishes 1, 10 and 100 changed files from a warm
// worktree of a 1k- and a 10k-file repository.
func BenchmarkPublish(b *testing.B) {
	for _, files := range []int{1_000, 10_000} {
		root := buildRepo(b, files, false)
		for _, changed := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("files=%d/changed=%d", files, changed), func(b *testing.B) {
				benchPublish(b, root, changed)
			})
		}
	}
}

func benchPublish(b *testing.B, root string, changed int) {
	m := New(root, Options{})
	defer m.Remove()
	dir, err := m.Prepare(context.Background(), "coder")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Publish(context.Background(), []string{"coder"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		changeFiles(b, dir, changed)
		b.StartTimer()
		rep, err := m.Publish(context.Background(), []string{"coder"})
		if err != nil || len(rep.Published) != changed {
			b.Fatalf("Publish = %d published, %v; want %d", len(rep.Published), err, changed)
		}
	}
}

// BenchmarkPrepareWarm10k re-seeds a warm worktree of a 10k-file
// repository, with no change in the root and with 10 changed root files:
// unlike Publish, a re-seed reads the root's whole listing. With repo, the
// root is a git repository, and every Prepare also writes the node's .git
// afresh (base commit and index).
func BenchmarkPrepareWarm10k(b *testing.B) {
	for _, repo := range []bool{false, true} {
		root := buildRepo(b, 10_000, repo)
		for _, changed := range []int{0, 10} {
			b.Run(fmt.Sprintf("repo=%t/root-changed=%d", repo, changed), func(b *testing.B) {
				m := New(root, Options{})
				defer m.Remove()
				if _, err := m.Prepare(context.Background(), "coder"); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					changeFiles(b, root, changed)
					b.StartTimer()
					if _, err := m.Prepare(context.Background(), "coder"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
