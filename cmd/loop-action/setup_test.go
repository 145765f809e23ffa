//go:build linux

package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// checkoutStandIn is actions/checkout@v4: a git init, a fetch of ref
// (default: GITHUB_REF at GITHUB_SHA) at depth 1 from GITHUB_SERVER_URL with
// the job's token, and a checkout; the token stays in .git/config unless
// persist-credentials is false. token is the job's github.token.
func checkoutStandIn(token string) standIn {
	return func(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
		allowInputs(j, "actions/checkout@v4", with, "ref", "persist-credentials")
		url := j.getenv("GITHUB_SERVER_URL") + "/" + j.getenv("GITHUB_REPOSITORY") + ".git"
		header := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
		ref, sha := with["ref"], j.getenv("GITHUB_SHA")
		fetch, checkout := "", []string{"checkout", "-q", "--force"}
		switch {
		case ref == "":
			branch := strings.TrimPrefix(j.getenv("GITHUB_REF"), "refs/heads/")
			fetch = "+" + sha + ":refs/remotes/origin/" + branch
			checkout = append(checkout, "-B", branch, "refs/remotes/origin/"+branch)
		case regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(ref):
			fetch, checkout = ref, append(checkout, ref)
		case strings.HasPrefix(ref, "refs/"):
			fetch, checkout = "+"+ref+":refs/remotes/"+strings.TrimPrefix(ref, "refs/"), append(checkout, "refs/remotes/"+strings.TrimPrefix(ref, "refs/"))
		default:
			return nil, fmt.Errorf("ref %q: only a commit sha or a full ref is modelled", ref)
		}
		steps := [][]string{
			{"init", "-q"}, {"remote", "add", "origin", url},
			{"-c", "http.extraheader=" + header, "fetch", "-q", "--no-tags", "--depth=1", "origin", fetch}, checkout,
		}
		if with["persist-credentials"] != "false" {
			steps = append(steps, []string{"config", "http." + j.getenv("GITHUB_SERVER_URL") + "/.extraheader", header})
		}
		for _, args := range steps {
			cmd := subprocess.Command(ctx, "git", args...)
			cmd.Dir, cmd.Env = j.dir, gitfake.Env(j.temp)
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git %s: %v\n%s", args[len(args)-1], err, out)
			}
		}
		j.logf("checked out %s", or(ref, j.getenv("GITHUB_REF")))
		return nil, nil
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// setupNodeStandIn is actions/setup-node@v4 with node-version lts/* or a
// major version: this machine's node (an even major is an LTS line), with
// npm, npx and corepack beside it, so that `corepack enable` writes its
// shims into the job's tool cache.
func setupNodeStandIn(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
	allowInputs(j, "actions/setup-node@v4", with, "node-version")
	tools := map[string]string{}
	for _, name := range []string{"node", "npm", "npx", "corepack"} {
		p, err := toolOnMachine(name)
		if err != nil {
			return nil, err
		}
		tools[name] = p
	}
	out, err := subprocess.Command(ctx, tools["node"], "--version").Output()
	if err != nil {
		return nil, err
	}
	have := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.SplitN(have, ".", 2)[0])
	switch want := with["node-version"]; {
	case want == "lts/*" && major%2 == 0:
	case want == strconv.Itoa(major):
	default:
		return nil, fmt.Errorf("node-version %q does not resolve to this machine's node %s", want, have)
	}
	if _, err := toolDir(j, "node", tools); err != nil {
		return nil, err
	}
	j.logf("set up node %s", have)
	return map[string]string{"node-version": "v" + have}, nil
}

// debianPython is the Python the setup-python stand-in uses: Debian's,
// whose python3-pytest .ci/run installs.
const debianPython = "/usr/bin/python3"

// setupPythonStandIn is actions/setup-python@v5 with python-version 3.x:
// a virtual environment of Debian's python3 that sees its packages
// (pytest and pip among them) and that pip may install into, as the runner's
// Python is. PyPI is not reachable here, so pip is told to install from
// what is there: PIP_NO_INDEX=1 and PIP_NO_BUILD_ISOLATION=0 (pip's
// spelling of --no-build-isolation), which leave the job's pip command
// as written.
func setupPythonStandIn(ctx context.Context, j *jobEnv, with map[string]string, _ []string) (map[string]string, error) {
	allowInputs(j, "actions/setup-python@v5", with, "python-version")
	out, err := subprocess.Command(ctx, debianPython, "-c", "import platform; print(platform.python_version())").Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", debianPython, err)
	}
	have := strings.TrimSpace(string(out))
	if want := with["python-version"]; want != "3.x" && !strings.HasPrefix(have, want+".") {
		return nil, fmt.Errorf("python-version %q does not resolve to this machine's python %s", want, have)
	}
	venv := filepath.Join(j.temp, "toolcache", "python")
	// Debian's pip (python3-pip) installs into it: the venv's own copy of
	// pip takes ensurepip seconds per job.
	if out, err := subprocess.Command(ctx, debianPython, "-m", "venv", "--system-site-packages", "--without-pip", venv).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("venv: %v\n%s", err, out)
	}
	j.path = append([]string{filepath.Join(venv, "bin")}, j.path...)
	j.env = append(j.env, "PIP_NO_INDEX=1", "PIP_NO_BUILD_ISOLATION=0", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	j.logf("set up python %s (pip installs only what this machine has: PIP_NO_INDEX=1, PIP_NO_BUILD_ISOLATION=0)", have)
	return map[string]string{"python-version": have}, nil
}
