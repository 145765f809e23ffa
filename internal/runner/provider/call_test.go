package provider

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// BenchmarkPrivateTemp is what each call's private TMPDIR costs: made and
// removed by 10 calls at once, as a wave of 10 agents does, in one
// directory (the run's scratch area).
func BenchmarkPrivateTemp(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				tmp, err := privateTemp(dir)
				if err != nil {
					b.Error(err)
					return
				}
				releaseTemp(tmp)
			})
		}
		wg.Wait()
	}
}

// BenchmarkPrivateTempOne is one call's private TMPDIR, made and removed.
func BenchmarkPrivateTempOne(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		tmp, err := privateTemp(dir)
		if err != nil {
			b.Fatal(err)
		}
		releaseTemp(tmp)
	}
}

// TestPrivateTempReuse: a call's TMPDIR is emptied after it and given to
// a later call, never to two calls at once; one that is no longer as
// privateTemp made it is removed, and nothing it points to is touched.
func TestPrivateTempReuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, errA := privateTemp(dir)
	b, errB := privateTemp(dir)
	if errA != nil || errB != nil || a == b {
		t.Fatalf("two calls at once got %q (%v) and %q (%v)", a, errA, b, errB)
	}
	if err := os.MkdirAll(filepath.Join(a, "sub", "deeper"), 0o700); err != nil {
		t.Fatal(err)
	}
	releaseTemp(a)
	if again, err := privateTemp(dir); err != nil || again != a {
		t.Errorf("the next call got %q (%v), want the emptied %q", again, err, a)
	} else if left, _ := os.ReadDir(a); len(left) != 0 {
		t.Errorf("the reused TMPDIR holds %v", left)
	}

	// A TMPDIR the agent replaced with a link, or opened up, is removed.
	outside := t.TempDir()
	kept := filepath.Join(outside, "kept")
	if err := os.WriteFile(kept, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, b); err != nil {
		t.Fatal(err)
	}
	releaseTemp(b)
	if err := os.Chmod(a, 0o777); err != nil {
		t.Fatal(err)
	}
	releaseTemp(a)
	for _, tmp := range []string{a, b} {
		if _, err := os.Lstat(tmp); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v), want it removed", tmp, err)
		}
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("what the link pointed to was touched: %v", err)
	}
	if c, err := privateTemp(dir); err != nil || c == a || c == b {
		t.Errorf("the next call got %q (%v), want a new directory", c, err)
	}
}
