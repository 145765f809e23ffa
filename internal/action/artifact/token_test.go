package artifact_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/action/artifact"
)

// jwt is a token with payload as its claims.
func jwt(payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(payload)) + ".c2ln"
}

func TestBackendIDs(t *testing.T) {
	t.Parallel()
	padded := "aGVhZA." + base64.URLEncoding.EncodeToString([]byte(`{"scp":"Actions.Results:r:j"}`)) + "." // one "=" of padding
	tests := []struct {
		name, token, run, job, wantErr string
	}{
		{"good", jwt(`{"scp":"Actions.ExampleScope Actions.Results:run-1:job-2"}`), "run-1", "job-2", ""},
		{"only scope", jwt(`{"scp":"Actions.Results:7:8","ac":"[]"}`), "7", "8", ""},
		{"padded payload", padded, "r", "j", ""},
		{"missing scope", jwt(`{"scp":"Actions.ExampleScope Actions.Cache:a:b"}`), "", "", "runtime token has no Actions.Results scope"},
		{"no scp", jwt(`{"sub":"x"}`), "", "", "runtime token has no Actions.Results scope"},
		{"scope with two parts", jwt(`{"scp":"Actions.Results:run"}`), "", "", "scope Actions.Results is malformed"},
		{"scope with four parts", jwt(`{"scp":"Actions.Results:a:b:c"}`), "", "", "scope Actions.Results is malformed"},
		{"scope with empty job", jwt(`{"scp":"Actions.Results:a:"}`), "", "", "scope Actions.Results is malformed"},
		{"payload not base64", "aGVhZA.!!!.c2ln", "", "", "payload is not base64url"},
		{"payload not JSON", "aGVhZA." + base64.RawURLEncoding.EncodeToString([]byte("scp")) + ".", "", "", "not a JSON object"},
		{"scp not a string", jwt(`{"scp":["Actions.Results:a:b"]}`), "", "", "not a JSON object with a string scp"},
		{"two parts", "aGVhZA.cGF5bG9hZA", "", "", "2 dot-separated parts, want 3"},
		{"four parts", "a.b.c.d", "", "", "4 dot-separated parts, want 3"},
		{"opaque", "ghs_secretsecret", "", "", "1 dot-separated parts, want 3"},
		{"empty", "", "", "", "runtime token (ACTIONS_RUNTIME_TOKEN) is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run, job, err := artifact.BackendIDs(tt.token)
			msg := ""
			if err != nil {
				msg = err.Error()
				if tt.token != "" && strings.Contains(msg, tt.token) {
					t.Errorf("error %q quotes the token", msg)
				}
			}
			if tt.wantErr == "" && msg != "" || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("error %q, want one saying %q", msg, tt.wantErr)
			}
			if diff := cmp.Diff([2]string{tt.run, tt.job}, [2]string{run, job}); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, wantErr string
	}{
		{"loop-success", ""},
		{"my loop (run 3) ✓", ""},
		{"", "artifact name is empty"},
		{`a"b`, `artifact name "a\"b" contains "\""`},
		{"a:b", `contains ":"`},
		{"a<b", `contains "<"`},
		{"a>b", `contains ">"`},
		{"a|b", `contains "|"`},
		{"a*b", `contains "*"`},
		{"a?b", `contains "?"`},
		{"a\rb", `contains "\r"`},
		{"a\nb", `contains "\n"`},
		{`a\b`, `contains "\\"`},
		{"a/b", `contains "/"`},
	}
	for _, tt := range tests {
		err := artifact.ValidName(tt.name)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if tt.wantErr == "" && msg != "" || !strings.Contains(msg, tt.wantErr) {
			t.Errorf("ValidName(%q) = %q, want an error saying %q", tt.name, msg, tt.wantErr)
		}
	}
}
