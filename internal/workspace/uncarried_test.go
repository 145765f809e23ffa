package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func scanUncarried(t *testing.T, root string) Uncarried {
	t.Helper()
	u, err := ScanUncarried(t.Context(), root)
	if err != nil {
		t.Fatalf("ScanUncarried: %v", err)
	}
	return u
}

func uncarriedPaths(u Uncarried) []string {
	var out []string
	for p := range u {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func TestScanUncarried(t *testing.T) {
	t.Parallel()
	outside := build(t, file("secret/a.txt", "a"))
	tests := []struct {
		name string
		ops  []op
		want []string
	}{
		{"nothing ignored", []op{file("a.sh", "x"), file(".gitignore", "build/\n")}, nil},
		{"ignored file and directory",
			[]op{file(".gitignore", "*.log\nbuild/\n"), file("x.log", "l"), file("src/y.log", "l"), file("build/out/a.o", "o"), file("src/main.sh", "m")},
			[]string{"build", "build/out", "build/out/a.o", "src/y.log", "x.log"}},
		{"no re-include below an excluded directory",
			[]op{file(".gitignore", "build/\n!build/keep.sh\n"), file("build/keep.sh", "k")},
			[]string{"build", "build/keep.sh"}},
		{"nested .git, never the root's .git or .loop",
			[]op{file(".git/HEAD", "ref"), file(".loop/state/x", "s"), file("lib/.git/helper.sh", "h"), file("lib/a.sh", "a")},
			[]string{"lib/.git", "lib/.git/helper.sh"}},
		{"a link never followed; a fifo only where ignored",
			[]op{file(".gitignore", "dist\n*.p\n"), fifo("p"), fifo("q.p"), link("dist", outside), link("src/ok", "../a")},
			[]string{"dist", "q.p"}},
		{"info/exclude", []op{dir(".git"), file(".git/info/exclude", "cache/\n"), file("cache/c", "c")},
			[]string{"cache", "cache/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := build(t, tt.ops...)
			if diff := cmp.Diff(tt.want, uncarriedPaths(scanUncarried(t, root))); diff != "" {
				t.Errorf("ScanUncarried paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUncarriedChanged(t *testing.T) {
	t.Parallel()
	base := []op{file(".gitignore", "build/\nvendor/\n*.pyc\n"), file("calc.sh", "c"), file("vendor/lib.sh", "l"),
		file("vendor/other.sh", "o"), dir("build"), file("a.pyc", "p"), file("src/main.sh", "m")}
	write := func(rel, data string) op {
		return func(t *testing.T, root string) {
			t.Helper()
			p := filepath.Join(root, filepath.FromSlash(rel))
			mkdirAll(t, filepath.Dir(p))
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(rel string) op {
		return func(t *testing.T, root string) {
			t.Helper()
			if err := os.RemoveAll(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				t.Fatal(err)
			}
		}
	}
	chmod := func(rel string, mode os.FileMode) op {
		return func(t *testing.T, root string) {
			t.Helper()
			if err := os.Chmod(filepath.Join(root, filepath.FromSlash(rel)), mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	// aged puts rel's times an hour back, as a planter covering its tracks.
	aged := func(rel string) op {
		return func(t *testing.T, root string) {
			t.Helper()
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name string
		ops  []op
		want []UncarriedChange
	}{
		{"nothing", nil, nil},
		// A planter covering its tracks: old mtimes on what it planted and
		// on the directories it planted in, the same size for what it
		// rewrote. The kernel still sets ctime, and nothing is vouched for
		// by its stat alone: each ignored entry is compared.
		{"planted, aged, in an aged carried directory", []op{write("src/x.pyc", "p"), aged("src/x.pyc"), aged("src")},
			[]UncarriedChange{{"src/x.pyc", "created"}}},
		{"rewritten in place, same size and mtime", []op{func(t *testing.T, root string) {
			p := filepath.Join(root, "vendor", "lib.sh")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			write("vendor/lib.sh", "L")(t, root)
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil { // touch -r
				t.Fatal(err)
			}
		}}, []UncarriedChange{{"vendor/lib.sh", "modified"}}},
		{"only read", []op{func(t *testing.T, root string) {
			if _, err := os.ReadFile(filepath.Join(root, "vendor/lib.sh")); err != nil {
				t.Fatal(err)
			}
		}}, nil},
		{"tracked work is not uncarried", []op{write("calc.sh", "fixed"), write("src/new.sh", "n")}, nil},
		{"created in an ignored directory", []op{write("build/helper.sh", "h")},
			[]UncarriedChange{{"build/helper.sh", "created"}}},
		{"a new directory, listed once", []op{write("build/sub/a", "a"), write("build/sub/b", "b")},
			[]UncarriedChange{{"build/sub", "created"}}},
		{"modified, same size", []op{write("vendor/lib.sh", "L")},
			[]UncarriedChange{{"vendor/lib.sh", "modified"}}},
		{"mode changed", []op{chmod("vendor/lib.sh", 0o755)}, []UncarriedChange{{"vendor/lib.sh", "modified"}}},
		{"replaced by a link", []op{remove("vendor/lib.sh"), link("vendor/lib.sh", "/etc/passwd")},
			[]UncarriedChange{{"vendor/lib.sh", "replaced by a symbolic link"}}},
		{"replaced by a fifo", []op{remove("a.pyc"), fifo("a.pyc")},
			[]UncarriedChange{{"a.pyc", "replaced by a named pipe"}}},
		// "vendor/" matches directories only: a commit carries the link.
		{"a directory replaced by a link, carried now", []op{remove("vendor"), link("vendor", "/tmp")}, nil},
		{"directory permissions", []op{chmod("build", 0o700)}, []UncarriedChange{{"build", "mode changed"}}},
		{"deleted stays deleted", []op{remove("vendor/other.sh"), remove("a.pyc")}, nil},
		{"un-ignored: carried now", []op{write(".gitignore", "build/\n*.pyc\n")}, nil},
		{"newly ignored: not carried any more", []op{write(".gitignore", "build/\nvendor/\n*.pyc\ncalc.sh\n")},
			[]UncarriedChange{{"calc.sh", "created"}}},
		{"a nested .git", []op{write("lib/.git/helper.sh", "h")}, []UncarriedChange{{"lib/.git", "created"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := build(t, base...)
			before := scanUncarried(t, root)
			time.Sleep(10 * time.Millisecond) // a rewrite within the same clock tick keeps mtime; ctime and size differ anyway
			for _, o := range tt.ops {
				o(t, root)
			}
			if diff := cmp.Diff(tt.want, before.Changed(scanUncarried(t, root))); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
		})
	}
}

// A directory of the environment that cannot be listed is compared by its
// whole stat: what an agent adds to it through a name it knows shows.
func TestUncarriedSealed(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root lists every directory")
	}
	root := build(t, file(".gitignore", "build/\n"), dir("build"))
	sealed := filepath.Join(root, "build")
	if err := os.Chmod(sealed, 0o300); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(sealed, 0o755) })
	before := scanUncarried(t, root)
	if !before["build"].sealed {
		t.Fatalf("build was listed: %v", uncarriedPaths(before))
	}
	if got := before.Changed(scanUncarried(t, root)); len(got) != 0 {
		t.Errorf("unchanged sealed directory: Changed = %v", got)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(sealed, "helper.sh"), []byte("h"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []UncarriedChange{{"build", "modified"}}
	if diff := cmp.Diff(want, before.Changed(scanUncarried(t, root))); diff != "" {
		t.Errorf("Changed (-want +got):\n%s", diff)
	}
}

// BenchmarkScanUncarried20k lists a root whose ignored node_modules holds
// 20,000 files in 400 directories (beside 1,000 tracked files) and
// compares the listing with the one before, as the runner does before
// every measurement.
func BenchmarkScanUncarried20k(b *testing.B) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for d := range 400 {
		dir := filepath.Join(root, "node_modules", fmt.Sprintf("pkg%03d", d), "lib")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.js", f)), []byte("module.exports = 1\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for f := range 1000 {
		dir := filepath.Join(root, "src", fmt.Sprintf("d%02d", f/50))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.js", f)), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	base, err := ScanUncarried(b.Context(), root)
	if err != nil {
		b.Fatal(err)
	}
	if len(base) != 20000+800+1 {
		b.Fatalf("%d uncarried entries, want %d", len(base), 20801)
	}
	for b.Loop() {
		now, err := ScanUncarried(b.Context(), root)
		if err != nil {
			b.Fatal(err)
		}
		if c := base.Changed(now); len(c) != 0 {
			b.Fatalf("Changed = %v", c[:1])
		}
	}
}
