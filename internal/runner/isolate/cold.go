package isolate

import (
	"context"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// seeded is one path copied into a new worktree ("" if it vanished).
type seeded struct {
	path string
	workspace.Copied
}

// copyAll copies files (sorted, as workspace lists them) from src into the
// empty dst, a directory at a time. A file larger than limit is an error,
// and is not copied.
func copyAll(ctx context.Context, src, dst *os.Root, files []string, limit int64) ([]seeded, error) {
	out := make([]seeded, len(files))
	for _, g := range byDir(files) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if g.dir != "" {
			if err := dst.MkdirAll(g.dir, 0o755); err != nil {
				return nil, err
			}
		}
		if err := copyDir(ctx, src, dst, g, out, limit); err != nil {
			return nil, err
		}
	}
	return out, nil
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
