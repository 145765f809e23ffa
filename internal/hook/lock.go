package hook

import (
	"errors"
	"fmt"
	"path/filepath"
)

// errBusy says another hook holds the isolated checkout.
var errBusy = errors.New("another loop-action hook is using the isolated checkout")

// lock holds the isolated checkout for this process, without waiting: two
// hooks at once (a commit while a push is being gated) would check out
// over each other's measurement.
func (r *Repo) lock() (release func(), err error) {
	dir, err := r.ownDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "lock")
	release, err = lockFile(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w; try again when it is done", path, err)
	}
	return release, nil
}
