// Package openai calls a provider of type "openai": an endpoint of the
// OpenAI-compatible Chat Completions API (OpenAI, Azure, OpenRouter,
// LiteLLM, vLLM, Ollama…), through the official SDK.
//
// It owns one call: the request (model by tier, the prompt as the user
// message, a system message saying how to answer, JSON mode for judges),
// the key taken from the variable api_key_env names in the request's
// environment, the extra headers, the timeout, the retries of 429 and 5xx
// answers honouring Retry-After within the run's wall clock, and the usage
// read from the reply and priced with the provider's price.
//
// It must never read the process environment (the SDK's OPENAI_*
// variables included: the client is built from the config alone), never
// read or write the workspace (the runner applies a builder's edits, see
// package edit), never print anything, and never put the key into an error,
// an answer or anything else it returns. Like a command agent's output, an
// error may quote what the server said; callers mask it before showing it.
package openai

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/loop-action/loop-action/internal/backoff"
	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
	"github.com/loop-action/loop-action/internal/runner/provider"
)

// Client is a provider of type "openai".
type Client struct {
	Name string // the provider's name in the config
	Spec loop.Provider
	// HTTP sends the requests; nil is a client of its own with Go's
	// default transport. Either way no answer is read past MaxReplyBytes.
	HTTP *http.Client
	// Retry is how 429 and 5xx answers are tried again; the zero value is
	// DefaultRetry. Its budget is cut to what is left of ctx's deadline.
	Retry backoff.Policy
}

// DefaultRetry tries a call up to five times, waiting 1s, 2s, 4s, 8s, or
// what a Retry-After header asks for.
var DefaultRetry = backoff.Policy{Tries: 5, First: time.Second, Growth: 2, Cap: 30 * time.Second, Budget: 10 * time.Minute, Jitter: backoff.UpperHalf}

// BuilderSystem tells a builder model how to answer: with SEARCH/REPLACE
// blocks, which the runner applies (package edit).
const BuilderSystem = "You change a repository by answering with edit blocks, and only through them. " +
	"For each change write the file's path (relative to the repository root) on its own line, then:\n\n" +
	"<<<<<<< SEARCH\n<the exact lines of the file to replace, copied character for character>\n=======\n<the lines to put instead>\n>>>>>>> REPLACE\n\n" +
	"The SEARCH text must match the file exactly once; keep it short but unique. " +
	"An empty SEARCH section creates a new file with the REPLACE text. Use several blocks for several changes. " +
	"Paths in .git/ or .loop/, outside the repository, through symbolic links, or protected are refused, and then none of your edits is applied."

// JudgeSystem tells a judge model how to answer.
const JudgeSystem = "You are an independent judge. Answer with one JSON object as the prompt describes, and nothing else."

// Dispatch calls the model as a builder: one request, whose reply is the
// answer (the runner parses its edits).
func (c Client) Dispatch(ctx context.Context, req provider.Request) provider.Response {
	return c.call(ctx, req, false)
}

// Judge calls the model as a judge: one request asking for a JSON object
// (JSON mode); an endpoint that refuses JSON mode with a 400 is asked once
// more without it, and the verdict is then read from the text.
func (c Client) Judge(ctx context.Context, req provider.Request) provider.Response {
	return c.call(ctx, req, true)
}

func (c Client) call(ctx context.Context, req provider.Request, judge bool) provider.Response {
	start := time.Now()
	key, err := c.key(req.Env)
	if err != nil {
		return failed(start, err, true)
	}
	params := c.params(req, judge)
	reply, err := c.send(ctx, key, params)
	if judge && jsonModeRefused(err) && ctx.Err() == nil {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{}
		reply, err = c.send(ctx, key, params)
	}
	if err != nil {
		return c.failure(ctx, start, err)
	}
	return c.response(start, reply)
}

// key is the value of the variable api_key_env names; "" when the
// provider has no api_key_env (a local server).
func (c Client) key(env []string) (string, error) {
	if c.Spec.APIKeyEnv == "" {
		return "", nil
	}
	if v := environ.Env(env).Get(c.Spec.APIKeyEnv); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("provider %q: the environment variable %s (api_key_env) is not set", c.Name, c.Spec.APIKeyEnv)
}

