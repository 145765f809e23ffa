package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultSpec is the --state value used locally when none is given.
const DefaultSpec = "dir:.loop/state"

// Open parses a --state value naming a dir: store and opens it. "dir:PATH"
// keeps runs under PATH, relative to root unless absolute. "branch:NAME"
// needs a remote: open it with [OpenStore]. Any other value is an error
// naming the accepted forms.
func Open(spec, root string) (*Dir, error) {
	scheme, arg, ok := strings.Cut(spec, ":")
	switch {
	case spec == "":
		return nil, errors.New("state store: empty --state; want dir:PATH")
	case !ok:
		return nil, fmt.Errorf("state store %q: want dir:PATH", spec)
	case scheme == "branch":
		return nil, fmt.Errorf("state store %q: a branch: store needs a remote; open it with OpenStore", spec)
	case scheme != "dir":
		return nil, fmt.Errorf("state store %q: unknown kind %q; want dir:PATH", spec, scheme)
	case arg == "":
		return nil, fmt.Errorf("state store %q: dir: needs a path; want dir:PATH", spec)
	}
	path := arg
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	return OpenDir(path)
}

// MaxRunIDBytes is the longest run id the stores accept.
const MaxRunIDBytes = 200

// reserved are the names the stores give to a run's own files and
// directories (the dir: store's and the branch: store's). Run ids map to
// nested directories, so a run id segment with one of these names would
// make one run's files collide with another's (runs "a" and "a/run.log").
// They are compared without regard to case because macOS and Windows file
// systems do the same.
var reserved = []string{"checkpoint.json", "ledger", "summaries", "reviews.json", "run.log", "log", "workspace", memoryDir, recordingDir, objectsDir, snapshotsDir}

// ValidRunID reports why a run id cannot be used, or nil. Run ids look like
// "quickstart/pr-12" or "nightly/main": 1–200 bytes of [A-Za-z0-9._/-],
// no leading or trailing '/', no empty, "." or ".." segments, and no
// segment that starts with '.' (the store's lock and temporary files do)
// or is named like a run's own files (see reserved).
func ValidRunID(id string) error {
	if id == "" {
		return errors.New("run id is empty")
	}
	if len(id) > MaxRunIDBytes {
		return fmt.Errorf("run id %q is %d bytes; the limit is %d", id, len(id), MaxRunIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if !runIDByte(id[i]) {
			return fmt.Errorf("run id %q has %q at byte %d; use letters, digits and . _ / -", id, id[i], i)
		}
	}
	if strings.HasPrefix(id, "/") || strings.HasSuffix(id, "/") {
		return fmt.Errorf("run id %q starts or ends with '/'", id)
	}
	for seg := range strings.SplitSeq(id, "/") {
		if err := validSegment(seg); err != nil {
			return fmt.Errorf("run id %q: %w", id, err)
		}
	}
	return nil
}

func validSegment(seg string) error {
	switch {
	case seg == "":
		return errors.New("empty segment (\"//\")")
	case seg == "." || seg == "..":
		return fmt.Errorf("segment %q is not allowed", seg)
	case strings.HasPrefix(seg, "."):
		return fmt.Errorf("segment %q starts with '.', which the store reserves", seg)
	}
	for _, r := range reserved {
		if strings.EqualFold(seg, r) {
			return fmt.Errorf("segment %q is the name of a file the store keeps for each run", seg)
		}
	}
	return nil
}

func runIDByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '.' || c == '_' || c == '/' || c == '-'
}
