package isolate

import (
	"io/fs"
	"os"
	"path"
	"strings"
)

// maxHops bounds how many symbolic links a target may go through.
const maxHops = 40

// refusal returns why the change c of t's node may never be published, or "".
func (m *Manager) refusal(t *tree, c change) (string, error) {
	if m.opts.Protected != nil && m.opts.Protected(c.path) {
		return ReasonProtected, nil
	}
	if c.cur.kind != symlink {
		return "", nil
	}
	target, err := t.r.Readlink(c.path)
	if err != nil {
		return "", err
	}
	return linkReason(m.index.r, c.path, target), nil
}

// linkReason returns why a symbolic link at p with target may not be
// published in the root r, or "". The target must lead inside the root
// both as written and as resolved through the links already in the root,
// and not into .git or .loop.
func linkReason(r *os.Root, p, target string) string {
	if target == "" || path.IsAbs(target) || strings.HasPrefix(target, `\`) || strings.Contains(target, "\x00") {
		return ReasonOutside
	}
	lexical := path.Join(path.Dir(p), target)
	resolved, ok := resolve(r, path.Dir(p), target)
	if lexical == ".." || strings.HasPrefix(lexical, "../") || !ok {
		return ReasonOutside
	}
	for _, q := range []string{lexical, resolved} {
		switch _, reason := excludedTop(q); reason {
		case ReasonGit:
			return ReasonLinkGit
		case ReasonLoop:
			return ReasonLinkLoop
		}
	}
	return ""
}

// resolve follows target from directory dir of the root r as the system
// would, through the symbolic links r holds, and returns where it leads;
// false if it leaves the root or goes through too many links.
func resolve(r *os.Root, dir, target string) (string, bool) {
	var at []string
	if dir != "." && dir != "" {
		at = strings.Split(dir, "/")
	}
	rest := strings.Split(target, "/")
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				return "", false
			}
			at = at[:len(at)-1]
			continue
		}
		at = append(at, c)
		fi, err := r.Lstat(strings.Join(at, "/"))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue // not there, or not a link: it resolves as written
		}
		link, err := r.Readlink(strings.Join(at, "/"))
		if hops++; err != nil || hops > maxHops || path.IsAbs(link) {
			return "", false
		}
		at = at[:len(at)-1]
		rest = append(strings.Split(link, "/"), rest...)
	}
	return strings.Join(at, "/"), true
}
