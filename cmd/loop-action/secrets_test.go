package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsSecret(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"INPUT_GITHUB-TOKEN":             true,
		"INPUT_APP-TOKEN":                true,
		"INPUT_token":                    true,
		"ACTIONS_RUNTIME_TOKEN":          true,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
		"ACTIONS_ID_TOKEN_REQUEST_URL":   true,
		"INPUT_CONFIG":                   false,
		"GITHUB_TOKEN":                   false, // the CLI's --state token: the user's own
		"ACTIONS_RESULTS_URL":            false,
		"TOKEN":                          false,
	} {
		if got := isSecret(name); got != want {
			t.Errorf("isSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSecretsHandoverFormat(t *testing.T) {
	t.Parallel()
	s := secretsIn([]string{"INPUT_GITHUB-TOKEN=ghs_a=b", "HOME=/root", "ACTIONS_RUNTIME_TOKEN=", "ACTIONS_ID_TOKEN_REQUEST_URL=https://x/?a=1&b=2"})
	want := secrets{"INPUT_GITHUB-TOKEN": "ghs_a=b", "ACTIONS_RUNTIME_TOKEN": "", "ACTIONS_ID_TOKEN_REQUEST_URL": "https://x/?a=1&b=2"}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("secretsIn (-want +got):\n%s", diff)
	}
	got, err := decodeSecrets(s.encode())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"HOME=/\x00", "INPUT_GITHUB-TOKEN=x", "INPUT_GITHUB-TOKEN\x00"} {
		if _, err := decodeSecrets([]byte(bad)); err == nil {
			t.Errorf("decodeSecrets(%q) = nil error", bad)
		}
	}
}

// TestOverlay: loop-action sees the secrets; what it passes its children
// does not hold them.
func TestOverlay(t *testing.T) {
	t.Parallel()
	base := env{
		lookup: func(k string) (string, bool) { return map[string]string{"HOME": "/h"}[k], k == "HOME" },
		vars:   []string{"HOME=/h", "INPUT_GITHUB-TOKEN=ghs_a", handoverVar + "=3", "PATH=/bin"},
	}
	e := secrets{"INPUT_GITHUB-TOKEN": "ghs_a", "ACTIONS_RUNTIME_TOKEN": "eyJb"}.overlay(base)
	for k, want := range map[string]string{"INPUT_GITHUB-TOKEN": "ghs_a", "ACTIONS_RUNTIME_TOKEN": "eyJb", "HOME": "/h"} {
		if got, ok := e.lookup(k); !ok || got != want {
			t.Errorf("lookup(%q) = %q, %v; want %q", k, got, ok, want)
		}
	}
	if diff := cmp.Diff([]string{"HOME=/h", "PATH=/bin"}, slices.Clone(e.vars)); diff != "" {
		t.Errorf("vars (-want +got):\n%s", diff)
	}
}
