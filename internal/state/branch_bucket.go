package state

import (
	"bytes"
	"errors"
	"fmt"
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
func isBucket(e object.TreeEntry, l int) bool {
	return l == len(fanSpan)-1 && e.Mode != filemode.Dir
}

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
	case i < lo || i >= lo+bucketSpan() || (len(fs) > 0 && i <= fs[len(fs)-1].i):
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
// tree h, in any layout: flat, fanned or consolidated.
func (o *objects) fanData(h plumbing.Hash, d indexed, i int) ([]byte, bool, error) {
	blob, ok, err := o.fanGet(h, d, i)
	if err != nil || ok {
		if err != nil {
			return nil, false, err
		}
		data, err := o.blob(blob)
		return data, err == nil, err
	}
	e, ok, err := o.lookup(h, d.bucketPath(i))
	if err != nil || !ok || e.Mode == filemode.Dir {
		return nil, false, err
	}
	fs, err := o.readBucket(e.Hash, bucketLo(i))
	if err != nil {
		return nil, false, err
	}
	for _, f := range fs {
		if f.i == i {
			return f.data, true, nil
		}
	}
	return nil, false, nil
}

// bucketPath is the path of the consolidated bucket holding index i.
func (d indexed) bucketPath(i int) []string {
	p := fanPath(i)
	last := len(p) - 1
	return append(p[:last:last], d.bucketName(i%fanSpan[last-1]/fanSpan[last]))
}

// bucketSpan is how many indices a bucket spans.
func bucketSpan() int { return fanSpan[len(fanSpan)-1] }

// bucketLo is the first index of the bucket holding i.
func bucketLo(i int) int { return i - i%bucketSpan() }

// fanAll returns the content of every file of the directory tree h by
// index, in any layout.
func (o *objects) fanAll(h plumbing.Hash, d indexed) (map[int][]byte, error) {
	out := map[int][]byte{}
	err := o.fanWalk(h, d, 0, 0, func(e object.TreeEntry, l, lo int) error {
		if isBucket(e, l) {
			fs, err := o.readBucket(e.Hash, lo)
			for _, f := range fs {
				out[f.i] = f.data
			}
			return err
		}
		data, err := o.blob(e.Hash)
		out[lo] = data
		return err
	})
	return out, err
}

// fanWalk calls visit with each file and consolidated bucket of the tree
// h at fan level l, whose first index is base, and the first index it
// holds; names outside the layout are skipped.
func (o *objects) fanWalk(h plumbing.Hash, d indexed, l, base int, visit func(e object.TreeEntry, l, lo int) error) error {
	es, err := o.tree(h)
	if err != nil {
		return err
	}
	for _, e := range es {
		lo, _, ok := d.span(e, l, base)
		switch {
		case !ok:
		case e.Mode == filemode.Dir:
			err = o.fanWalk(e.Hash, d, l+1, lo, visit)
		default:
			err = visit(e, l, lo)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
