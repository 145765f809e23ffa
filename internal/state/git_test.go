package state_test

import (
	"path/filepath"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// newBare creates an empty bare repository name in dir that accepts
// pushes over HTTP.
func newBare(t testing.TB, dir, name string) string {
	t.Helper()
	return gitfake.InitBare(t, filepath.Join(dir, name))
}
