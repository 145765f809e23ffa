package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// configAt reads the loop config the tree holds: name (relative to the
// loop root), or the first of loop.DefaultPaths when name is "". An
// absolute name is read from disk instead: a config outside the
// repository is the user's, not the commit's. It returns the name as
// diagnostics show it and the config's text.
func (r *Repo) configAt(ctx context.Context, tree, name string) (string, []byte, error) {
	if filepath.IsAbs(name) {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", nil, fmt.Errorf("read config %q: %w", name, err)
		}
		return name, b, nil
	}
	candidates := loop.DefaultPaths
	if name != "" {
		candidates = []string{filepath.ToSlash(filepath.Clean(name))}
	}
	out, err := r.git(ctx, append([]string{"--literal-pathspecs", "ls-tree", "-l", "-z", tree, "--"}, candidates...)...)
	if err != nil {
		return "", nil, fmt.Errorf("look for the loop config in tree %s: %w", phrase.Short(tree), err)
	}
	found := treeEntries(out)
	for _, c := range candidates {
		e, ok := found[c]
		if !ok {
			continue
		}
		if err := e.usable(c); err != nil {
			return "", nil, err
		}
		b, err := r.git(ctx, "cat-file", "blob", e.id)
		return c, []byte(b), err
	}
	return "", nil, &NoConfigError{Tree: tree, Looked: candidates}
}

// NoConfigError says that a tree holds no loop config.
type NoConfigError struct {
	Tree   string
	Looked []string
}

func (e *NoConfigError) Error() string {
	return fmt.Sprintf("tree %s holds no loop config: looked for %s", phrase.Short(e.Tree), strings.Join(e.Looked, " and "))
}

// treeEntry is one line of `git ls-tree -l`.
type treeEntry struct {
	mode, kind, id string
	size           int64
}

// usable says why the entry cannot be read as the config at path.
func (e treeEntry) usable(path string) error {
	switch {
	case e.kind != "blob" || (e.mode != "100644" && e.mode != "100755"):
		return fmt.Errorf("config %q is not a regular file in the commit (mode %s)", path, e.mode)
	case e.size > loop.MaxConfigSize:
		return fmt.Errorf("config %q is %d bytes; a loop config may be at most %d bytes (256 KiB)", path, e.size, loop.MaxConfigSize)
	}
	return nil
}

// treeEntries parses `git ls-tree -l -z` by path.
func treeEntries(out string) map[string]treeEntry {
	m := map[string]treeEntry{}
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			size = -1
		}
		m[path] = treeEntry{mode: f[0], kind: f[1], id: f[2], size: size}
	}
	return m
}

// parseConfig parses the config and keeps only the goals [hook] gates.
func parseConfig(name string, src []byte) (*loop.Config, error) {
	cfg, err := loop.Parse(name, src)
	if err != nil {
		return nil, err
	}
	gated := *cfg
	gated.Goals = nil
	for _, g := range cfg.Goals {
		if cfg.Hook.Gated(g.Name) {
			gated.Goals = append(gated.Goals, g)
		}
	}
	if len(gated.Goals) == 0 {
		return nil, errors.New("[hook] goals leaves no goal to gate")
	}
	return &gated, nil
}
