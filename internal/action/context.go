package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sethvargo/go-githubactions"
)

// readContext reads the job's GITHUB_* variables and its event payload.
// The payload is read here rather than by go-githubactions, which takes a
// missing file for an empty event: each way the file can fail is said as
// it is.
func readContext(getenv func(string) string) (*githubactions.GitHubContext, error) {
	withoutEvent := func(k string) string {
		if k == "GITHUB_EVENT_PATH" {
			return ""
		}
		return getenv(k)
	}
	gctx, err := githubactions.New(githubactions.WithGetenv(withoutEvent)).Context()
	if err != nil {
		return nil, fmt.Errorf("read the job's GITHUB_* variables: %w", err)
	}
	if gctx.EventName == "" {
		return nil, errors.New("not in a GitHub Actions job: GITHUB_EVENT_NAME is unset")
	}
	gctx.EventPath = getenv("GITHUB_EVENT_PATH")
	if gctx.Event, err = readEvent(gctx.EventPath); err != nil {
		return nil, err
	}
	return gctx, nil
}

// readEvent reads the event payload, a JSON object.
func readEvent(path string) (map[string]any, error) {
	if path == "" {
		return nil, errors.New("GITHUB_EVENT_PATH is unset: the runner names the event's payload file in it")
	}
	b, err := os.ReadFile(path)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the event file %q (GITHUB_EVENT_PATH) is missing: %w", path, fs.ErrNotExist)
	case errors.As(err, &pe):
		return nil, fmt.Errorf("read the event file %q (GITHUB_EVENT_PATH): %w", path, pe.Err)
	case err != nil:
		return nil, fmt.Errorf("read the event file %q (GITHUB_EVENT_PATH): %w", path, err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, fmt.Errorf("the event file %q (GITHUB_EVENT_PATH) is not a JSON object: %w", path, err)
	}
	if ev == nil {
		return nil, fmt.Errorf("the event file %q (GITHUB_EVENT_PATH) holds no event", path)
	}
	return ev, nil
}
