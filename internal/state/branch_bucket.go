package state

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Full hundreds are consolidated: once the run has moved past a bucket
// (its highest file lies in a later one), a save replaces its directory by
// one blob beside it, ledger/00/37/ (chunks 3700 to 3799) by
// ledger/00/37.jsonl, at most one per directory and save (see fanPack). A
// consolidated bucket is a header, then the files' contents in order:
//
//	loop-state bucket 1
//	3700 2210
//	3701 2214
//	…
//	(an empty line)
//
// one line per file it holds (a bucket of summaries may lack some): its
// index and its size in bytes. A save from an older checkpoint that ends
// inside a consolidated bucket expands it back first (see fanUnpack).

// bucketMagic is the first line of a consolidated bucket.
const bucketMagic = "loop-state bucket 1\n"

// bucketFile is one file of a consolidated bucket.
type bucketFile struct {
	i    int
	data []byte
}

// bucketName is the name of the consolidated bucket n (the second level
// of fanPath) in its parent: "37.jsonl".
func (d indexed) bucketName(n int) string { return fmt.Sprintf("%02d%s", n, d.ext) }

// isBucket reports whether entry e, at fan level l, is a consolidated bucket.
func isBucket(e object.TreeEntry, l int) bool { return l == 1 && e.Mode != filemode.Dir }

// encodeBucket returns the consolidated bucket holding fs, in order.
func encodeBucket(fs []bucketFile) []byte {
	var head, body bytes.Buffer
	head.WriteString(bucketMagic)
	for _, f := range fs {
		fmt.Fprintf(&head, "%d %d\n", f.i, len(f.data))
		body.Write(f.data)
	}
	head.WriteByte('\n')
	return append(head.Bytes(), body.Bytes()...)
}

// decodeBucket returns the files of the consolidated bucket data, whose
// indices must lie in [lo, lo+100), ascending.
func decodeBucket(data []byte, lo int) ([]bucketFile, error) {
	rest, ok := bytes.CutPrefix(data, []byte(bucketMagic))
	if !ok {
		return nil, errors.New("not a consolidated bucket")
	}
	var fs []bucketFile
	var sizes []int
	for {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, errors.New("consolidated bucket: header not ended")
		}
		rest = after
		if len(line) == 0 {
			break
		}
		i, size, err := bucketLine(line, lo, fs)
		if err != nil {
			return nil, err
		}
		fs, sizes = append(fs, bucketFile{i: i}), append(sizes, size)
	}
	for k, n := range sizes {
		if n > len(rest) {
			return nil, fmt.Errorf("consolidated bucket: file %d overruns its body", fs[k].i)
		}
		fs[k].data, rest = rest[:n:n], rest[n:]
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("consolidated bucket: %d bytes past its files", len(rest))
	}
	return fs, nil
}

// bucketLine parses a header line "index size" of a bucket starting at lo
// whose files so far are fs.
func bucketLine(line []byte, lo int, fs []bucketFile) (i, size int, err error) {
	a, b, ok := bytes.Cut(line, []byte(" "))
	i, err1 := strconv.Atoi(string(a))
	size, err2 := strconv.Atoi(string(b))
	switch {
	case !ok || err1 != nil || err2 != nil || size < 0 || string(a) != strconv.Itoa(i) || string(b) != strconv.Itoa(size):
		return 0, 0, fmt.Errorf("consolidated bucket: bad header line %q", line)
	case i < lo || i >= lo+bucketSpan || (len(fs) > 0 && i <= fs[len(fs)-1].i):
		return 0, 0, fmt.Errorf("consolidated bucket at %d: index %d out of place", lo, i)
	}
	return i, size, nil
}

// readBucket reads and decodes the consolidated bucket blob h, starting at lo.
func (o *objects) readBucket(h plumbing.Hash, lo int) ([]bucketFile, error) {
	data, err := o.blob(h)
	if err != nil {
		return nil, err
	}
	fs, err := decodeBucket(data, lo)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	return fs, nil
}

// fanData returns the content of the file of index i in the directory
// tree h, in any layout: fanned, flat or consolidated.
func (o *objects) fanData(h plumbing.Hash, d indexed, i int) ([]byte, bool, error) {
	for _, p := range [][]string{append(fanPath(i), d.name(i)), {d.name(i)}} {
		e, ok, err := o.lookup(h, p)
		if err != nil {
			return nil, false, err
		}
		if ok && e.Mode != filemode.Dir {
			data, err := o.blob(e.Hash)
			return data, err == nil, err
		}
	}
	e, ok, err := o.lookup(h, []string{fanPath(i)[0], d.bucketName(i % dirSpan / bucketSpan)})
	if err != nil || !ok || e.Mode == filemode.Dir {
		return nil, false, err
	}
	fs, err := o.readBucket(e.Hash, bucketLo(i))
	if err != nil {
		return nil, false, err
	}
	if k := slices.IndexFunc(fs, func(f bucketFile) bool { return f.i == i }); k >= 0 {
		return fs[k].data, true, nil
	}
	return nil, false, nil
}

// bucketLo is the first index of the bucket holding i.
func bucketLo(i int) int { return i - i%bucketSpan }

// fanAll returns the content of every file of the directory tree h by
// index, in any layout.
func (o *objects) fanAll(h plumbing.Hash, d indexed) (map[int][]byte, error) {
	out := map[int][]byte{}
	return out, o.fanRead(h, d, 0, 0, out)
}

// fanRead adds to out the files of the tree h at fan level l, whose first
// index is base; names outside the layout are skipped. A bucket's
// directory is read after its consolidated blob (git sorts "00.jsonl"
// before "00/"), so its files win.
func (o *objects) fanRead(h plumbing.Hash, d indexed, l, base int, out map[int][]byte) error {
	es, err := o.tree(h)
	if err != nil {
		return err
	}
	for _, e := range es {
		lo, _, ok := d.span(e, l, base)
		switch {
		case !ok:
		case e.Mode == filemode.Dir:
			err = o.fanRead(e.Hash, d, l+1, lo, out)
		case isBucket(e, l):
			var fs []bucketFile
			fs, err = o.readBucket(e.Hash, lo)
			for _, f := range fs {
				out[f.i] = f.data
			}
		default:
			out[lo], err = o.blob(e.Hash)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
