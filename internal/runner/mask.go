package runner

import (
	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/secret"
)

// Masker returns a function that replaces the values of every variable a
// provider declares in env with "***", so that nothing an agent prints can
// carry a secret into the ledger, the log or a comment. It replaces each
// value in every form it can take in text, raw and encoded, in one pass
// (secret.Mask).
func Masker(cfg *loop.Config, env []string) func(string) string {
	return secret.Mask(Secrets(cfg, env))
}

// Secrets returns the variables that providers declare in env and env
// sets to a value of at least secret.Min bytes, and those of providers'
// env tables whose values look like secrets, sorted by name, each with the
// forms its value can take in text (secret.Append).
func Secrets(cfg *loop.Config, env []string) []secret.Secret {
	names := map[string]bool{}
	for _, p := range cfg.Providers {
		for _, e := range p.Env {
			names[e] = true
		}
	}
	var out []secret.Secret
	for k, v := range environ.Env(env).All() {
		if names[k] {
			out = secret.Append(out, k, v)
		}
	}
	// Values of env tables that look like secrets (secret.Looks).
	for _, p := range cfg.Providers {
		for k, v := range p.SecretEnvValues() {
			out = secret.Append(out, k, v)
		}
	}
	secret.ByName(out)
	return out
}
