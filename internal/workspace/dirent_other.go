//go:build !linux

package workspace

import "os"

// readEntries lists directory r with each entry's type (an lstat of each:
// os.File.ReadDir of a directory opened in an os.Root).
func readEntries(r *os.Root) ([]dirEntry, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	out := make([]dirEntry, 0, len(des))
	for _, de := range des {
		out = append(out, dirEntry{de.Name(), de.Type()})
	}
	return out, err
}
