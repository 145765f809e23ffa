// Package gitremote owns loop-action's conversations with a remote git
// repository: one upload-pack exchange to fetch a ref's head (and what it
// adds to commits the caller already holds), one receive-pack exchange to
// move a ref from an expected old value to a new commit, carrying exactly
// the objects the caller names. The state branch and delivery both speak
// to remotes through it, and nothing else does.
//
// It never writes a ref anywhere but through the remote's own update (the
// server's compare-and-swap), never walks what is reachable from the
// remote's refs, and never lets a token, or a password in a URL, into an
// error it returns (secret.Mask hides them, encoded forms included). The
// exchanges are ours, on go-git's transport, because go-git's Remote
// works from a repository's refs and walks history to choose what to
// send; a checkpoint needs one compare-and-swap carrying named objects.
package gitremote

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/secret"
)

// Remote is a repository spoken to with go-git's transport directly:
// smart HTTP(S) with a token as basic auth (user x-access-token, as
// GitHub takes it), or any transport go-git has a client for (file://, a
// path, ssh).
type Remote struct {
	url    string // for messages, without credentials
	ep     *transport.Endpoint
	client transport.Transport
	auth   transport.AuthMethod
	mask   func(string) string // hides the token and a password in the URL, in every form
}

// ErrRace reports that a ref was not where a push expected it, or that
// the remote refused to move it.
var ErrRace = errors.New("the remote did not take the update")

// ErrRefused, which wraps ErrRace, reports that the remote unpacked a
// push but refused the ref update (moved meanwhile, locked by another
// push, or declined by a hook or a branch protection).
var ErrRefused = fmt.Errorf("%w: refused", ErrRace)

// Open returns the remote at rawURL, authenticating to http(s) with token
// when it is not empty. It does not reach the remote.
func Open(rawURL, token string) (*Remote, error) {
	secrets := secret.Append(nil, "token", token)
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		password, _ := u.User.Password()
		secrets = secret.Append(secrets, "password", password)
	}
	r := &Remote{url: redactURL(rawURL), mask: secret.Mask(secrets)}
	var err error
	if r.ep, err = transport.NewEndpoint(rawURL); err != nil {
		return nil, r.scrub(fmt.Errorf("remote %s: %w", r.url, err))
	}
	web := r.ep.Protocol == "https" || r.ep.Protocol == "http"
	if web {
		r.client = githttp.NewClient(httpClient)
	} else if r.client, err = client.NewClient(r.ep); err != nil {
		return nil, r.scrub(fmt.Errorf("remote %s: %w", r.url, err))
	}
	if token != "" && web {
		r.auth = &githttp.BasicAuth{Username: "x-access-token", Password: token}
	}
	return r, nil
}

// URL is the remote's URL without credentials, for messages.
func (r *Remote) URL() string { return r.url }

// redactURL hides the password of a URL that carries one.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

// Fail wraps err from operation op on ref, naming the ref and the remote,
// with every secret scrubbed from the message and a hint when the remote
// wanted credentials.
func (r *Remote) Fail(op string, ref plumbing.ReferenceName, err error) error {
	msg := fmt.Sprintf("%s %q at %s: %s", op, ref.Short(), r.url, strings.Join(strings.Fields(err.Error()), " "))
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired) && r.auth == nil && (r.ep == nil || r.ep.Password == ""):
		msg += " (no token was given)"
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		msg += " (the token was refused: check that it is valid and may write the repository's contents)"
	}
	return &remoteError{msg: r.mask(msg), err: err}
}

// scrub returns err with its message cleared of the secrets.
func (r *Remote) scrub(err error) error {
	return &remoteError{msg: r.mask(err.Error()), err: err}
}

// remoteError is an error from the remote whose message is safe to show.
type remoteError struct {
	msg string
	err error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.err }

// CommitName names a commit in a message: its short id, or "nothing" when
// there is none (the ref does not exist).
func CommitName(h plumbing.Hash) string {
	if h.IsZero() {
		return "nothing"
	}
	return phrase.Short(h.String())
}

// closeInto closes c, keeping the first error in *err.
func closeInto(c io.Closer, err *error) {
	if cerr := c.Close(); *err == nil {
		*err = cerr
	}
}

// httpClient talks to http(s) remotes with a transport of its own (go-git's
// default is http.DefaultTransport): closing other servers' idle
// connections there, as httptest does, must not break a push in flight.
var httpClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
