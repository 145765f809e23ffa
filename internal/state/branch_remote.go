package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage"

	"github.com/loop-action/loop-action/internal/phrase"
)

// remote is the state branch of one remote repository, spoken to with
// go-git's transport directly: a fetch is one upload-pack exchange for the
// branch head at depth 1, a push one receive-pack exchange carrying exactly
// the objects a save created.
type remote struct {
	url     string // for messages, without credentials
	ref     plumbing.ReferenceName
	ep      *transport.Endpoint
	client  transport.Transport
	auth    transport.AuthMethod
	secrets []string // the token and a password in the URL: scrubbed from messages
}

// errRace reports that the branch was not where a push expected it, or
// that the remote refused to move it: either way, fetch and try again.
var errRace = errors.New("the remote did not take the update")

// errRefused, which wraps errRace, reports that the remote refused the
// update (moved meanwhile, locked by another push, or declined by a hook).
var errRefused = fmt.Errorf("%w: refused", errRace)

func newRemote(o BranchOptions) (*remote, error) {
	raw, err := resolveRemote(o.Remote, o.Root)
	if err != nil {
		return nil, err
	}
	r := &remote{url: redactURL(raw), ref: plumbing.NewBranchReferenceName(o.Branch), secrets: []string{o.Token}}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		password, _ := u.User.Password()
		r.secrets = append(r.secrets, password)
	}
	if r.ep, err = transport.NewEndpoint(raw); err != nil {
		return nil, r.fail("remote", err)
	}
	if r.ep.Protocol == "https" || r.ep.Protocol == "http" {
		r.client = githttp.NewClient(httpClient)
	} else if r.client, err = client.NewClient(r.ep); err != nil {
		return nil, r.fail("remote", err)
	}
	if o.Token != "" && (r.ep.Protocol == "https" || r.ep.Protocol == "http") {
		r.auth = &githttp.BasicAuth{Username: "x-access-token", Password: o.Token}
	}
	return r, nil
}

// resolveRemote returns the URL remote names: remote itself when it is a
// URL or a path, else the first URL of the remote of that name ("" is
// "origin") in the configuration of the repository holding root.
func resolveRemote(remote, root string) (string, error) {
	switch {
	case remote == "":
		remote = "origin"
	case strings.Contains(remote, "://") || filepath.IsAbs(remote):
		return remote, nil
	case strings.HasPrefix(remote, "./") || strings.HasPrefix(remote, "../"):
		return filepath.Join(root, remote), nil
	case strings.Contains(remote, ":"): // scp-like: git@host:owner/repo
		return remote, nil
	}
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("remote %q: the loop root %q is not in a git repository: %w", remote, root, err)
	}
	r, err := repo.Remote(remote)
	if err != nil {
		return "", fmt.Errorf("remote %q of the repository at %q: %w", remote, root, err)
	}
	urls := r.Config().URLs
	if len(urls) == 0 {
		return "", fmt.Errorf("remote %q of the repository at %q has no URL", remote, root)
	}
	u := urls[0]
	if !strings.Contains(u, ":") && !filepath.IsAbs(u) { // a relative path: git resolves it in the worktree
		if wt, err := repo.Worktree(); err == nil {
			u = filepath.Join(wt.Filesystem.Root(), u)
		}
	}
	return u, nil
}

// redactURL hides the password of a URL that carries one.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

// fetch brings the branch head and, unless the store has it, the objects
// of its tree the store lacks, and returns it (zero when the branch does
// not exist). Without haves it asks for the head alone (depth 1). With
// haves (commits seen on this remote, which the store holds whole) it
// asks for what the head adds to them, declaring them shallow, and without
// a depth: go-git cannot take thin packs, and for a depth-limited request
// without one git sends the head's whole tree whatever the haves. So a
// fetch costs what the other writers pushed since the haves, not the size
// of the branch.
func (r *remote) fetch(ctx context.Context, s storage.Storer, haves []plumbing.Hash) (plumbing.Hash, error) {
	head, err := r.fetchPack(ctx, s, haves)
	if err != nil {
		return plumbing.ZeroHash, r.fail("fetch", err)
	}
	return head, nil
}

