package artifactfake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// servicePath is the twirp route of the results service's artifact API.
const servicePath = "/twirp/github.actions.results.api.v1.ArtifactService/"

// artifact is an artifact and its blob.
type artifact struct {
	Record
	key, sig  string            // the blob's path segment and SAS signature
	blocks    map[string][]byte // uncommitted blocks by id
	blob      []byte            // committed by the last block list
	committed bool
}

type createRequest struct {
	RunID     string  `json:"workflow_run_backend_id"`
	JobID     string  `json:"workflow_job_run_backend_id"`
	Name      string  `json:"name"`
	ExpiresAt *string `json:"expires_at"`
	Version   int     `json:"version"`
	MimeType  *string `json:"mime_type"` // sent by toolkit 6.x with version 7
}

type finalizeRequest struct {
	RunID string          `json:"workflow_run_backend_id"`
	JobID string          `json:"workflow_job_run_backend_id"`
	Name  string          `json:"name"`
	Size  json.RawMessage `json:"size"`
	Hash  *string         `json:"hash"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if !s.accept(w, r, Create, &req) || !s.covers(w, r, req.RunID, req.JobID) {
		return
	}
	rec := Record{RunID: req.RunID, JobID: req.JobID, Name: req.Name}
	if msg := validName(req.Name); msg != "" {
		twirpError(w, http.StatusBadRequest, msg)
		return
	}
	if req.Version < 4 {
		twirpError(w, http.StatusBadRequest, fmt.Sprintf("version %d: this is the v4 service", req.Version))
		return
	}
	if req.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.ExpiresAt)
		if err != nil || !t.After(time.Now()) {
			twirpError(w, http.StatusBadRequest, fmt.Sprintf("expires_at %q is not a future RFC 3339 time", *req.ExpiresAt))
			return
		}
		rec.ExpiresAt = t
	}
	a, ok := s.add(rec)
	if !ok {
		twirpError(w, http.StatusConflict, fmt.Sprintf("an artifact named %q already exists on the workflow run", req.Name))
		return
	}
	url := "http://" + r.Host + "/blobs/" + a.key + "?sig=" + a.sig
	s.answer(w, "signed_upload_url", "signedUploadUrl", url)
}

// add registers an artifact unless its run already has one of that name.
func (s *Server) add(rec Record) (*artifact, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.artifacts {
		if a.RunID == rec.RunID && a.Name == rec.Name {
			return nil, false
		}
	}
	a := &artifact{
		Record: rec,
		key:    strconv.Itoa(len(s.artifacts) + 1),
		sig:    randomHex(16),
		blocks: map[string][]byte{},
	}
	s.artifacts = append(s.artifacts, a)
	return a, true
}

func (s *Server) finalize(w http.ResponseWriter, r *http.Request) {
	var req finalizeRequest
	if !s.accept(w, r, Finalize, &req) || !s.covers(w, r, req.RunID, req.JobID) {
		return
	}
	var sizeText string
	if err := json.Unmarshal(req.Size, &sizeText); err != nil {
		twirpError(w, http.StatusBadRequest, "size must be an int64 in proto3 JSON, a string (the fake is stricter than GitHub here)")
		return
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || req.Hash == nil {
		twirpError(w, http.StatusBadRequest, "size must be an integer and hash must be set")
		return
	}
	id, status, msg := s.close(req, size, *req.Hash)
	if status != http.StatusOK {
		twirpError(w, status, msg)
		return
	}
	s.answer(w, "artifact_id", "artifactId", strconv.FormatInt(id, 10))
}

// close finalizes the artifact of req if its blob has size bytes and hash.
func (s *Server) close(req finalizeRequest, size int64, hash string) (int64, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var a *artifact
	for _, c := range s.artifacts {
		if c.RunID == req.RunID && c.Name == req.Name {
			a = c
		}
	}
	switch {
	case a == nil:
		return 0, http.StatusNotFound, fmt.Sprintf("no artifact named %q on the workflow run", req.Name)
	case a.Finalized:
		return 0, http.StatusPreconditionFailed, fmt.Sprintf("artifact %q is already finalized", req.Name)
	case !a.committed:
		return 0, http.StatusPreconditionFailed, fmt.Sprintf("artifact %q has no committed block list", req.Name)
	case size != int64(len(a.blob)):
		return 0, http.StatusBadRequest, fmt.Sprintf("size %d does not match the %d bytes uploaded", size, len(a.blob))
	}
	sum := sha256.Sum256(a.blob)
	if want := "sha256:" + hex.EncodeToString(sum[:]); hash != want {
		return 0, http.StatusBadRequest, fmt.Sprintf("hash %q does not match the upload's %q", hash, want)
	}
	a.ID, a.Size, a.Hash, a.Finalized = s.nextID, size, hash, true
	s.nextID++
	return a.ID, http.StatusOK, ""
}

// accept counts the call, serves its injected fault if any, checks the
// token and decodes the request. It answers and returns false on failure.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, kind Kind, req any) bool {
	if f, ok := s.hit(kind); ok {
		twirpError(w, f.status, f.msg)
		return false
	}
	if _, ok := s.scope(r); !ok {
		twirpError(w, http.StatusUnauthorized, "the runtime token is missing or was not issued by this server")
		return false
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		twirpError(w, http.StatusBadRequest, "Content-Type must be application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields() // stricter than twirp: catches misspelled fields
	if err := dec.Decode(req); err != nil {
		twirpError(w, http.StatusBadRequest, "malformed request: "+err.Error())
		return false
	}
	return true
}

// covers checks that the token's scope is the run and job of the request.
func (s *Server) covers(w http.ResponseWriter, r *http.Request, run, job string) bool {
	sc, _ := s.scope(r)
	if run == "" || job == "" || sc != (scope{run: run, job: job}) {
		twirpError(w, http.StatusForbidden, "the token's Actions.Results scope does not name this run and job")
		return false
	}
	return true
}

func (s *Server) scope(r *http.Request) (scope, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return scope{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.tokens[tok]
	return sc, ok
}

// answer writes {"ok":true,<key>:value} with the snake or camel key.
func (s *Server) answer(w http.ResponseWriter, snake, camel, value string) {
	key := snake
	if s.camel {
		key = camel
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"ok": true, key: value})
}

// twirpCodes maps HTTP statuses to twirp error codes.
var twirpCodes = map[int]string{
	http.StatusBadRequest:          "invalid_argument",
	http.StatusUnauthorized:        "unauthenticated",
	http.StatusForbidden:           "permission_denied",
	http.StatusNotFound:            "not_found",
	http.StatusConflict:            "already_exists",
	http.StatusPreconditionFailed:  "failed_precondition",
	http.StatusTooManyRequests:     "resource_exhausted",
	http.StatusInternalServerError: "internal",
	http.StatusServiceUnavailable:  "unavailable",
	http.StatusGatewayTimeout:      "deadline_exceeded",
}

func twirpError(w http.ResponseWriter, status int, msg string) {
	code, ok := twirpCodes[status]
	if !ok {
		code = "unknown"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"code": code, "msg": msg})
}

// validName is why name may not name an artifact, or "".
func validName(name string) string {
	if name == "" {
		return "artifact name is empty"
	}
	if strings.ContainsAny(name, "\":<>|*?\r\n\\/") {
		return fmt.Sprintf("artifact name %q contains a character that is not allowed", name)
	}
	return ""
}
