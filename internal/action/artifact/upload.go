package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/backoff"
)

// Config is what an upload needs from the runner's environment.
type Config struct {
	ResultsURL   string // ACTIONS_RESULTS_URL; only its origin is used
	RuntimeToken string // ACTIONS_RUNTIME_TOKEN, a JWT whose scp claim names the backend ids

	// ServerURL (GITHUB_SERVER_URL), Repository (GITHUB_REPOSITORY,
	// "owner/repo") and RunID (GITHUB_RUN_ID) make Result.URL; when one is
	// empty, so is the URL.
	ServerURL, Repository, RunID string

	RetentionDays int // 0 leaves the repository's default retention

	HTTPClient *http.Client  // nil means a client of the artifact package's own
	BlockSize  int           // bytes per uploaded block; 0 means 8 MiB
	Backoff    time.Duration // first wait before a retry, growing ×1.5; 0 means 3s
}

// Result describes an uploaded artifact.
type Result struct {
	ID     int64
	Name   string
	Size   int64  // bytes of the zip
	SHA256 string // hex digest of the zip
	URL    string // the artifact's page; "" when Config lacks ServerURL, Repository or RunID
}

// Sentinel errors a caller can branch on.
var (
	// ErrUsage means the account's artifact storage quota is used up; the
	// request is not retried.
	ErrUsage = errors.New("artifact storage quota is used up")
	// ErrExists means the run already has an artifact with that name; v4
	// artifacts are immutable.
	ErrExists = errors.New("an artifact with this name already exists in the run")
)

const (
	defaultBlockSize = 8 << 20
	defaultBackoff   = 3 * time.Second
	attempts         = 5
)

// Upload zips dir and uploads it as the artifact name. Paths in the zip are
// relative to dir with forward slashes; it holds regular files and empty
// directories, and leaves out symlinks and other special files.
func Upload(ctx context.Context, cfg Config, name, dir string) (Result, error) {
	res, err := upload(ctx, cfg.withDefaults(), name, dir)
	if err != nil {
		return Result{}, redact(err, cfg.RuntimeToken)
	}
	return res, nil
}

func upload(ctx context.Context, cfg Config, name, dir string) (Result, error) {
	if err := ValidName(name); err != nil {
		return Result{}, err
	}
	runID, jobID, err := BackendIDs(cfg.RuntimeToken)
	if err != nil {
		return Result{}, err
	}
	svc, err := newService(cfg)
	if err != nil {
		return Result{}, err
	}
	tree, err := openTree(dir)
	if err != nil {
		return Result{}, err
	}
	defer tree.Close()
	ids := backendIDs{Run: runID, Job: jobID}
	signed, err := svc.create(ctx, ids, name, cfg.expiry())
	if err != nil {
		return Result{}, fmt.Errorf("create artifact %q: %w", name, err)
	}
	size, sum, err := uploadZip(ctx, cfg, signed, tree)
	if err != nil {
		return Result{}, fmt.Errorf("upload artifact %q: %w", name, err)
	}
	id, err := svc.finalize(ctx, ids, name, size, sum)
	if err != nil {
		return Result{}, fmt.Errorf("finalize artifact %q: %w", name, err)
	}
	return Result{ID: id, Name: name, Size: size, SHA256: sum, URL: cfg.artifactURL(id)}, nil
}

// uploadZip streams the zip of tree to the blob at signed and returns its
// size and hex SHA-256.
func uploadZip(ctx context.Context, cfg Config, signed string, tree *tree) (int64, string, error) {
	b, err := newBlob(cfg, signed)
	if err != nil {
		return 0, "", err
	}
	sum := sha256.New()
	w := newBlockWriter(ctx, b, cfg.BlockSize, sum)
	if err := tree.zip(w); err != nil {
		return 0, "", err
	}
	if err := w.commit(); err != nil {
		return 0, "", err
	}
	return w.size, hex.EncodeToString(sum.Sum(nil)), nil
}

func (c Config) withDefaults() Config {
	if c.HTTPClient == nil {
		c.HTTPClient = defaultClient
	}
	if c.BlockSize <= 0 {
		c.BlockSize = defaultBlockSize
	}
	if c.Backoff <= 0 {
		c.Backoff = defaultBackoff
	}
	return c
}

// policy is the toolkit's retry policy: a few attempts, waiting Backoff first,
// then ×1.5 with jitter between them.
func (c Config) policy() backoff.Policy {
	return backoff.Policy{Tries: attempts, First: c.Backoff, Growth: 1.5, Budget: backoff.Unbounded, Jitter: backoff.HalfAgain}
}

// expiry is the expires_at to request, or "" for the repository default.
func (c Config) expiry() string {
	if c.RetentionDays <= 0 {
		return ""
	}
	return time.Now().AddDate(0, 0, c.RetentionDays).UTC().Format(time.RFC3339)
}

// artifactURL is the artifact's page, as upload-artifact prints it.
func (c Config) artifactURL(id int64) string {
	if c.ServerURL == "" || c.Repository == "" || c.RunID == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%s/artifacts/%d",
		strings.TrimRight(c.ServerURL, "/"), c.Repository, c.RunID, id)
}

// origin is scheme://host of an absolute http(s) URL.
func origin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("results service URL %q (ACTIONS_RESULTS_URL) is not an absolute http(s) URL", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// redactedError hides a secret in the message of the error it wraps.
type redactedError struct {
	err    error
	secret string
}

func (e *redactedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.secret, "***") }
func (e *redactedError) Unwrap() error { return e.err }

// redact makes sure secret never shows in err's message.
func redact(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{err: err, secret: secret}
}

// defaultClient has a transport of its own: closing another server's
// connections through http.DefaultTransport (httptest does) must not break
// an upload.
var defaultClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
