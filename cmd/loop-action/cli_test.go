package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/action"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{nil, exitSuccess},
		{exitCodeError(exitUnsuccessful), exitUnsuccessful},
		{fmt.Errorf("wrapped: %w", exitCodeError(exitAwaitingReview)), exitAwaitingReview},
		{&loop.ConfigError{}, exitUsage},
		{fmt.Errorf("load: %w", &loop.ConfigError{}), exitUsage},
		{&usageError{errors.New("no config")}, exitUsage},
		{errors.New("disk on fire"), exitInternal},
		{reportedError{&action.UsageError{Err: errors.New("event \"push\" is not handled")}}, exitUsage},
		{reportedError{fmt.Errorf("job: %w", &loop.ConfigError{})}, exitUsage},
		{reportedError{action.ErrUnsuccessful}, exitUnsuccessful},
		{reportedError{fmt.Errorf("load checkpoint %q: %w", "demo/pr-7", state.ErrRefusedBranch)}, exitUsage},
		{reportedError{errors.New("push the state branch: refused")}, exitInternal},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestRunHelpAndUsage(t *testing.T) {
	t.Parallel()
	const hint = "run 'loop-action --help' for usage"
	tests := []struct {
		args       []string
		want       int
		wantStderr string
	}{
		{[]string{"--help"}, exitSuccess, ""},
		{[]string{"validate", "--help"}, exitSuccess, ""},
		{[]string{"nope"}, exitUsage, hint},
		{[]string{}, exitUsage, hint},
		// The store flags belong to the commands that open a store.
		{[]string{"version", "--state=nonsense"}, exitUsage, "unknown flag --state"},
		{[]string{"--state", "dir:x", "version"}, exitUsage, "unknown flag --state"},
		{[]string{"gate", "--remote", "origin"}, exitUsage, "unknown flag --remote"},
		{[]string{"plan", "--token", "t"}, exitUsage, hint},
		{[]string{"status", "--state=nonsense"}, exitUsage, `--state: state store "nonsense": want dir:PATH or branch:NAME`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		got := run(context.Background(), tt.args, env{lookup: noEnv, wd: t.TempDir()}, nil, &out, &errOut)
		if got != tt.want || !strings.Contains(errOut.String(), tt.wantStderr) {
			t.Errorf("run %q = %d, want %d with %q\nstdout: %s\nstderr: %s", tt.args, got, tt.want, tt.wantStderr, &out, &errOut)
		}
	}
}

// TestReviewWaitsForTheLock: review decides under the run's lock, as run
// and resume do: while another process holds the run it fails with exit 2
// and records nothing.
func TestReviewWaitsForTheLock(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	config := "name = \"reviewed\"\n[stop]\nmax_iterations = 1\n[providers.a]\ncommand = [\"true\"]\n" +
		"[[node]]\nname = \"fixer\"\nprovider = \"a\"\ngoals = [\"ship\"]\n" +
		"[[goal]]\nname = \"ship\"\n  [[goal.check]]\n  type = \"manual\"\n"
	if err := os.WriteFile(filepath.Join(root, "loop.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := store.Lock("reviewed/local")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"review", "approve", "ship", "--run-id", "reviewed/local"}, env{lookup: noEnv, wd: root}, nil, &out, &errOut)
	if code != exitUsage || !strings.Contains(errOut.String(), `run "reviewed/local" is in use by another loop-action process`) {
		t.Errorf("review of a held run = %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, &out, &errOut)
	}
}
