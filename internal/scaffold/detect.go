package scaffold

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"regexp"
	"strings"
)

// Stack is one toolchain found in a repository.
type Stack struct {
	// Name names the toolchain (go, node, python, rust, make).
	Name string
	// Found is the file that gave it away.
	Found string
	// Test is the command that runs its tests, for sh -c.
	Test string
	// Tests are glob patterns of its test files: a fixer must not weaken
	// them, so the pull-request template protects them.
	Tests []string
	// Setup is the workflow steps (YAML, indented for a job's steps) that
	// put the toolchain and the dependencies on the runner. They never
	// change a tracked file (no lockfile is written).
	Setup string
	// Writes are gitignore patterns of what Setup and Test write into the
	// repository (node_modules/, __pycache__/, target/, a lockfile the
	// repository does not hold). The workflow appends each to
	// .git/info/exclude, which the loop's snapshot honours, unless it
	// matches a tracked file: otherwise they would make the workspace
	// differ from the pull request's head before the loop starts, and
	// land in the snapshot and the delivered commit.
	Writes []string
}

// npmNoTest is what npm init writes as the test script: a failure, not a
// test suite.
const npmNoTest = "no test specified"

// detectors run in this order; the first stack found is the primary one.
var detectors = []func(fs.FS) (Stack, bool){detectGo, detectNode, detectPython, detectRust, detectMake}

// Detect returns the toolchains found at the root of fsys, in the order
// go, node, python, rust; a Makefile's test target only when none of those
// was found (it usually wraps them).
func Detect(fsys fs.FS) []Stack {
	var found []Stack
	for _, d := range detectors {
		s, ok := d(fsys)
		if !ok || (s.Name == "make" && len(found) > 0) {
			continue
		}
		found = append(found, s)
	}
	return found
}

// exists reports whether name is a regular file (never a FIFO, which would
// block a read).
func exists(fsys fs.FS, name string) bool {
	fi, err := fs.Stat(fsys, name)
	return err == nil && fi.Mode().IsRegular()
}

func detectGo(fsys fs.FS) (Stack, bool) {
	return Stack{Name: "go", Found: "go.mod", Test: "go test ./...", Tests: []string{"**/*_test.go", "**/testdata/**"},
		Setup: uses("actions/setup-go@v5", "go-version-file: go.mod")}, exists(fsys, "go.mod")
}

func detectNode(fsys fs.FS) (Stack, bool) {
	if !exists(fsys, "package.json") {
		return Stack{}, false
	}
	data, err := fs.ReadFile(fsys, "package.json")
	if err != nil {
		return Stack{}, false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return Stack{}, false
	}
	script, ok := pkg.Scripts["test"]
	if !ok || strings.Contains(script, npmNoTest) {
		return Stack{}, false
	}
	// Each install leaves the lockfile as it is: npm install without one
	// would write package-lock.json, yarn and pnpm would rewrite theirs.
	runner, install := "npm", "npm install --no-package-lock"
	writes := []string{"/node_modules/"}
	switch {
	case exists(fsys, "pnpm-lock.yaml"):
		runner, install = "pnpm", "corepack enable && pnpm install --frozen-lockfile"
	case exists(fsys, "yarn.lock"):
		runner, install = "yarn", "corepack enable && yarn install --frozen-lockfile"
		writes = append(writes, "/.pnp.*", "/.yarn/install-state.gz") // Yarn 2 and later
	case exists(fsys, "package-lock.json"):
		install = "npm ci"
	}
	return Stack{Name: "node", Found: "package.json", Test: runner + " test",
		Tests:  []string{"**/*.test.*", "**/*.spec.*", "**/__tests__/**"},
		Setup:  uses("actions/setup-node@v4", "node-version: lts/*") + run(install),
		Writes: writes}, true
}

func detectPython(fsys fs.FS) (Stack, bool) {
	for _, f := range []string{"pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "setup.py"} {
		if exists(fsys, f) {
			return Stack{Name: "python", Found: f, Test: "python -m pytest",
				Tests:  []string{"**/test_*.py", "**/*_test.py", "**/conftest.py"},
				Setup:  uses("actions/setup-python@v5", "python-version: '3.x'") + run(pythonInstall(fsys)),
				Writes: []string{"__pycache__/", "*.egg-info/", "/.pytest_cache/"}}, true
		}
	}
	return Stack{}, false
}

func detectRust(fsys fs.FS) (Stack, bool) {
	return Stack{Name: "rust", Found: "Cargo.toml", Test: "cargo test", Tests: []string{"tests/**", "**/tests/**"},
		Writes: []string{"/target/", "/Cargo.lock"}}, exists(fsys, "Cargo.toml")
}

// makeTest matches a Makefile rule for the target test.
var makeTest = regexp.MustCompile(`^test\s*:([^=]|$)`)

func detectMake(fsys fs.FS) (Stack, bool) {
	for _, f := range []string{"Makefile", "makefile", "GNUmakefile"} {
		if !exists(fsys, f) {
			continue
		}
		file, err := fsys.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		found := false
		for sc.Scan() && !found {
			found = makeTest.MatchString(sc.Text())
		}
		_ = file.Close()
		if found {
			return Stack{Name: "make", Found: f, Test: "make test"}, true
		}
	}
	return Stack{}, false
}

// pythonInstall installs pytest and the project's dependencies.
func pythonInstall(fsys fs.FS) string {
	cmd := "python -m pip install pytest"
	switch {
	case exists(fsys, "requirements.txt"):
		cmd += " -r requirements.txt"
	case exists(fsys, "pyproject.toml") || exists(fsys, "setup.py"):
		cmd += " -e ."
	}
	return cmd
}

// uses is a workflow step that uses an action with one input.
func uses(action, with string) string {
	return "      - uses: " + action + "\n        with:\n          " + with + "\n"
}

// run is a workflow step that runs a command.
func run(cmd string) string { return "      - run: " + cmd + "\n" }
