package action

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// credentialLimit bounds how much of a git config file is read.
const credentialLimit = 1 << 20

// persistedCredentials says where actions/checkout left a token for git
// in the workspace's repository — its default, persist-credentials: an
// http.<url>.extraheader "AUTHORIZATION: basic …" in .git/config (v4), or
// in a file under the runner's temporary directory that .git/config
// includes (v6) — or "" when it left none. Every agent and check can read
// it there, and it is usually the very token this action is given.
func persistedCredentials(ws string) string {
	gitDir := filepath.Join(ws, ".git")
	cfg := readConfig(gitDir, "config")
	if hasAuthorization(cfg) {
		return ".git/config"
	}
	for _, inc := range includes(cfg) {
		dir, name := filepath.Split(inc)
		if !filepath.IsAbs(inc) {
			dir, name = filepath.Split(filepath.Join(gitDir, inc))
		}
		if hasAuthorization(readConfig(dir, name)) {
			return "a file that .git/config includes"
		}
	}
	return ""
}

// readConfig reads a git config file without following it into a FIFO;
// nil when it cannot be read.
func readConfig(dir, name string) []byte {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer r.Close()
	b, _ := workspace.ReadFile(r, name, credentialLimit)
	return b
}

// hasAuthorization reports whether a git config sets an extraheader that
// carries an Authorization header.
func hasAuthorization(cfg []byte) bool {
	for line := range strings.Lines(string(cfg)) {
		k, v, ok := strings.Cut(strings.ToLower(strings.TrimSpace(line)), "=")
		if ok && strings.TrimSpace(k) == "extraheader" && strings.Contains(v, "authorization:") {
			return true
		}
	}
	return false
}

// includes lists the path values of a git config's include and includeIf
// sections.
func includes(cfg []byte) []string {
	var out []string
	inInclude := false
	sc := bufio.NewScanner(bytes.NewReader(cfg))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section := strings.ToLower(strings.TrimLeft(line, "[ \t"))
			inInclude = strings.HasPrefix(section, "include")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && inInclude && strings.EqualFold(strings.TrimSpace(k), "path") {
			out = append(out, strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return out
}

// warnCredentials warns when actions/checkout persisted its token where
// agents can read it.
func (j *job) warnCredentials() {
	if where := persistedCredentials(j.workspace); where != "" {
		j.a.Warningf("actions/checkout left its token in %s (persist-credentials), where every agent and check can read it "+
			"and use it against this repository; set `persist-credentials: false` on the checkout step", where)
	}
}
