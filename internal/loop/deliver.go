package loop

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Deliver says how the GitHub Action delivers the work the gate certified:
// the commit it writes and which paths it never pushes. Where the commit
// goes is the action's input deliver, not the config's.
type Deliver struct {
	Message        string `toml:"message" json:"message,omitempty" jsonschema:"default=loop {loop}: certified at iteration {iteration}" jsonschema_description:"The delivered commit's message. Placeholders: {loop}, {run_id}, {iteration}, {snapshot}. The trailers Loop-Run, Loop-Iteration and Loop-Snapshot are always added."`
	AuthorName     string `toml:"author_name" json:"author_name,omitempty" jsonschema:"default=github-actions[bot]" jsonschema_description:"Author and committer name of the delivered commit."`
	AuthorEmail    string `toml:"author_email" json:"author_email,omitempty" jsonschema:"default=41898282+github-actions[bot]@users.noreply.github.com" jsonschema_description:"Author and committer email of the delivered commit."`
	AllowWorkflows bool   `toml:"allow_workflows" json:"allow_workflows,omitempty" jsonschema_description:"Let a delivery change .github/workflows/** (the push token needs the workflows scope). Off: a certified change there is not pushed."`
	Partial        bool   `toml:"partial" json:"partial,omitempty" jsonschema_description:"When a run stops without success (no-progress, a budget, escalated), push its workspace to the branch loop-partial/<run id> so that its work is not lost."`
}

// Defaults of [deliver]: the commit is the bot's, as a push with
// GITHUB_TOKEN is.
const (
	DefaultDeliverMessage = "loop {loop}: certified at iteration {iteration}"
	DefaultAuthorName     = "github-actions[bot]"
	DefaultAuthorEmail    = "41898282+github-actions[bot]@users.noreply.github.com"
)

// MessagePlaceholders are what deliver.message may name, in braces.
var MessagePlaceholders = []string{"loop", "run_id", "iteration", "snapshot"}

// DeliverTrailers are the trailers the action adds to every commit it
// delivers; the message may not write them itself.
var DeliverTrailers = []string{"Loop-Run", "Loop-Iteration", "Loop-Snapshot"}

var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// CommitMessage is Message with each placeholder replaced by its value in
// values; a placeholder without a value is left as written.
func (d Deliver) CommitMessage(values map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(d.Message, func(m string) string {
		if v, ok := values[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

func (v *validator) deliver() {
	d := v.c.Deliver
	if strings.TrimSpace(d.Message) == "" {
		v.errorf("deliver.message", "deliver.message is empty: it is the message of the commit the action delivers")
	}
	for _, m := range placeholderRE.FindAllStringSubmatch(d.Message, -1) {
		if !slices.Contains(MessagePlaceholders, m[1]) {
			v.errorf("deliver.message", "deliver.message: unknown placeholder %s; the placeholders are {%s}", m[0], strings.Join(MessagePlaceholders, "}, {"))
		}
	}
	for line := range strings.Lines(d.Message) {
		for _, t := range DeliverTrailers {
			if k, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), t) {
				v.errorf("deliver.message", "deliver.message writes the trailer %q, which the action adds itself", t+":")
			}
		}
	}
	if p := identProblem(d.AuthorName); p != "" {
		v.errorf("deliver.author_name", "deliver.author_name %q %s", d.AuthorName, p)
	}
	if p := identProblem(d.AuthorEmail); p != "" {
		v.errorf("deliver.author_email", "deliver.author_email %q %s", d.AuthorEmail, p)
	} else if !strings.Contains(d.AuthorEmail, "@") || strings.ContainsFunc(d.AuthorEmail, unicode.IsSpace) {
		v.errorf("deliver.author_email", "deliver.author_email %q is not an email address (one word with an @)", d.AuthorEmail)
	}
}

// identProblem says why s cannot be a git author's name or email, or "".
func identProblem(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is empty"
	case strings.ContainsAny(s, "<>") || strings.ContainsFunc(s, unicode.IsControl):
		return "holds <, > or a control character, which a git identity cannot"
	}
	return ""
}
