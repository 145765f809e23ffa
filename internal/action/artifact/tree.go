package artifact

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/export"
)

// tree is the directory an artifact is made of, listed before anything is
// uploaded so that a bad path fails the upload before the artifact exists.
type tree struct {
	root    *os.Root
	entries []entry
	windows export.WindowsNames // the paths listed, as Windows reads them
}

// entry is a regular file, or an empty directory whose rel ends in "/".
type entry struct {
	rel  string // slash-separated, relative to the root
	info fs.FileInfo
}

// openTree lists dir: regular files and empty directories, in lexical
// order. It never follows a symlink; dir itself must be a real directory.
// A path that Windows would read as another (export.WindowsNames: one
// that escapes the directory there, names a device or a stream, or
// differs only in case from another) is an error: the zip is extracted on
// Windows too, and the export never writes such a path.
func openTree(dir string) (*tree, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("artifact directory %q is not a directory (mode %s)", dir, fi.Mode().Type())
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	}
	t := &tree{root: root}
	if _, err := t.list("."); err != nil {
		root.Close()
		return nil, fmt.Errorf("list artifact directory %q: %w", dir, err)
	}
	return t, nil
}

func (t *tree) Close() error { return t.root.Close() }

// list appends the entries under dir and reports whether it appended any.
// Symlinks and special files are skipped.
func (t *tree) list(dir string) (bool, error) {
	des, err := fs.ReadDir(t.root.FS(), dir)
	if err != nil {
		return false, err
	}
	n := len(t.entries)
	for _, de := range des {
		rel := path.Join(dir, de.Name())
		switch {
		case de.IsDir():
			err = t.listDir(rel, de)
		case de.Type().IsRegular():
			err = t.add(rel, de)
		}
		if err != nil {
			return false, err
		}
	}
	return len(t.entries) > n, nil
}

// listDir lists the directory rel, or adds it as an entry if it holds
// nothing that goes in the zip.
func (t *tree) listDir(rel string, de fs.DirEntry) error {
	added, err := t.list(rel)
	if err != nil || added {
		return err
	}
	return t.add(rel+"/", de)
}

func (t *tree) add(rel string, de fs.DirEntry) error {
	if err := validPath(rel); err != nil {
		return err
	}
	if why := t.windows.Add(strings.TrimSuffix(rel, "/")); why != "" {
		return fmt.Errorf("path %q would be another path on Windows: %s", rel, why)
	}
	info, err := de.Info()
	if err != nil {
		return err
	}
	t.entries = append(t.entries, entry{rel: rel, info: info})
	return nil
}

// zip writes the tree as a zip archive to w.
func (t *tree) zip(w io.Writer) error {
	sniff, _ := flate.NewWriter(io.Discard, flate.BestSpeed)
	z := zipper{zw: zip.NewWriter(w), sniff: sniff, head: make([]byte, sniffSize)}
	for _, e := range t.entries {
		if err := z.write(t.root, e); err != nil {
			return fmt.Errorf("zip %q: %w", e.rel, err)
		}
	}
	return z.zw.Close()
}

// sniffSize is how much of a file is trial-compressed to choose how to
// store it.
const sniffSize = 64 << 10

// zipper writes entries to a zip, deflating the files that compress.
type zipper struct {
	zw    *zip.Writer
	sniff *flate.Writer
	out   bytes.Buffer // what sniff made of the head
	head  []byte
}

func (z *zipper) write(root *os.Root, e entry) error {
	hdr, err := zip.FileInfoHeader(e.info)
	if err != nil {
		return err
	}
	hdr.Name = e.rel
	if strings.HasSuffix(e.rel, "/") {
		_, err := z.zw.CreateHeader(hdr)
		return err
	}
	f, err := root.Open(filepath.FromSlash(e.rel))
	if err != nil {
		return err
	}
	defer f.Close()
	// The root follows symlinks; a file swapped for one since it was listed
	// is not the file that was listed.
	if fi, err := f.Stat(); err != nil || !os.SameFile(e.info, fi) {
		return fmt.Errorf("it changed after it was listed")
	}
	n, err := io.ReadFull(f, z.head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return err
	}
	hdr.Method = z.method(z.head[:n])
	fw, err := z.zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	if _, err := fw.Write(z.head[:n]); err != nil {
		return err
	}
	_, err = io.Copy(fw, f)
	return err
}

// method is Deflate for a file whose head compresses, and Store for one
// whose head does not shrink by a twentieth: data already compressed
// (archives, images, binaries) only costs time to deflate.
func (z *zipper) method(head []byte) uint16 {
	z.out.Reset()
	z.sniff.Reset(&z.out)
	z.sniff.Write(head)
	z.sniff.Close()
	if z.out.Len()*20 >= len(head)*19 {
		return zip.Store
	}
	return zip.Deflate
}
