package artifact

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/backoff"
)

// servicePath is the twirp route of the results service's artifact API.
const servicePath = "/twirp/github.actions.results.api.v1.ArtifactService/"

// service is the results service's artifact API.
type service struct {
	client *http.Client
	base   string // origin of ACTIONS_RESULTS_URL
	token  string
	policy backoff.Policy
}

func newService(cfg Config) (*service, error) {
	base, err := origin(cfg.ResultsURL)
	if err != nil {
		return nil, err
	}
	return &service{client: cfg.HTTPClient, base: base, token: cfg.RuntimeToken, policy: cfg.policy()}, nil
}

type backendIDs struct {
	Run string `json:"workflow_run_backend_id"`
	Job string `json:"workflow_job_run_backend_id"`
}

type createRequest struct {
	backendIDs
	Name      string `json:"name"`
	ExpiresAt string `json:"expires_at,omitempty"`
	Version   int    `json:"version"`
}

// createResponse takes both GitHub's snake_case and act's camelCase.
type createResponse struct {
	OK       bool   `json:"ok"`
	URL      string `json:"signed_upload_url"`
	CamelURL string `json:"signedUploadUrl"`
}

type finalizeRequest struct {
	backendIDs
	Name string `json:"name"`
	Size int64  `json:"size,string"` // int64 is a string in proto3 JSON
	Hash string `json:"hash"`
}

type finalizeResponse struct {
	OK      bool       `json:"ok"`
	ID      protoInt64 `json:"artifact_id"`
	CamelID protoInt64 `json:"artifactId"`
}

// create starts artifact name and returns its signed upload URL. expiresAt
// is RFC 3339, or "" for the repository's retention.
func (s *service) create(ctx context.Context, ids backendIDs, name, expiresAt string) (string, error) {
	req := createRequest{backendIDs: ids, Name: name, ExpiresAt: expiresAt, Version: 4}
	var resp createResponse
	if err := s.call(ctx, "CreateArtifact", req, &resp); err != nil {
		return "", err
	}
	url := cmp.Or(resp.URL, resp.CamelURL)
	if !resp.OK || url == "" {
		return "", errors.New("the results service did not accept the artifact (no ok and signed upload URL)")
	}
	return url, nil
}

// finalize closes the artifact with the size and hex SHA-256 of its zip and
// returns its id.
func (s *service) finalize(ctx context.Context, ids backendIDs, name string, size int64, sum string) (int64, error) {
	req := finalizeRequest{backendIDs: ids, Name: name, Size: size, Hash: "sha256:" + sum}
	var resp finalizeResponse
	if err := s.call(ctx, "FinalizeArtifact", req, &resp); err != nil {
		return 0, err
	}
	id := cmp.Or(resp.ID, resp.CamelID)
	if !resp.OK || id == 0 {
		return 0, errors.New("the results service did not finalize the artifact (no ok and artifact id)")
	}
	return int64(id), nil
}

// call posts in to method and decodes the answer into out, retrying as the
// toolkit does (Config.policy).
func (s *service) call(ctx context.Context, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	data, err := backoff.Do(ctx, s.policy, func(ctx context.Context) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+servicePath+method, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, backoff.Again(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err != nil {
			return nil, backoff.Again(fmt.Errorf("read %s answer: %w", method, err))
		}
		if resp.StatusCode/100 != 2 {
			return nil, failure(resp, data)
		}
		return data, nil
	})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s answer: %w", method, err)
	}
	return nil
}

// failure turns a twirp error answer into an error, marked for another
// try when its status is worth one. A quota error is final whatever its
// status.
func failure(resp *http.Response, body []byte) error {
	var te struct {
		Code string `json:"code"`
		Msg  string `json:"msg"`
	}
	if json.Unmarshal(body, &te) != nil {
		te.Msg = strings.TrimSpace(string(body[:min(len(body), 200)]))
	}
	msg := resp.Status
	if te.Code != "" {
		msg += " " + te.Code
	}
	if te.Msg != "" {
		msg += ": " + te.Msg
	}
	switch {
	case strings.Contains(te.Msg, "insufficient usage"):
		return fmt.Errorf("%w: %s", ErrUsage, msg)
	case resp.StatusCode == http.StatusConflict:
		return fmt.Errorf("%w: %s", ErrExists, msg)
	}
	return retryable(resp.StatusCode, fmt.Errorf("results service answered %s", msg))
}

// retryable marks err for another try when the status is worth one.
func retryable(status int, err error) error {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return backoff.Again(err)
	}
	return err
}

// protoInt64 is an int64 in proto3 JSON: a string, or a number.
type protoInt64 int64

func (p *protoInt64) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("int64 %s: %w", b, err)
	}
	*p = protoInt64(n)
	return nil
}
