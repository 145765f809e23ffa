//go:build linux

package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/action/artifact"
	"github.com/loop-action/loop-action/internal/testing/artifactfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// Stand-ins for the actions a job uses that cannot run here (they are
// JavaScript actions fetched from github.com, which CI cannot reach). Each
// does what its action does, for real where it can: checkout fetches from
// the bare remote, the setup actions put a tool that is on this machine on
// PATH, failing when the version asked for does not resolve to it, and the
// cache keeps directories by key. Each refuses an input it does not model.

// allowInputs fails the test on an input the stand-in does not model.
func allowInputs(j *jobEnv, action string, with map[string]string, names ...string) {
	for k := range with {
		if !slices.Contains(names, k) {
			j.t.Fatalf("%s: input %q is not modelled", action, k)
		}
	}
}

// toolOnMachine is a tool of this machine: the test's own PATH is the
// runner's tool cache.
func toolOnMachine(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not on this machine (the stand-in needs it there): %w", name, err)
	}
	return filepath.EvalSymlinks(p)
}

// toolDir puts links to tools into a directory of the job's tool cache
// and that directory first on PATH, as a setup action does.
func toolDir(j *jobEnv, name string, tools map[string]string) (string, error) {
	dir := filepath.Join(j.temp, "toolcache", name, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for link, target := range tools {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			return "", err
		}
	}
	j.path = append([]string{dir}, j.path...)
	return dir, nil
}

// goDirective reads the version a go.mod asks for (its toolchain line,
// else its go line).
func goDirective(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	if m := regexp.MustCompile(`(?m)^toolchain go(\S+)`).FindSubmatch(b); m != nil {
		return string(m[1]), nil
	}
	if m := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(b); m != nil {
		return string(m[1]), nil
	}
	return "", fmt.Errorf("%s has no go line", file)
}

// versionAtLeast compares dotted versions numerically.
func versionAtLeast(have, want string) bool {
	h, w := strings.Split(have, "."), strings.Split(want, ".")
	for i := range max(len(h), len(w)) {
		a, b := 0, 0
		if i < len(h) {
			a, _ = strconv.Atoi(h[i])
		}
		if i < len(w) {
			b, _ = strconv.Atoi(w[i])
		}
		if a != b {
			return a > b
		}
	}
	return true
}

// setupGoStandIn is actions/setup-go@v5 with go-version-file: this
// machine's go, when it is at least the version the file asks for.
func setupGoStandIn(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
	allowInputs(j, "actions/setup-go@v5", with, "go-version-file", "cache")
	file := with["go-version-file"]
	if !filepath.IsAbs(file) {
		file = filepath.Join(j.dir, file)
	}
	want, err := goDirective(file)
	if err != nil {
		return nil, err
	}
	goBin, err := toolOnMachine("go")
	if err != nil {
		return nil, err
	}
	out, err := subprocess.Command(ctx, goBin, "env", "GOVERSION").Output()
	if err != nil {
		return nil, err
	}
	have := strings.TrimPrefix(strings.TrimSpace(string(out)), "go")
	if !versionAtLeast(have, want) {
		return nil, fmt.Errorf("go-version-file asks for go %s; this machine has %s", want, have)
	}
	if _, err := toolDir(j, "go", map[string]string{"go": goBin}); err != nil {
		return nil, err
	}
	j.logf("set up go %s (asked: %s)", have, want)
	return map[string]string{"go-version": have}, nil
}

// cacheKeyDir is where the cache stand-ins keep key's directory.
func cacheKeyDir(j *jobEnv, key string) string {
	if j.cache == "" {
		j.t.Fatal("this job has no cache store")
	}
	return filepath.Join(j.cache, base64.RawURLEncoding.EncodeToString([]byte(key)))
}

// copyTree copies the directory src to dst (which must not exist).
func copyTree(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if out, err := subprocess.Command(ctx, "cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v: %s", err, out)
	}
	return nil
}

// cacheRestoreStandIn is actions/cache/restore@v4 for one path and an
// exact key, from the job's cache store.
func cacheRestoreStandIn(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
	allowInputs(j, "actions/cache/restore@v4", with, "path", "key")
	stored := cacheKeyDir(j, with["key"])
	if _, err := os.Stat(stored); errors.Is(err, os.ErrNotExist) {
		j.logf("cache not found for input keys: %s", with["key"])
		return map[string]string{"cache-hit": "false", "cache-primary-key": with["key"]}, nil
	}
	if err := os.RemoveAll(with["path"]); err != nil {
		return nil, err
	}
	if err := copyTree(ctx, stored, with["path"]); err != nil {
		return nil, err
	}
	j.logf("cache restored from key: %s", with["key"])
	return map[string]string{"cache-hit": "true", "cache-primary-key": with["key"], "cache-matched-key": with["key"]}, nil
}

// cacheSaveStandIn is actions/cache/save@v4: a key is saved once (a
// second save of it warns, as the cache service refuses it).
func cacheSaveStandIn(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
	allowInputs(j, "actions/cache/save@v4", with, "path", "key")
	stored := cacheKeyDir(j, with["key"])
	if _, err := os.Stat(stored); err == nil {
		j.logf("::warning::Failed to save: Unable to reserve cache with key %s, another job may be creating this cache.", with["key"])
		return nil, nil
	}
	if err := copyTree(ctx, with["path"], stored); err != nil {
		return nil, err
	}
	j.logf("cache saved with key: %s", with["key"])
	return nil, nil
}

// uploadArtifactStandIn is actions/upload-artifact@v4: it uploads the
// directory at path under name through the same artifact protocol (v4,
// twirp and blocks) to the artifact fake, and sets the action's outputs;
// on GitHub Enterprise Server it fails as the action does.
func uploadArtifactStandIn(art *artifactfake.Server, ghes bool) standIn {
	return func(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
		allowInputs(j, "actions/upload-artifact@v4", with, "name", "path", "if-no-files-found")
		if ghes {
			// what actions/upload-artifact@v4 raises where GITHUB_SERVER_URL is not github.com
			return nil, errors.New("GHESNotSupportedError: @actions/artifact v2.0.0+, upload-artifact@v4+ and download-artifact@v4+ are not currently supported on GHES.")
		}
		path := with["path"]
		if !filepath.IsAbs(path) {
			path = filepath.Join(j.dir, path)
		}
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("if-no-files-found: error: no files at %q: %v", with["path"], err)
		}
		res, err := artifact.Upload(ctx, artifact.Config{
			ResultsURL: art.URL(), RuntimeToken: art.Token(or(j.getenv("GITHUB_RUN_ID"), "1"), "1"),
			ServerURL: "https://github.com", Repository: "octo-org/demo", RunID: or(j.getenv("GITHUB_RUN_ID"), "1"),
		}, with["name"], path)
		if err != nil {
			return nil, err
		}
		return map[string]string{"artifact-id": fmt.Sprint(res.ID), "artifact-url": res.URL}, nil
	}
}
