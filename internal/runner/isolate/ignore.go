package isolate

import (
	"bytes"
	"errors"
	"os"
	"path"

	"github.com/loop-action/loop-action/internal/workspace"
)

// included returns which of paths (files or symbolic links of t's worktree)
// a snapshot would include under the ignore rules of the loop root and
// under those of the worktree, which may have new .gitignore files: a path
// either ignores is not published. The root's .git/info/exclude applies to
// both.
//
// workspace exports no ignore matcher, only [workspace.Hasher.Files], so
// this asks it about a shadow tree: an empty file for each path, beside
// copies of the .gitignore files of the directories above it. The shadow
// holds only what the question needs, so the cost follows len(paths), and
// the answer is workspace's by construction.
func (m *Manager) included(t *tree, paths []string) (map[string]bool, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	exclude, err := infoExclude(m.index.r)
	if err != nil {
		return nil, err
	}
	rootRules, err := rulesAbove(m.index.r, paths)
	if err != nil {
		return nil, err
	}
	treeRules, err := rulesAbove(t.r, paths)
	if err != nil {
		return nil, err
	}
	inRoot, err := shadowFiles(m.scratch(), rootRules, exclude, paths)
	inTree := inRoot
	if err == nil && !sameRules(rootRules, treeRules) {
		inTree, err = shadowFiles(m.scratch(), treeRules, exclude, paths)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(paths))
	for _, p := range paths {
		out[p] = inRoot[p] && inTree[p]
	}
	return out, nil
}

// rulesAbove returns the content of the .gitignore files of r in the
// directories above paths, by directory ("" for the top); nil for none.
func rulesAbove(r *os.Root, paths []string) (map[string][]byte, error) {
	rules := map[string][]byte{}
	for _, p := range paths {
		for d := parent(p); ; d = parent(d) {
			if _, done := rules[d]; done {
				break
			}
			data, err := readRules(r, path.Join(d, ".gitignore"))
			if err != nil {
				return nil, err
			}
			rules[d] = data
			if d == "" {
				break
			}
		}
	}
	return rules, nil
}

// readRules returns the ignore file name of r if it is a regular file
// (git does not follow a symbolic link named .gitignore), else nil.
func readRules(r *os.Root, name string) ([]byte, error) {
	fi, err := r.Lstat(name)
	if missing(err) || (err == nil && !fi.Mode().IsRegular()) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := workspace.ReadFile(r, name, rulesLimit)
	if errors.Is(err, workspace.ErrNotRegular) {
		return nil, nil // replaced since lstat
	}
	return b, err
}

// rulesLimit bounds an ignore file, as workspace's own reader does.
const rulesLimit = 16 << 20

func sameRules(a, b map[string][]byte) bool {
	for d, data := range a {
		if !bytes.Equal(data, b[d]) || (data == nil) != (b[d] == nil) {
			return false
		}
	}
	return len(a) == len(b)
}

// infoExclude returns the root's .git/info/exclude, nil if there is none.
func infoExclude(r *os.Root) ([]byte, error) {
	fi, err := r.Lstat(".git")
	if missing(err) || (err == nil && !fi.IsDir()) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return readRules(r, ".git/info/exclude")
}

// shadowFiles builds the shadow tree of paths with the given .gitignore
// files in a new directory under parent, and returns the paths workspace
// lists there.
func shadowFiles(parent string, rules map[string][]byte, exclude []byte, paths []string) (map[string]bool, error) {
	dir, err := os.MkdirTemp(parent, ".ignore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sh, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer sh.Close()
	if err := writeShadow(sh, rules, exclude, paths); err != nil {
		return nil, err
	}
	files, err := workspace.NewHasher(dir).Files()
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(files))
	for _, f := range files {
		out[f] = true
	}
	return out, nil
}

// writeShadow writes the directories of paths, their .gitignore files, an
// empty file at each path, and .git/info/exclude into sh.
func writeShadow(sh *os.Root, rules map[string][]byte, exclude []byte, paths []string) error {
	if exclude != nil {
		if err := sh.MkdirAll(".git/info", 0o755); err != nil {
			return err
		}
		if err := sh.WriteFile(".git/info/exclude", exclude, 0o644); err != nil {
			return err
		}
	}
	for _, d := range sortedKeys(rules) { // parents first
		if d != "" && sh.Mkdir(d, 0o755) != nil {
			continue // below a placeholder file: cannot be asked about
		}
		if data := rules[d]; data != nil {
			if err := sh.WriteFile(path.Join(d, ".gitignore"), data, 0o644); err != nil {
				return err
			}
		}
	}
	for _, p := range paths {
		if path.Base(p) == ".gitignore" && rules[parent(p)] != nil {
			continue // already there, with its content
		}
		if err := sh.WriteFile(p, nil, 0o644); err != nil && !missing(err) {
			return err
		}
	}
	return nil
}
