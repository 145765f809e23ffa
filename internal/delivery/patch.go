package delivery

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/binary"

	"github.com/loop-action/loop-action/internal/workspace"
)

// Patch returns the unified diff from the base to the delivered tree, as
// `git diff` writes it: a "diff --git" header per path, in git's order,
// with mode lines, new and deleted files, and text hunks with three lines
// of context (abbreviated index lines); a file that became a symbolic
// link, or the reverse, is deleted and created. A binary file (a NUL in
// its first 8000 bytes, as git decides) gets a full index line and a
// literal "GIT binary patch", as `git diff --binary` writes it, so that
// `git apply` on a checkout of the base accepts the whole patch. Where
// hunks are ambiguous the line diff may place them otherwise than git
// does; it is exact either way. A delivery that changes nothing has an
// empty patch.
func (d *Delivery) Patch() (string, error) {
	var b bytes.Buffer
	for _, c := range d.Changes {
		from, err := d.file(d.baseTree, c.Path)
		if err != nil {
			return "", err
		}
		to, err := d.file(d.tree, c.Path)
		if err != nil {
			return "", err
		}
		if err := d.patchFile(&b, c.Path, from, to); err != nil {
			return "", fmt.Errorf("patch %q: %w", c.Path, err)
		}
	}
	return b.String(), nil
}

// file returns the file or symbolic link at p in tree, nil when there is
// none (or a directory).
func (d *Delivery) file(tree plumbing.Hash, p string) (*object.TreeEntry, error) {
	e, ok, err := d.lookup(tree, p)
	if err != nil || !ok || e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
		return nil, err
	}
	e.Mode = normal(e.Mode)
	return &e, nil
}

func (d *Delivery) patchFile(b *bytes.Buffer, p string, x, y *object.TreeEntry) error {
	if x != nil && y != nil && (x.Mode == filemode.Symlink) != (y.Mode == filemode.Symlink) {
		if err := d.patchFile(b, p, x, nil); err != nil {
			return err
		}
		return d.patchFile(b, p, nil, y)
	}
	xd, err := d.data(x)
	if err != nil {
		return err
	}
	yd, err := d.data(y)
	if err != nil {
		return err
	}
	a, bn := quote("a/"+p), quote("b/"+p)
	fmt.Fprintf(b, "diff --git %s %s\n", a, bn)
	bin := isBinary(xd) || isBinary(yd)
	writeModes(b, x, y, bin)
	switch {
	case x != nil && y != nil && x.Hash == y.Hash:
		return nil // the mode alone
	case bin:
		return writeBinary(b, xd, yd)
	case len(xd) == 0 && len(yd) == 0:
		return nil // an empty file created or deleted
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", name(a, x, p), name(bn, y, p))
	writeHunks(b, xd, yd)
	return nil
}

// data is the content of e's blob; nil when there is no e.
func (d *Delivery) data(e *object.TreeEntry) ([]byte, error) {
	if e == nil {
		return nil, nil
	}
	return workspace.ReadBlob(d.st, e.Hash)
}

// writeModes writes the mode and index lines.
func writeModes(b *bytes.Buffer, x, y *object.TreeEntry, binary bool) {
	id := func(e *object.TreeEntry) string {
		h := plumbing.ZeroHash.String()
		if e != nil {
			h = e.Hash.String()
		}
		if binary {
			return h
		}
		return h[:7]
	}
	switch {
	case x == nil:
		fmt.Fprintf(b, "new file mode %s\n", mode(y.Mode))
	case y == nil:
		fmt.Fprintf(b, "deleted file mode %s\n", mode(x.Mode))
	case x.Mode != y.Mode:
		fmt.Fprintf(b, "old mode %s\nnew mode %s\n", mode(x.Mode), mode(y.Mode))
	}
	if x != nil && y != nil && x.Hash == y.Hash {
		return
	}
	fmt.Fprintf(b, "index %s..%s", id(x), id(y))
	if x != nil && y != nil && x.Mode == y.Mode {
		fmt.Fprintf(b, " %s", mode(x.Mode))
	}
	b.WriteString("\n")
}

func mode(m filemode.FileMode) string { return fmt.Sprintf("%06o", uint32(m)) }

// name is what the ---/+++ line says of a side: /dev/null when it has no
// file; a tab follows a name with a space, as git writes it.
func name(quoted string, e *object.TreeEntry, p string) string {
	if e == nil {
		return "/dev/null"
	}
	if strings.Contains(p, " ") && !strings.HasPrefix(quoted, `"`) {
		return quoted + "\t"
	}
	return quoted
}

// isBinary is git's test, as go-git has it: a NUL byte in the first 8000
// bytes (reading from memory cannot fail).
func isBinary(data []byte) bool {
	b, _ := binary.IsBinary(bytes.NewReader(data))
	return b
}

// quote writes a path as git does with core.quotePath: in double quotes
// with C escapes when it holds a quote, a backslash, a control character
// or a byte above 0x7f.
func quote(p string) string {
	needs := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			needs = true
			break
		}
	}
	if !needs {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		if esc := strings.IndexByte("\a\b\t\n\v\f\r\"\\", c); esc >= 0 {
			b.WriteByte('\\')
			b.WriteByte("abtnvfr\"\\"[esc])
		} else if c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "\\%03o", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
