package action

import (
	"errors"
	"fmt"
	"io"
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
// masker knows (runner.Secrets: raw, JSON-escaped, hex, URL-encoded,
// base64 at every alignment).
type secretScan struct {
	secrets []secret.Secret
	mask    func(string) string
	longest int
}

// scanner is the scan for the run's config and this job's tokens.
func (j *job) scanner(cfg *loop.Config) secretScan {
	secrets := runner.Secrets(cfg, j.env.Environ)
	tokens := map[string]string{"github-token": j.in.Token, "push-token": j.in.PushToken,
		"ACTIONS_RUNTIME_TOKEN": j.env.Getenv("ACTIONS_RUNTIME_TOKEN")}
	var names, env []string
	for _, name := range slices.Sorted(maps.Keys(tokens)) {
		if tokens[name] != "" {
			names, env = append(names, name), append(env, name+"="+tokens[name])
		}
	}
	held := &loop.Config{Providers: map[string]loop.Provider{"the job": {Env: names}}} // runner.Secrets reads env names from providers
	secrets = append(secrets, runner.Secrets(held, env)...)
	sc := secretScan{secrets: secrets, mask: secret.Mask(secrets)}
	for _, s := range secrets {
		for _, f := range s.Forms {
			sc.longest = max(sc.longest, len(f))
		}
	}
	return sc
}

// found reports whether text holds a secret.
func (sc secretScan) found(text string) bool { return sc.longest > 0 && sc.mask(text) != text }

// first names the first of paths in root whose path, content, or link
// target holds a secret, or "". A path that cannot be read counts as
// holding one: what cannot be checked is not delivered.
func (sc secretScan) first(root string, paths []string) (string, error) {
	if sc.longest == 0 {
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
// whose windows overlap by the longest form, so that no form is missed
// across a boundary. A path that no longer exists holds nothing.
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
	return sc.stream(f)
}

func (sc secretScan) stream(rd io.Reader) (bool, error) {
	buf := make([]byte, 0, 64<<10+sc.longest)
	chunk := make([]byte, 64<<10)
	for {
		n, err := rd.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if sc.found(string(buf)) {
			return true, nil
		}
		if keep := sc.longest - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
