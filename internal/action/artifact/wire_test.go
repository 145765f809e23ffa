package artifact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithQuery(t *testing.T) {
	t.Parallel()
	tests := []struct{ signed, want string }{
		{"https://blob.example/c/a.zip?sv=2020&sig=ab%2Bc%3D", "https://blob.example/c/a.zip?sv=2020&sig=ab%2Bc%3D&comp=block"},
		{"https://blob.example/c/a.zip", "https://blob.example/c/a.zip?comp=block"},
		{"https://blob.example/c/a.zip?", "https://blob.example/c/a.zip?comp=block"},
		{"http://127.0.0.1:8080/upload?sig=x#frag", "http://127.0.0.1:8080/upload?sig=x&comp=block#frag"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.signed)
		if err != nil {
			t.Fatal(err)
		}
		if got := withQuery(u, "comp=block"); got != tt.want {
			t.Errorf("withQuery(%q) = %q, want %q", tt.signed, got, tt.want)
		}
	}
}

func TestBlockIDs(t *testing.T) {
	t.Parallel()
	first, last := blockID(0), blockID(maxBlocks-1)
	if len(first) != len(last) {
		t.Errorf("block ids %q and %q differ in length", first, last)
	}
	raw, err := base64.StdEncoding.DecodeString(last)
	if err != nil || len(raw) > 64 {
		t.Errorf("block id %q is not base64 of at most 64 bytes: %v", last, err)
	}
}

func TestFinalizeResponse(t *testing.T) {
	t.Parallel()
	tests := map[string]int64{
		`{"ok":true,"artifact_id":"4711"}`: 4711,
		`{"ok":true,"artifact_id":4711}`:   4711,
		`{"ok":true,"artifactId":"4711"}`:  4711,
		`{"ok":true,"artifactId":4711}`:    4711,
		`{"ok":true,"artifact_id":null}`:   0,
	}
	for body, want := range tests {
		var resp finalizeResponse
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		if got := int64(max(resp.ID, resp.CamelID)); got != want {
			t.Errorf("decode %s: id %d, want %d", body, got, want)
		}
	}
	var resp finalizeResponse
	if err := json.Unmarshal([]byte(`{"artifact_id":"x"}`), &resp); err == nil {
		t.Error("a non-integer artifact id decoded")
	}
}

func TestRequestJSON(t *testing.T) {
	t.Parallel()
	ids := backendIDs{Run: "r", Job: "j"}
	got := map[string]string{}
	for name, v := range map[string]any{
		"create":   createRequest{backendIDs: ids, Name: "n", Version: 4},
		"retained": createRequest{backendIDs: ids, Name: "n", Version: 4, ExpiresAt: "2030-01-02T03:04:05Z"},
		"finalize": finalizeRequest{backendIDs: ids, Name: "n", Size: 1 << 40, Hash: "sha256:ab"},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(b)
	}
	want := map[string]string{
		"create":   `{"workflow_run_backend_id":"r","workflow_job_run_backend_id":"j","name":"n","version":4}`,
		"retained": `{"workflow_run_backend_id":"r","workflow_job_run_backend_id":"j","name":"n","expires_at":"2030-01-02T03:04:05Z","version":4}`,
		"finalize": `{"workflow_run_backend_id":"r","workflow_job_run_backend_id":"j","name":"n","size":"1099511627776","hash":"sha256:ab"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request JSON (-want +got):\n%s", diff)
	}
}

func TestHideURL(t *testing.T) {
	t.Parallel()
	err := hideURL(&url.Error{Op: "Put", URL: "https://blob.example/a.zip?sig=SECRET&comp=block", Err: errors.New("reset")})
	if want := `Put "https://blob.example/a.zip": reset`; err.Error() != want {
		t.Errorf("hideURL = %q, want %q", err, want)
	}
}
