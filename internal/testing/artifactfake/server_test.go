package artifactfake_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/testing/artifactfake"
)

const (
	runID = "run-1"
	jobID = "job-1"
)

// env is a server, a token for runID/jobID, and a created artifact.
type env struct {
	t      *testing.T
	srv    *artifactfake.Server
	token  string
	signed string // signed upload URL of artifact "a"
}

func newEnv(t *testing.T, opts ...artifactfake.Option) *env {
	t.Helper()
	srv := artifactfake.New(opts...)
	t.Cleanup(srv.Close)
	e := &env{t: t, srv: srv, token: srv.Token(runID, jobID)}
	status, body := e.twirp("CreateArtifact", e.token, create("a"))
	if status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	var resp struct {
		Snake string `json:"signed_upload_url"`
		Camel string `json:"signedUploadUrl"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	e.signed = resp.Snake + resp.Camel
	return e
}

func create(name string) string {
	return fmt.Sprintf(`{"workflow_run_backend_id":%q,"workflow_job_run_backend_id":%q,"name":%q,"version":4}`, runID, jobID, name)
}

func finalize(name string, size string, hash string) string {
	return fmt.Sprintf(`{"workflow_run_backend_id":%q,"workflow_job_run_backend_id":%q,"name":%q,"size":%s,"hash":%q}`,
		runID, jobID, name, size, hash)
}

func (e *env) do(req *http.Request) (int, string) {
	e.t.Helper()
	resp, err := testClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *env) twirp(method, token, body string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL()+"twirp/github.actions.results.api.v1.ArtifactService/"+method, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return e.do(req)
}

// put sends a blob request: query is appended to the signed URL; header
// "-" values delete the header.
func (e *env) put(signed, query, body string, header map[string]string) (int, string) {
	e.t.Helper()
	target := signed
	if query != "" {
		target += "&" + query
	}
	req, _ := http.NewRequest(http.MethodPut, target, strings.NewReader(body))
	req.Header.Set("x-ms-version", "2020-10-02")
	for k, v := range header {
		if v == "-" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return e.do(req)
}

func blockList(ids ...string) string {
	return `<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>` + strings.Join(ids, "</Latest><Latest>") + `</Latest></BlockList>`
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, camel := range []bool{false, true} {
		t.Run(fmt.Sprint("camel=", camel), func(t *testing.T) {
			t.Parallel()
			var opts []artifactfake.Option
			if camel {
				opts = append(opts, artifactfake.CamelCase())
			}
			e := newEnv(t, opts...)
			// Staged out of order, committed in list order.
			e.put(e.signed, "comp=block&blockid=QkJC", "world", nil)
			e.put(e.signed, "comp=block&blockid=QUFB", "hello ", nil)
			if status, body := e.put(e.signed, "comp=blocklist", blockList("QUFB", "QkJC"), map[string]string{"x-ms-blob-content-type": "zip"}); status != http.StatusCreated {
				t.Fatalf("block list: %d %s", status, body)
			}
			status, body := e.twirp("FinalizeArtifact", e.token, finalize("a", `"11"`, hash("hello world")))
			wantBody := `{"artifact_id":"1000","ok":true}` + "\n"
			if camel {
				wantBody = `{"artifactId":"1000","ok":true}` + "\n"
			}
			if status != http.StatusOK || body != wantBody {
				t.Errorf("finalize: %d %s, want 200 %s", status, body, wantBody)
			}
			got, _ := e.srv.Artifact("a")
			rec, _ := e.srv.Record("a")
			want := artifactfake.Record{ID: 1000, RunID: runID, JobID: jobID, Name: "a", ContentType: "zip",
				Size: 11, Hash: hash("hello world"), Finalized: true}
			if diff := cmp.Diff(want, rec); diff != "" || string(got) != "hello world" {
				t.Errorf("artifact %q, record (-want +got):\n%s", got, diff)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		call       func(e *env) (int, string)
		wantStatus int
		wantBody   string
	}{
		{"put blob", func(e *env) (int, string) { return e.put(e.signed, "", "zip", nil) },
			400, "UnsupportedOperation"},
		{"append block", func(e *env) (int, string) { return e.put(e.signed, "comp=appendblock", "zip", nil) },
			400, "UnsupportedQueryParameter"},
		{"wrong signature", func(e *env) (int, string) {
			return e.put(strings.Replace(e.signed, "sig=", "sig=0", 1), "comp=block&blockid=QUFB", "x", nil)
		}, 403, "AuthenticationFailed"},
		{"authorization header", func(e *env) (int, string) {
			return e.put(e.signed, "comp=block&blockid=QUFB", "x", map[string]string{"Authorization": "Bearer " + e.token})
		}, 400, "InvalidAuthenticationInfo"},
		{"no x-ms-version", func(e *env) (int, string) {
			return e.put(e.signed, "comp=block&blockid=QUFB", "x", map[string]string{"x-ms-version": "-"})
		}, 400, "MissingRequiredHeader"},
		{"blockid not base64", func(e *env) (int, string) { return e.put(e.signed, "comp=block&blockid=%21", "x", nil) },
			400, "InvalidQueryParameterValue"},
		{"blockids of two lengths", func(e *env) (int, string) {
			e.put(e.signed, "comp=block&blockid=QUFB", "x", nil)
			return e.put(e.signed, "comp=block&blockid=QUFBQQ%3D%3D", "x", nil)
		}, 400, "InvalidBlobOrBlock"},
		{"unknown block in list", func(e *env) (int, string) {
			e.put(e.signed, "comp=block&blockid=QUFB", "x", nil)
			return e.put(e.signed, "comp=blocklist", blockList("QUFB", "QkJC"), nil)
		}, 400, "InvalidBlockList"},
		{"block list not XML", func(e *env) (int, string) { return e.put(e.signed, "comp=blocklist", "QUFB", nil) },
			400, "InvalidXmlDocument"},
		{"no token", func(e *env) (int, string) { return e.twirp("CreateArtifact", "", create("b")) },
			401, `"code":"unauthenticated"`},
		{"token of another server", func(e *env) (int, string) {
			other := artifactfake.New()
			defer other.Close()
			return e.twirp("CreateArtifact", other.Token(runID, jobID), create("b"))
		}, 401, `"code":"unauthenticated"`},
		{"ids of another job", func(e *env) (int, string) {
			return e.twirp("CreateArtifact", e.srv.Token(runID, "job-2"), create("b"))
		}, 403, `"code":"permission_denied"`},
		{"unknown field", func(e *env) (int, string) {
			return e.twirp("CreateArtifact", e.token, strings.Replace(create("b"), `"version"`, `"versio"`, 1))
		}, 400, "unknown field"},
		{"bad name", func(e *env) (int, string) { return e.twirp("CreateArtifact", e.token, create("a/b")) },
			400, "not allowed"},
		{"expiry in the past", func(e *env) (int, string) {
			return e.twirp("CreateArtifact", e.token, strings.Replace(create("b"), `"version"`, `"expires_at":"2001-01-01T00:00:00Z","version"`, 1))
		}, 400, "not a future RFC 3339 time"},
		{"same name in the run", func(e *env) (int, string) { return e.twirp("CreateArtifact", e.token, create("a")) },
			409, `"code":"already_exists"`},
		{"finalize before the block list", func(e *env) (int, string) {
			return e.twirp("FinalizeArtifact", e.token, finalize("a", `"0"`, hash("")))
		}, 412, "no committed block list"},
		{"finalize unknown artifact", func(e *env) (int, string) {
			return e.twirp("FinalizeArtifact", e.token, finalize("b", `"0"`, hash("")))
		}, 404, `"code":"not_found"`},
		{"size as a number", func(e *env) (int, string) { return e.commitAndFinalize(`1`, hash("x")) },
			400, "size must be an int64 in proto3 JSON, a string"},
		{"wrong size", func(e *env) (int, string) { return e.commitAndFinalize(`"2"`, hash("x")) },
			400, "size 2 does not match the 1 bytes uploaded"},
		{"wrong hash", func(e *env) (int, string) { return e.commitAndFinalize(`"1"`, hash("y")) },
			400, "does not match the upload's"},
		{"finalized twice", func(e *env) (int, string) {
			e.commitAndFinalize(`"1"`, hash("x"))
			return e.twirp("FinalizeArtifact", e.token, finalize("a", `"1"`, hash("x")))
		}, 412, "already finalized"},
		{"block after finalize", func(e *env) (int, string) {
			e.commitAndFinalize(`"1"`, hash("x"))
			return e.put(e.signed, "comp=block&blockid=QUFB", "x", nil)
		}, 409, "BlobImmutable"},
		{"injected create fault", func(e *env) (int, string) {
			e.srv.FailNext(artifactfake.Create, 429)
			return e.twirp("CreateArtifact", e.token, create("b"))
		}, 429, `"code":"resource_exhausted"`},
		{"injected block fault", func(e *env) (int, string) {
			e.srv.FailNext(artifactfake.Block, 503)
			return e.put(e.signed, "comp=block&blockid=QUFB", "x", nil)
		}, 503, "InjectedFault"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := tt.call(newEnv(t))
			if status != tt.wantStatus || !strings.Contains(body, tt.wantBody) {
				t.Errorf("got %d %s, want %d and a body with %q", status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// commitAndFinalize uploads "x" as artifact a and finalizes it with size
// and hash.
func (e *env) commitAndFinalize(size, hash string) (int, string) {
	e.put(e.signed, "comp=block&blockid=QUFB", "x", nil)
	e.put(e.signed, "comp=blocklist", blockList("QUFB"), nil)
	return e.twirp("FinalizeArtifact", e.token, finalize("a", size, hash))
}

func TestSameNameInAnotherRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := strings.ReplaceAll(create("a"), runID, "run-2")
	if status, resp := e.twirp("CreateArtifact", e.srv.Token("run-2", jobID), body); status != http.StatusOK {
		t.Errorf("create in another run: %d %s", status, resp)
	}
	if got := e.srv.Calls(artifactfake.Create); got != 2 {
		t.Errorf("%d create calls, want 2", got)
	}
}

func TestFaultsQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.FailNext(artifactfake.Block, 429)
	e.srv.FailNextWith(artifactfake.Block, 503, "busy <now>")
	var got []string
	for range 3 {
		status, body := e.put(e.signed, "comp=block&blockid=QUFB", "x", nil)
		got = append(got, fmt.Sprint(status, strings.Contains(body, "busy &lt;now&gt;")))
	}
	if diff := cmp.Diff([]string{"429 false", "503 true", "201 false"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// testClient has a transport of its own: a parallel test's server Close
// closes http.DefaultTransport's idle connections, which would break
// requests in flight here.
var testClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
