package githubfake_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPullLifecycle: a pull request opened through the API is listed by
// its head, refused a second time for the same head and base, and edited.
func TestPullLifecycle(t *testing.T) {
	t.Parallel()
	s := start(t)
	type pr struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
		Body   string `json:"body"`
		State  string `json:"state"`
		Head   struct {
			Ref string `json:"ref"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
	}
	steps := []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/repos/o/r/pulls", `{"title":"fix","head":"loop/demo","base":"main","body":"report"}`, 201},
		{"POST", "/repos/o/r/pulls", `{"title":"again","head":"o:loop/demo","base":"main"}`, 422},
		{"POST", "/repos/o/r/pulls", `{"head":"loop/x","base":"main"}`, 422},
		{"POST", "/repos/o/r/pulls", `{"title":"long","head":"loop/x","base":"main","body":"` + strings.Repeat("é", 65537) + `"}`, 422},
		{"PATCH", "/repos/o/r/pulls/2", `{"body":"report 2"}`, 200},
		{"PATCH", "/repos/o/r/pulls/9", `{"body":"nobody"}`, 404},
	}
	for _, st := range steps {
		if got := do(t, s, st.method, st.path, st.body); got.status != st.want {
			t.Errorf("%s %s %s: %d, want %d: %s", st.method, st.path, st.body[:min(len(st.body), 60)], got.status, st.want, got.body)
		}
	}
	got := decode[[]pr](t, do(t, s, "GET", "/repos/o/r/pulls?state=open&head=o:loop/demo", ""))
	want := []pr{{Number: 2, Title: "fix", Body: "report 2", State: "open"}}
	want[0].Head.Ref, want[0].Base.Ref = "loop/demo", "main"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("open pull requests from o:loop/demo (-want +got):\n%s", diff)
	}
	for _, q := range []string{"head=other:loop/demo", "head=o:loop/other", "state=closed"} {
		if got := decode[[]pr](t, do(t, s, "GET", "/repos/o/r/pulls?"+q, "")); len(got) != 0 {
			t.Errorf("%s listed %v", q, got)
		}
	}
	if all := s.Pulls("o", "r"); len(all) != 2 || all[1].Creator != "github-actions[bot]" {
		t.Errorf("pulls: %+v", all)
	}
}
