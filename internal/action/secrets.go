package action

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/secret"
	"github.com/loop-action/loop-action/internal/workspace"
)

// secretScan finds what delivered work must never carry: the value of a
// provider's env variable, or of a token this job holds, in any form the
// masker knows (package secret: raw, JSON-escaped, hex, URL-encoded,
// base64 at every alignment).
type secretScan struct {
	secrets []secret.Secret
	mask    func(string) string
	find    *secret.Finder
}

// scanner is the scan for the run's config and this job's tokens.
func (j *job) scanner(cfg *loop.Config) secretScan {
	secrets := runner.Secrets(cfg, j.env.Environ)
	tokens := map[string]string{"github-token": j.in.Token, "push-token": j.in.PushToken,
		"ACTIONS_RUNTIME_TOKEN": j.env.Getenv("ACTIONS_RUNTIME_TOKEN")}
	for _, name := range slices.Sorted(maps.Keys(tokens)) {
		secrets = secret.Append(secrets, name, tokens[name])
	}
	return secretScan{secrets: secrets, mask: secret.Mask(secrets), find: secret.NewFinder(secrets)}
}

// found reports whether text holds a secret.
func (sc secretScan) found(text string) bool { return sc.find.Find([]byte(text)) != "" }

// first names the first of paths in root whose path, content, or link
// target holds a secret, or "". A path that cannot be read counts as
// holding one: what cannot be checked is not delivered.
func (sc secretScan) first(root string, paths []string) (string, error) {
	if sc.find.None() {
		return "", nil
	}
	r, err := workspace.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	for _, p := range paths {
		if sc.found(p) {
			return p, nil
		}
		held, err := sc.file(r, p)
		if held || err != nil {
			return p, err
		}
	}
	return "", nil
}

// file scans one path: a link's target, or a file's content as a stream
// (secret.Finder.FindIn). A path that no longer exists holds nothing.
func (sc secretScan) file(r *os.Root, rel string) (bool, error) {
	fi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("scan %q for secrets: %w", rel, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := r.Readlink(rel)
		if err != nil {
			return false, fmt.Errorf("scan %q for secrets: %w", rel, err)
		}
		return sc.found(target), nil
	}
	f, _, err := workspace.OpenFile(r, rel)
	if err != nil {
		return false, fmt.Errorf("scan %q for secrets: %w", rel, err)
	}
	defer f.Close()
	name, err := sc.find.FindIn(f)
	return name != "", err
}
