//go:build !unix

package hook

import (
	"errors"
	"io/fs"
	"os"
)

// lockFile creates path exclusively and removes it on release. A process
// that dies holding it leaves it behind: the error says which file to
// remove.
func lockFile(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, errBusy
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	return func() { _ = os.Remove(path) }, nil
}
