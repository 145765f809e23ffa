package state_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// cacheObjects returns the loose objects and packs of a local state repository.
func cacheObjects(t *testing.T, cache string) (loose, packs int) {
	t.Helper()
	for line := range strings.Lines(gitfake.Git(t, "", "--git-dir="+cache, "count-objects", "-v")) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, _ := strconv.Atoi(v)
		switch k {
		case "count":
			loose = n
		case "packs":
			packs = n
		}
	}
	return loose, packs
}

// TestBranchCacheStaysBounded saves a long run with small cache limits:
// the local state repository stays within them (plus one save's objects)
// instead of growing by every checkpoint, it is left alone while another
// Branch has it open, and a collected cache still loads, reads and saves.
func TestBranchCacheStaysBounded(t *testing.T) {
	t.Parallel()
	const limit, perSave = 60, 30
	bare := newBare(t, t.TempDir(), "state.git")
	root, cache := t.TempDir(), t.TempDir()
	b := openBranch(t, bare, root, cache)
	state.SetCacheLimits(b, limit, 3)
	cp := newCheckpoint("long/run")
	var ledger, log string
	save := func(n int) {
		t.Helper()
		writeFile(t, root+"/src/file.txt", fmt.Sprintf("iteration %d\n", n))
		cp.Iteration = n
		c := commitFor(n % 7)
		if err := b.Save(t.Context(), cp, c); err != nil {
			t.Fatal(err)
		}
		ledger, log = ledger+string(c.Ledger), log+string(c.Log)
	}
	for n := 1; n <= 40; n++ {
		save(n)
		if loose, packs := cacheObjects(t, cache); loose > limit+perSave || packs > 4 {
			t.Fatalf("after save %d the cache holds %d loose objects and %d packs, want at most %d and 4", n, loose, packs, limit+perSave)
		}
	}

	// Another Branch has the cache open: nothing is collected under it.
	other := openBranch(t, bare, t.TempDir(), cache)
	if _, err := other.Load(t.Context(), "long/run"); err != nil {
		t.Fatal(err)
	}
	for n := 41; n <= 50; n++ {
		save(n)
	}
	if loose, packs := cacheObjects(t, cache); loose <= limit+perSave && packs <= 4 {
		t.Errorf("with another Branch open the cache holds %d loose objects and %d packs: collected under it", loose, packs)
	}
	if _, err := other.Load(t.Context(), "long/run"); err != nil {
		t.Fatal(err)
	}
	checkCommitted(t, other, "long/run", ledger, log)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	// A collection refused is tried again once the limit's worth of objects more came.
	for n := 51; n <= 51+limit/10; n++ {
		save(n)
	}
	if loose, packs := cacheObjects(t, cache); loose > limit+perSave || packs > 4 {
		t.Errorf("after the other Branch closed the cache holds %d loose objects and %d packs, want at most %d and 4", loose, packs, limit+perSave)
	}

	// A new process on the collected cache.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	fresh := openBranch(t, bare, t.TempDir(), cache)
	got, err := fresh.Load(t.Context(), "long/run")
	if err != nil || got.Iteration != cp.Iteration {
		t.Fatalf("Load on the collected cache = %+v, %v; want iteration %d", got, err, cp.Iteration)
	}
	checkCommitted(t, fresh, "long/run", ledger, log)
	if n, err := fresh.Restore(t.Context(), "long/run"); err != nil || n == 0 {
		t.Errorf("Restore on the collected cache = %d, %v; want the workspace", n, err)
	}
	got.Iteration++
	if err := fresh.Save(t.Context(), got, commitFor(1)); err != nil {
		t.Fatalf("Save on the collected cache: %v", err)
	}
	gitfake.Fsck(t, bare)
}
