package runner

import (
	"strings"

	"github.com/loop-action/loop-action/loop"
)

// Masker returns a function that replaces the values of every variable a
// provider declares in env with "***", so that nothing an agent prints can
// carry a secret into the ledger, the log or a comment.
func Masker(cfg *loop.Config, env []string) func(string) string {
	names := map[string]bool{}
	for _, p := range cfg.Providers {
		for _, e := range p.Env {
			names[e] = true
		}
	}
	var pairs []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && names[k] && len(v) >= 4 {
			pairs = append(pairs, v, "***")
		}
	}
	if len(pairs) == 0 {
		return func(s string) string { return s }
	}
	return strings.NewReplacer(pairs...).Replace
}
