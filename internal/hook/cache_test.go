package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

const cacheTestConfig = `name = "c"
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "true"
[[goal]]
name = "docs"
blocking = false
  [[goal.check]]
  type = "file_exists"
  path = "README.md"
`

func cacheFixture(t *testing.T) (*Repo, *loop.Config, []gate.Verdict) {
	t.Helper()
	cfg, err := parseConfig("loop.toml", []byte(cacheTestConfig))
	if err != nil {
		t.Fatal(err)
	}
	verdicts := []gate.Verdict{
		{Goal: "tests", Blocking: true, Satisfied: true, Passed: 1, Total: 1, Checks: []gate.CheckVerdict{{Type: "test", Status: gate.Pass, Evidence: "`true` exited 0"}}},
		{Goal: "docs", Blocking: false, Satisfied: false, Passed: 0, Total: 1, Checks: []gate.CheckVerdict{{Type: "file_exists", Status: gate.Fail, Evidence: "README.md does not exist"}}},
	}
	return &Repo{Top: t.TempDir()}, cfg, verdicts
}

// sealed is an entry as remember writes it, with a valid checksum, for
// a body that may say anything.
func sealed(body []byte) []byte {
	sum := sha256.Sum256(body)
	return []byte(cacheHeader + hex.EncodeToString(sum[:]) + "\n" + string(body))
}

func TestCacheRemembers(t *testing.T) {
	t.Parallel()
	r, cfg, verdicts := cacheFixture(t)
	const key, tree = "k1", "0123456789abcdef0123456789abcdef01234567"
	if _, ok := r.cached(key, tree, cfg); ok {
		t.Fatal("an empty cache answered")
	}
	if err := r.remember(key, tree, "loop.toml", verdicts); err != nil {
		t.Fatal(err)
	}
	got, ok := r.cached(key, tree, cfg)
	if !ok {
		t.Fatal("a remembered pass is a miss")
	}
	if diff := cmp.Diff(verdicts, got); diff != "" {
		t.Errorf("cached verdicts (-want +got):\n%s", diff)
	}
	if _, ok := r.cached(key, strings.Repeat("f", 40), cfg); ok {
		t.Error("an entry answered for another tree")
	}
}

// TestCacheFailsClosed: an entry that does not verify in every respect
// is a miss, never a pass — whatever it says.
func TestCacheFailsClosed(t *testing.T) {
	t.Parallel()
	const key, tree = "k1", "0123456789abcdef0123456789abcdef01234567"
	body := func(mut func(e *cacheEntry)) []byte {
		_, _, verdicts := cacheFixture(t)
		e := cacheEntry{Key: key, Tree: tree, Config: "loop.toml", Verdicts: verdicts}
		if mut != nil {
			mut(&e)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := sealed(body(nil))
	tests := []struct {
		name  string
		entry []byte
	}{
		{"empty", nil},
		{"garbage", []byte("not a cache entry\n{}")},
		{"truncated", good[:len(good)-20]},
		{"no header", body(nil)},
		{"a flipped byte, checksum kept", bytes.Replace(good, []byte(`"satisfied":true`), []byte(`"satisfied":tru3`), 1)},
		{"a failing goal marked satisfied, checksum kept", bytes.Replace(sealed(body(func(e *cacheEntry) { e.Verdicts[0].Satisfied = false })),
			[]byte(`"satisfied":false,"passed":1`), []byte(`"satisfied":true ,"passed":1`), 1)},
		{"resealed: a failing verdict", sealed(body(func(e *cacheEntry) { e.Verdicts[0].Satisfied = false }))},
		{"resealed: another key", sealed(body(func(e *cacheEntry) { e.Key = "k2" }))},
		{"resealed: another tree", sealed(body(func(e *cacheEntry) { e.Tree = strings.Repeat("0", 40) }))},
		{"resealed: a goal missing", sealed(body(func(e *cacheEntry) { e.Verdicts = e.Verdicts[:1] }))},
		{"resealed: a goal renamed", sealed(body(func(e *cacheEntry) { e.Verdicts[1].Goal = "other" }))},
		{"resealed: a blocking goal made advisory", sealed(body(func(e *cacheEntry) { e.Verdicts[0].Blocking = false }))},
		{"resealed: goals swapped", sealed(body(func(e *cacheEntry) { e.Verdicts[0], e.Verdicts[1] = e.Verdicts[1], e.Verdicts[0] }))},
		{"resealed: an unknown field", sealed(bytes.Replace(body(nil), []byte(`{"key"`), []byte(`{"pass":true,"key"`), 1))},
		{"resealed: trailing garbage", sealed(append(body(nil), []byte(` {"key":"x"}`)...))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, cfg, _ := cacheFixture(t)
			dir, err := r.ownDir("cache")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, key+".json"), tt.entry, 0o644); err != nil {
				t.Fatal(err)
			}
			if v, ok := r.cached(key, tree, cfg); ok {
				t.Errorf("a corrupted entry answered: %+v", v)
			}
		})
	}
	t.Run("a directory", func(t *testing.T) {
		t.Parallel()
		r, cfg, _ := cacheFixture(t)
		if err := os.MkdirAll(r.cachePath(key), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.cached(key, tree, cfg); ok {
			t.Error("a directory answered")
		}
	})
}

// TestCacheKey: everything that can change a verdict changes the key.
func TestCacheKey(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig("loop.toml", []byte(cacheTestConfig+"[hook]\ncache_env = [\"GOFLAGS\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	src := []byte(cacheTestConfig)
	env := []string{"PATH=/bin", "GOFLAGS=-mod=mod", "HOME=/h"}
	base := cacheKey("v1", "t1", "loop.toml", src, cfg, env)
	variants := map[string]string{
		"version":         cacheKey("v2", "t1", "loop.toml", src, cfg, env),
		"tree":            cacheKey("v1", "t2", "loop.toml", src, cfg, env),
		"config name":     cacheKey("v1", "t1", ".github/loop.toml", src, cfg, env),
		"config text":     cacheKey("v1", "t1", "loop.toml", append([]byte("# x\n"), src...), cfg, env),
		"PATH":            cacheKey("v1", "t1", "loop.toml", src, cfg, []string{"PATH=/usr/bin", "GOFLAGS=-mod=mod"}),
		"a cache_env var": cacheKey("v1", "t1", "loop.toml", src, cfg, []string{"PATH=/bin", "GOFLAGS="}),
		"cache_env unset": cacheKey("v1", "t1", "loop.toml", src, cfg, []string{"PATH=/bin"}),
	}
	for what, k := range variants {
		if k == base {
			t.Errorf("changing the %s keeps the key", what)
		}
	}
	if k := cacheKey("v1", "t1", "loop.toml", src, cfg, []string{"PATH=/bin", "GOFLAGS=-mod=mod", "HOME=/elsewhere"}); k != base {
		t.Error("a variable cache_env does not name changes the key")
	}
}