// params is the request for req's tier.
func (c Client) params(req provider.Request, judge bool) openai.ChatCompletionNewParams {
	tier := req.Tier
	if tier == "" {
		tier = loop.TierStandard
	}
	system := BuilderSystem
	if judge {
		system = JudgeSystem
	}
	p := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(c.Spec.ModelFor(tier)),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(req.Prompt)},
	}
	if judge {
		p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	return p
}

// options build the SDK's client from the config alone: no OPENAI_*
// variable of the process reaches it, and it never retries on its own.
func (c Client) options(key string) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithHTTPClient(c.httpClient()),
		option.WithBaseURL(c.Spec.BaseURL),
		option.WithMaxRetries(0),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	for _, h := range slices.Sorted(maps.Keys(c.Spec.Headers)) {
		opts = append(opts, option.WithHeader(h, c.Spec.Headers[h]))
	}
	return opts
}

// send makes the request, retrying 429 and 5xx answers and failed
// connections as c.Retry says, within ctx's deadline.
func (c Client) send(ctx context.Context, key string, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, error) {
	svc := openai.NewChatCompletionService(c.options(key)...)
	return backoff.Do(ctx, c.policy(ctx), func(ctx context.Context) (*openai.ChatCompletion, error) {
		actx, cancel := context.WithTimeout(ctx, c.timeout())
		defer cancel()
		reply, err := svc.New(actx, params)
		return reply, retryable(ctx, err)
	})
}

// policy is c.Retry with its budget cut to what ctx has left.
func (c Client) policy(ctx context.Context) backoff.Policy {
	p := c.Retry
	if p.Tries == 0 {
		p = DefaultRetry
	}
	if deadline, ok := ctx.Deadline(); ok {
		p.Budget = min(p.Budget, max(0, time.Until(deadline)))
	}
	return p
}

func (c Client) timeout() time.Duration {
	if c.Spec.Timeout.Duration > 0 {
		return c.Spec.Timeout.Duration
	}
	return loop.DefaultProviderTimeout
}

// response turns a reply into the answer and its usage.
func (c Client) response(start time.Time, reply *openai.ChatCompletion) provider.Response {
	out := provider.Response{Result: process.Result{Duration: time.Since(start)}, Usage: c.usage(reply.Usage)}
	if len(reply.Choices) == 0 {
		out.Err = fmt.Errorf("provider %q: the reply has no choices", c.Name)
		return out
	}
	out.Answer = reply.Choices[0].Message.Content
	if out.Answer == "" && reply.Choices[0].Message.Refusal != "" {
		out.Err = fmt.Errorf("provider %q: the model refused: %s", c.Name, oneLine(reply.Choices[0].Message.Refusal))
	}
	return out
}

// usage is what the reply says it used, priced with the provider's price.
func (c Client) usage(u openai.CompletionUsage) provider.Usage {
	out := provider.Usage{Input: max(0, u.PromptTokens), Output: max(0, u.CompletionTokens), Total: max(0, u.TotalTokens)}
	if out.Total == 0 {
		out.Total = out.Input + out.Output
	}
	if p := c.Spec.Price; p != nil {
		out.CostUSD = (float64(out.Input)*p.Input + float64(out.Output)*p.Output) / 1e6
		out.CostKnown = true
	}
	return out
}

// failed is the Response of a call that got no reply. A fatal failure (a
// missing or refused key, an unknown model) is a StartErr: the runner ends
// the run at once instead of trying again each iteration.
func failed(start time.Time, err error, fatal bool) provider.Response {
	res := process.Result{Duration: time.Since(start), ExitCode: -1}
	if fatal {
		res.StartErr = err
	}
	return provider.Response{Result: res, Err: err}
}

// failure is the Response of a request that failed.
func (c Client) failure(ctx context.Context, start time.Time, err error) provider.Response {
	if ctx.Err() != nil {
		r := failed(start, fmt.Errorf("provider %q cancelled: %w", c.Name, context.Cause(ctx)), false)
		r.Result.Canceled = true
		return r
	}
	fatal, msg := c.explain(err)
	r := failed(start, msg, fatal)
	var timeout interface{ Timeout() bool }
	r.Result.TimedOut = errors.Is(err, context.DeadlineExceeded) || errors.As(err, &timeout) && timeout.Timeout()
	return r
}
