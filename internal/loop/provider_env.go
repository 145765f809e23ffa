package loop

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/loop-action/loop-action/internal/secret"
)

// EnvSetting is a provider's env key in either of its forms: an array of
// the names of variables the agent needs from the runner's environment
// (checked before a run, their values masked), or a table of names and the
// values to set in the agent's environment (a gateway's base URL, a CLI's
// switch). It decodes into Provider.Env and Provider.EnvValues.
type EnvSetting struct {
	Names  []string
	Values map[string]string
	err    error
}

// errEnvForm marks an env key of neither form.
var errEnvForm = errors.New("env must be an array of variable names or a table of names and string values")

// UnmarshalTOML records either form; anything else is kept as an error for
// Validate to report at the key.
func (e *EnvSetting) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case []any:
		e.Names = []string{}
		for _, n := range v {
			s, ok := n.(string)
			if !ok {
				e.err = errEnvForm
				return nil
			}
			e.Names = append(e.Names, s)
		}
	case map[string]any:
		e.Values = map[string]string{}
		for k, val := range v {
			s, ok := val.(string)
			if !ok {
				e.err = fmt.Errorf("the value of %s must be a string, not %v", k, val)
				return nil
			}
			e.Values[k] = s
		}
	default:
		e.err = errEnvForm
	}
	return nil
}

// JSONSchema describes both forms.
func (EnvSetting) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: "Environment variables: an array of the names the agent needs from the runner's environment (checked before a run, masked in every output), or a table of names and values set in the agent's environment.",
		OneOf: []*jsonschema.Schema{
			{Type: "array", Items: &jsonschema.Schema{Type: "string", Pattern: envRE.String()}},
			{Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"},
				PropertyNames: &jsonschema.Schema{Pattern: envRE.String()}},
		},
	}
}

// reservedEnv are the variables the runner sets for every agent call itself
// (the LOOP_* variables and the call's private temporary directory), which
// an env table cannot set.
var reservedEnv = []string{"LOOP_RUN_ID", "LOOP_ITERATION", "LOOP_NODE", "LOOP_ROOT", "LOOP_HISTORY_FILE", "TMPDIR", "TMP", "TEMP"}

// SecretEnvValues are the values of p's env table that look like secrets
// (secret.Looks), by name: they are masked like the values of env variables.
func (p Provider) SecretEnvValues() map[string]string {
	out := map[string]string{}
	for k, v := range p.EnvValues {
		if secret.Looks(k, v) {
			out[k] = v
		}
	}
	return out
}

// EnvList is p's env table as NAME=value entries, sorted by name.
func (p Provider) EnvList() []string {
	out := make([]string, 0, len(p.EnvValues))
	for _, k := range slices.Sorted(maps.Keys(p.EnvValues)) {
		out = append(out, k+"="+p.EnvValues[k])
	}
	return out
}

// providerEnv checks a provider's env key, in either form.
func (v *validator) providerEnv(name string, p Provider) {
	at := providerPath(name, "env")
	if p.EnvKey.err != nil {
		v.errorf(at, "provider %q: %s", name, p.EnvKey.err)
		return
	}
	for _, e := range p.Env {
		if !envRE.MatchString(e) {
			v.errorf(at, "provider %q: %q is not an environment variable name", name, e)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.EnvValues)) {
		val, where := p.EnvValues[k], []string{providerPath(name, "env", k), at}
		switch {
		case !envRE.MatchString(k):
			v.report(Error, where, "provider %q: %q is not an environment variable name", name, k)
		case slices.Contains(reservedEnv, k):
			v.report(Error, where, "provider %q: env cannot set %s: the runner sets it for every call", name, k)
		case strings.ContainsRune(val, 0):
			v.report(Error, where, "provider %q: the value of %s holds a NUL byte", name, k)
		case secret.Looks(k, val):
			v.report(Warning, where, "provider %q: the value of %s looks like a secret: it is masked in every output, but anyone who can read the config can read it; set it in the runner's environment instead", name, k)
		}
	}
}

// providerArgs checks a provider's args: extra arguments after its
// command's (and tier's) arguments.
func (v *validator) providerArgs(name string, p Provider) {
	for _, a := range p.Args {
		if a == "" || strings.ContainsRune(a, 0) {
			v.errorf(providerPath(name, "args"), "provider %q: args must not hold an empty argument or a NUL byte", name)
			return
		}
	}
}

// providerWatch checks what ends a call early: idle_timeout and
// auth_failure.
func (v *validator) providerWatch(name string, p Provider) {
	if p.IdleTimeout.IsSet() {
		at := providerPath(name, "idle_timeout")
		if pr := p.IdleTimeout.problem(); pr != "" {
			v.errorf(at, "provider %q: idle_timeout %s %s", name, p.IdleTimeout.shown(), pr)
		} else if p.Timeout.Duration > 0 && p.IdleTimeout.Duration >= p.Timeout.Duration {
			v.report(Warning, []string{at, providerPath(name, "timeout")},
				"provider %q: idle_timeout %s is not shorter than timeout %s, so it never ends a call", name, p.IdleTimeout.shown(), p.Timeout.shown())
		}
	}
	if p.AuthFailure != "" {
		if _, err := regexp.Compile(p.AuthFailure); err != nil {
			v.errorf(providerPath(name, "auth_failure"), "provider %q: auth_failure: %v", name, err)
		}
	}
}
