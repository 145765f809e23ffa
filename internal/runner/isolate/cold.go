package isolate

import (
	"cmp"
	"context"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/loop-action/loop-action/internal/workspace"
)

// seeded is one path copied into a new worktree ("" if it vanished).
type seeded struct {
	path string
	workspace.Copied
}

// copyAll copies files (sorted, as workspace lists them) from src into the
// empty dst, a directory at a time on several goroutines: the copies are
// small and each costs a few system calls, so they overlap well (one at a
// time, a cold worktree cost as much as git worktree add, against a third
// with them: testdata/bench.sh). A file larger than limit is an error,
// and is not copied.
func copyAll(ctx context.Context, src, dst *os.Root, files []string, limit int64) ([]seeded, error) {
	groups := byDir(files)
	for _, g := range groups {
		if g.dir != "" {
			if err := dst.MkdirAll(g.dir, 0o755); err != nil {
				return nil, err
			}
		}
	}
	out := make([]seeded, len(files))
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range min(len(groups), 4*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(groups) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := copyDir(ctx, src, dst, groups[i], out, limit); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return out, cmp.Or(first, ctx.Err())
}

// dirGroup is the files of one directory: files[from:to] of the listing.
type dirGroup struct {
	dir   string
	names []string
	from  int
}

func byDir(files []string) []dirGroup {
	var groups []dirGroup
	for i, p := range files {
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		if len(groups) == 0 || groups[len(groups)-1].dir != dir {
			groups = append(groups, dirGroup{dir: dir, from: i})
		}
		g := &groups[len(groups)-1]
		g.names = append(g.names, name)
	}
	return groups
}

// copyDir copies the files of g, through roots opened on its directory.
func copyDir(ctx context.Context, src, dst *os.Root, g dirGroup, out []seeded, limit int64) error {
	s, d := src, dst
	if g.dir != "" {
		var err error
		if s, err = workspace.OpenDir(src, g.dir); err != nil {
			return err
		}
		defer s.Close()
		if d, err = workspace.OpenDir(dst, g.dir); err != nil {
			return err
		}
		defer d.Close()
	}
	for i, name := range g.names {
		fi, err := s.Lstat(name)
		if missing(err) {
			continue // removed since it was listed
		}
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Size() > limit {
			return workspace.CheckFileSize(join(g.dir, name), fi.Size(), limit)
		}
		c, err := workspace.CopyNew(ctx, s, d, name, fi)
		if missing(err) {
			continue
		}
		if err != nil {
			return err
		}
		out[g.from+i] = seeded{path: join(g.dir, name), Copied: c}
	}
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
