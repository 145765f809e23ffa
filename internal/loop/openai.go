package loop

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	"golang.org/x/net/http/httpguts"
)

// DefaultOpenAIBaseURL is where a provider of type "openai" sends its
// requests when base_url is unset.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI holds the keys of a provider of type "openai": an endpoint of the
// OpenAI-compatible Chat Completions API. Its tiers map each tier to a
// one-element list naming the model of that tier.
type OpenAI struct {
	BaseURL   string            `toml:"base_url" json:"base_url,omitempty" jsonschema:"default=https://api.openai.com/v1" jsonschema_description:"openai: the API's base URL (OpenAI, Azure, OpenRouter, LiteLLM, vLLM, Ollama…)."`
	Model     string            `toml:"model" json:"model,omitempty" jsonschema_description:"openai: the model of the standard tier; tiers.<tier> = [\"<model>\"] names the others."`
	APIKeyEnv string            `toml:"api_key_env" json:"api_key_env,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_description:"openai: the environment variable holding the API key, sent as a bearer token; checked before a run and masked like env."`
	Headers   map[string]string `toml:"headers" json:"headers,omitempty" jsonschema_description:"openai: extra HTTP headers of every request (e.g. HTTP-Referer and X-Title for OpenRouter); not masked, so never a key, and never Authorization."`
}

// ModelFor returns the model an openai provider uses on a tier: the tier's
// one-element list, else the provider's model.
func (p Provider) ModelFor(tier string) string {
	if m := p.Tiers[tier]; len(m) == 1 {
		return m[0]
	}
	return p.Model
}

// openAIDefaults fills in the defaults of an openai provider. Its key
// variable joins env, so that it is checked before a run and masked
// wherever env is.
func (p Provider) openAIDefaults() Provider {
	p.BaseURL = cmp.Or(p.BaseURL, DefaultOpenAIBaseURL)
	if !p.Timeout.IsSet() {
		p.Timeout = D(DefaultProviderTimeout)
	}
	if envRE.MatchString(p.APIKeyEnv) && !slices.Contains(p.Env, p.APIKeyEnv) {
		p.Env = append(slices.Clone(p.Env), p.APIKeyEnv)
	}
	return p
}

// notOpenAI refuses the openai keys in a provider of another type.
func (v *validator) notOpenAI(name string, p Provider) {
	for key, set := range map[string]bool{"base_url": p.BaseURL != "", "model": p.Model != "", "api_key_env": p.APIKeyEnv != "", "headers": len(p.Headers) > 0} {
		if set {
			v.errorf(providerPath(name, key), "provider %q: %s is a key of type = \"openai\", not of type %q", name, key, p.Type)
		}
	}
}

// openAI checks a provider of type "openai".
func (v *validator) openAI(name string, p Provider) {
	at := func(key string) string { return providerPath(name, key) }
	for key, set := range map[string]bool{"command": len(p.Command) > 0, "prompt": p.Prompt != "", "usage": p.Usage != "",
		"args": len(p.Args) > 0, "idle_timeout": p.IdleTimeout.IsSet(), "auth_failure": p.AuthFailure != ""} {
		if set {
			v.errorf(at(key), "provider %q: %s is a key of type = \"command\"; type = \"openai\" sends the prompt to the API and reads usage from its reply", name, key)
		}
	}
	if strings.TrimSpace(p.Model) == "" {
		v.report(Error, []string{at("model"), at("type")}, "provider %q needs a model, e.g. model = \"gpt-4.1\"", name)
	}
	if msg := baseURLProblem(p.BaseURL); msg != "" {
		v.errorf(at("base_url"), "provider %q: base_url %q %s", name, p.BaseURL, msg)
	}
	if p.APIKeyEnv != "" && !envRE.MatchString(p.APIKeyEnv) {
		v.errorf(at("api_key_env"), "provider %q: %q is not an environment variable name", name, p.APIKeyEnv)
	}
	if p.EnvValues != nil {
		v.errorf(at("env"), "provider %q: an env table sets an agent CLI's environment; type = \"openai\" runs none, so env lists variable names only", name)
	}
	v.openAIHeaders(name, p.Headers)
	for _, t := range slices.Sorted(maps.Keys(p.Tiers)) {
		if m := p.Tiers[t]; slices.Contains(TierLadder, t) && (len(m) != 1 || strings.TrimSpace(m[0]) == "") {
			v.errorf(providerPath(name, "tiers", t), "provider %q: tier %q of an openai provider names one model, e.g. [\"gpt-4.1-mini\"]", name, t)
		}
	}
}

// baseURLProblem says why base_url cannot be used, or "".
func baseURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must start with https:// (or http:// for a local server)"
	case u.Host == "":
		return "has no host"
	case u.User != nil:
		return "must not carry credentials: name the key's variable in api_key_env"
	}
	return ""
}

func (v *validator) openAIHeaders(name string, headers map[string]string) {
	for _, h := range slices.Sorted(maps.Keys(headers)) {
		at := providerPath(name, "headers", h)
		switch {
		case !httpguts.ValidHeaderFieldName(h):
			v.errorf(at, "provider %q: %q is not an HTTP header name", name, h)
		case http.CanonicalHeaderKey(h) == "Authorization":
			v.errorf(at, "provider %q: the Authorization header comes from api_key_env; a key written in the config is not secret", name)
		case !httpguts.ValidHeaderFieldValue(headers[h]):
			v.errorf(at, "provider %q: header %q has a value that cannot be sent (a line break or control character)", name, h)
		}
	}
}

// JSONSchemaExtend keeps the keys of each provider type to that type: an
// openai provider needs a model and has no command, prompt or usage; a
// command provider has none of the openai keys.
func (Provider) JSONSchemaExtend(s *jsonschema.Schema) {
	none := func(keys ...string) *jsonschema.Schema {
		p := jsonschema.NewProperties()
		for _, k := range keys {
			p.Set(k, jsonschema.FalseSchema)
		}
		return &jsonschema.Schema{Properties: p}
	}
	openai := &jsonschema.Schema{Properties: props("type", &jsonschema.Schema{Const: "openai"}), Required: []string{"type"}}
	then := none("command", "prompt", "usage")
	then.Required = []string{"model"}
	s.AllOf = append(s.AllOf, &jsonschema.Schema{If: openai, Then: then, Else: none("base_url", "model", "api_key_env", "headers")})
}
