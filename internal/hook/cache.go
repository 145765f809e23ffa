package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The verdict cache remembers the trees the gate certified, one file per
// key under .loop/hook/cache. Only passes are remembered: a tree that
// failed is measured again. An entry is a header line carrying the
// SHA-256 of the JSON body that follows; an entry that does not verify in
// every respect is a miss, never a pass.
const cacheHeader = "loop-action hook cache v1 "

// cacheEntry is what the cache remembers of a certified tree.
type cacheEntry struct {
	Key      string         `json:"key"`
	Tree     string         `json:"tree"`
	Config   string         `json:"config"`
	Verdicts []gate.Verdict `json:"verdicts"`
}

// cacheKey is what a verdict depends on besides the checks' own code
// (which is in the tree): the binary's version and platform, the tree,
// the config's name and text (its checks, metrics command, [hook] goals
// and cache_env), and the values of PATH and of the variables cache_env
// names.
func cacheKey(version, tree, configName string, src []byte, cfg *loop.Config, env []string) string {
	h := sha256.New()
	field := func(s string) {
		_ = binary.Write(h, binary.BigEndian, uint64(len(s)))
		h.Write([]byte(s))
	}
	field(cacheHeader)
	field(version)
	field(runtime.GOOS + "/" + runtime.GOARCH)
	field(tree)
	field(configName)
	field(string(src))
	for _, name := range append([]string{"PATH"}, cfg.Hook.CacheEnv...) {
		v, ok := environ.Env(env).Lookup(name)
		field(name)
		field(fmt.Sprint(ok, len(v)))
		field(v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (r *Repo) cachePath(key string) string { return r.loopDir("cache", key+".json") }

// cached returns the verdicts remembered for key, when an entry verifies:
// its checksum, its key and tree, one verdict per goal cfg gates, in
// order, and overall success under cfg.
func (r *Repo) cached(key, tree string, cfg *loop.Config) ([]gate.Verdict, bool) {
	b, err := os.ReadFile(r.cachePath(key))
	if err != nil || len(b) > 16<<20 {
		return nil, false
	}
	head, body, ok := bytes.Cut(b, []byte("\n"))
	sum := sha256.Sum256(body)
	if !ok || string(head) != cacheHeader+hex.EncodeToString(sum[:]) {
		return nil, false
	}
	var e cacheEntry
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if dec.Decode(&e) != nil || dec.Decode(&struct{}{}) != io.EOF || e.Key != key || e.Tree != tree || len(e.Verdicts) != len(cfg.Goals) {
		return nil, false
	}
	for i, v := range e.Verdicts {
		if v.Goal != cfg.Goals[i].Name || v.Blocking != cfg.Goals[i].IsBlocking() {
			return nil, false
		}
	}
	if !gate.OverallSuccess(cfg, e.Verdicts) {
		return nil, false
	}
	return e.Verdicts, true
}

// remember stores the verdicts that certified tree under key.
func (r *Repo) remember(key, tree, configName string, verdicts []gate.Verdict) error {
	body, err := json.Marshal(cacheEntry{Key: key, Tree: tree, Config: configName, Verdicts: slices.Clip(verdicts)})
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	dir, err := r.ownDir("cache")
	if err != nil {
		return err
	}
	content := fmt.Appendf(nil, "%s%s\n%s", cacheHeader, hex.EncodeToString(sum[:]), body)
	if err := (workspace.Atomic{Perm: 0o600}).WriteFile(filepath.Join(dir, key+".json"), content); err != nil {
		return fmt.Errorf("verdict cache: %w", err)
	}
	return nil
}