func (r *remote) fetchPack(ctx context.Context, s storage.Storer, haves []plumbing.Hash) (head plumbing.Hash, err error) {
	sess, err := r.client.NewUploadPackSession(r.ep, r.auth)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer closeInto(sess, &err)
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	head = ar.References[r.ref.String()]
	if head.IsZero() || s.HasEncodedObject(head) == nil {
		return head, nil
	}
	req, err := uploadRequest(ar, head, haves)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer closeInto(resp, &err)
	if err := packfile.UpdateObjectStorage(s, demux(req.Capabilities, resp)); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := s.HasEncodedObject(head); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("the remote did not send the head %s: %w", head, err)
	}
	return head, nil
}

// uploadRequest asks for head: at depth 1 without haves, else for what it
// adds to them (see fetch).
func uploadRequest(ar *packp.AdvRefs, head plumbing.Hash, haves []plumbing.Hash) (*packp.UploadPackRequest, error) {
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	req.Wants = []plumbing.Hash{head}
	req.Haves, req.Shallows = haves, haves
	if len(haves) == 0 {
		req.Depth = packp.DepthCommits(1)
	}
	if err := req.Capabilities.Set(capability.Shallow); err != nil {
		return nil, err
	}
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	return req, nil
}

// demux strips the side-band framing a response carries, if any.
func demux(caps *capability.List, rd io.Reader) io.Reader {
	switch {
	case caps.Supports(capability.Sideband64k):
		return sideband.NewDemuxer(sideband.Sideband64k, rd)
	case caps.Supports(capability.Sideband):
		return sideband.NewDemuxer(sideband.Sideband, rd)
	}
	return rd
}

// push sends objs, which must hold every object reachable from the commit
// next that the remote may lack, and moves the branch from old (zero: the
// branch does not exist) to next if it is still at old. It returns an
// error wrapping errRace when the branch was elsewhere or the remote
// refused the update.
func (r *remote) push(ctx context.Context, s storage.Storer, old, next plumbing.Hash, objs []plumbing.Hash) error {
	if err := r.sendPack(ctx, s, old, next, objs); err != nil {
		return r.fail("push", err)
	}
	return nil
}

func (r *remote) sendPack(ctx context.Context, s storage.Storer, old, next plumbing.Hash, objs []plumbing.Hash) (err error) {
	sess, err := r.client.NewReceivePackSession(r.ep, r.auth)
	if err != nil {
		return err
	}
	defer closeInto(sess, &err)
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	if at := ar.References[r.ref.String()]; at != old {
		return fmt.Errorf("%w: the branch is at %s, not %s", errRace, commitName(at), commitName(old))
	}
	var pack bytes.Buffer
	enc := packfile.NewEncoder(&pack, s, !ar.Capabilities.Supports(capability.OFSDelta))
	if _, err := enc.Encode(objs, 10); err != nil {
		return fmt.Errorf("pack %d objects: %w", len(objs), err)
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	req.Commands = []*packp.Command{{Name: r.ref, Old: old, New: next}}
	req.Packfile = io.NopCloser(&pack)
	rs, err := sess.ReceivePack(ctx, req)
	switch {
	case rs != nil && rs.UnpackStatus == "ok" && err != nil:
		return fmt.Errorf("%w: %v", errRefused, err)
	case err != nil:
		return err
	case rs == nil:
		return errors.New("the remote did not report the update")
	}
	return nil
}

// commitName names a commit in an error: its short id, or "nothing" when
// there is none (the branch does not exist).
func commitName(h plumbing.Hash) string {
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

// fail wraps err from operation op, naming the branch and the remote, with
// the token scrubbed from every message.
func (r *remote) fail(op string, err error) error {
	msg := fmt.Sprintf("%s %q at %s: %s", op, r.ref.Short(), r.url, strings.Join(strings.Fields(err.Error()), " "))
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired) && r.auth == nil && (r.ep == nil || r.ep.Password == ""):
		msg += " (no token was given)"
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		msg += " (the token was refused: check that it is valid and may write the repository's contents)"
	}
	for _, secret := range r.secrets {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "***")
		}
	}
	return &remoteError{msg: msg, err: err}
}

// remoteError is an error from the remote whose message is safe to show.
type remoteError struct {
	msg string
	err error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.err }

// httpClient talks to http(s) remotes with a transport of its own (go-git's
// default is http.DefaultTransport): closing other servers' idle
// connections there, as httptest does, must not break a push in flight.
var httpClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
