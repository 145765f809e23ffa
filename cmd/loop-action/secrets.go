package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	envs "github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/process"
)

// The secrets the Actions runner hands an action in its environment: the
// github-token input (and any other input named like a token), the
// runtime token of the artifact and cache services, and what requests an
// OIDC token. An environment is readable through /proc/PID/environ for as
// long as the process lives, whatever the process does with its copy, so
// at startup loop-action takes them out: it re-executes itself (same pid,
// same arguments) without them, and hands them over through a memory file
// whose descriptor the new image inherits. Only loop-action itself then
// sees them (env.lookup); nothing it starts inherits them (env.vars).

// handoverVar names the variable that tells a re-executed loop-action
// which descriptor holds its secrets; it also stops a second re-execution.
const handoverVar = "LOOP_ACTION_SECRETS_FD"

// maxHandover bounds what is read back from the descriptor.
const maxHandover = 1 << 20

// isSecret reports whether the variable name holds one of the secrets.
func isSecret(name string) bool {
	switch name {
	case "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL":
		return true
	}
	return strings.HasPrefix(name, "INPUT_") && strings.Contains(strings.ToUpper(name), "TOKEN")
}

// secrets are the variables taken out of the environment, name → value.
type secrets map[string]string

// secretsIn picks the secrets out of an environment (KEY=VALUE entries).
func secretsIn(vars []string) secrets {
	s := secrets{}
	for k, v := range envs.Env(vars).All() {
		if isSecret(k) {
			s[k] = v
		}
	}
	return s
}

// encode is the handover format: NUL-terminated KEY=VALUE entries (an
// environment variable can hold neither NUL nor a name with "=").
func (s secrets) encode() []byte {
	var b bytes.Buffer
	for k, v := range s {
		b.WriteString(k + "=" + v + "\x00")
	}
	return b.Bytes()
}

// decodeSecrets reads what encode wrote.
func decodeSecrets(data []byte) (secrets, error) {
	s := secrets{}
	for len(data) > 0 {
		entry, rest, ok := bytes.Cut(data, []byte{0})
		k, v, eq := strings.Cut(string(entry), "=")
		if !ok || !eq || !isSecret(k) {
			return nil, fmt.Errorf("malformed secret handover near %q", k)
		}
		s[k], data = v, rest
	}
	return s, nil
}

// overlay returns e with the secrets visible to lookup and absent from
// vars, the environment children inherit.
func (s secrets) overlay(e env) env {
	if len(s) == 0 {
		return e
	}
	next := e.lookup
	e.lookup = func(k string) (string, bool) {
		if v, ok := s[k]; ok {
			return v, true
		}
		return next(k)
	}
	e.vars = public(e.vars)
	return e
}

// public is vars without the secrets and the handover variable: what
// children may inherit.
func public(vars []string) []string {
	return envs.Env(vars).WithoutFunc(func(k string) bool {
		return isSecret(k) || k == handoverVar
	})
}

// startup prepares the process before any command runs: it takes the
// secrets out of the initial environment (re-executing itself with args,
// which are os.Args, when it has to), guards the process (process.Guard:
// children can neither outlive their run nor read this process), and
// returns the environment the commands see.
func startup(args []string) (env, error) {
	s, err := takeSecrets(args)
	if err != nil {
		return env{}, err
	}
	if err := process.Guard(); err != nil {
		return env{}, err
	}
	wd, _ := os.Getwd()
	return s.overlay(env{lookup: os.LookupEnv, vars: os.Environ(), wd: wd}), nil
}
