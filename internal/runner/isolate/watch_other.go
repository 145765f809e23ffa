//go:build !linux

package isolate

// newFeed returns the stat walk: inotify is Linux only.
func newFeed(string) feed { return walkFeed{} }
