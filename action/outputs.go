package action

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/gate"
	"github.com/loop-action/loop-action/runner"
)

// delimiter is the fixed delimiter go-githubactions writes multi-line
// file-command values with: a value containing it could inject outputs.
const delimiter = "_GitHubActionsFileCommandDelimeter_"

// output sets one output, when the runner gave an output file and the value
// cannot inject another.
func (j *job) output(name, value string) {
	if j.env.Getenv("GITHUB_OUTPUT") == "" {
		return
	}
	if strings.Contains(value, delimiter) {
		j.a.Warningf("output %s not set: its value holds the file-command delimiter", name)
		return
	}
	j.a.SetOutput(name, value)
}

// outputs sets every output of action.yml.
func (j *job) outputs(s *session, out runner.Outcome, r Report) {
	satisfied, blocking := gate.Blocking(out.Verdicts)
	export := ""
	if out.ExportPath != "" {
		export = out.ExportPath
		if rel, err := filepath.Rel(j.workspace, out.ExportPath); err == nil {
			export = filepath.ToSlash(rel)
		}
	}
	for _, o := range [][2]string{
		{"success", fmt.Sprint(out.Success)},
		{"stop-reason", string(out.Status)},
		{"run-id", out.RunID},
		{"iterations", fmt.Sprint(out.Iteration)},
		{"tokens", fmt.Sprint(out.Spend.Tokens)},
		{"cost-usd", fmt.Sprintf("%.4f", out.Spend.CostUSD)},
		{"export-path", export},
		{"artifact-url", r.ArtifactURL},
		{"summary", fmt.Sprintf("loop %s: %s after %d of %d iterations; %d of %d blocking goals satisfied",
			s.cfg.Name, out.Status, out.Iteration, out.MaxIterations, satisfied, blocking)},
	} {
		j.output(o[0], o[1])
	}
}
