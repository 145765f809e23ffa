package gitremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// Fetch brings the head of ref and, unless s has it, the objects of its
// tree s lacks, and returns it (zero when the ref does not exist). Without
// haves it asks for the head alone (depth 1). With haves (commits s holds
// whole) it asks for what the head adds to them, declaring them shallow,
// and without a depth: go-git cannot take thin packs, and for a
// depth-limited request without one git sends the head's whole tree
// whatever the haves. So a fetch costs what was pushed since the haves,
// not the size of the history.
func (r *Remote) Fetch(ctx context.Context, s storer.Storer, ref plumbing.ReferenceName, haves []plumbing.Hash) (plumbing.Hash, error) {
	head, err := r.fetchPack(ctx, s, ref, haves)
	if err != nil {
		return plumbing.ZeroHash, r.Fail("fetch", ref, err)
	}
	return head, nil
}

func (r *Remote) fetchPack(ctx context.Context, s storer.Storer, ref plumbing.ReferenceName, haves []plumbing.Hash) (head plumbing.Hash, err error) {
	sess, ar, err := r.advertised(ctx)
	if err != nil || ar == nil {
		return plumbing.ZeroHash, err
	}
	defer closeInto(sess, &err)
	head = ar.References[ref.String()]
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

// advertised opens an upload-pack session and reads the remote's
// references. For an empty repository it returns neither (the session
// is closed); otherwise the caller closes the session.
func (r *Remote) advertised(ctx context.Context) (transport.UploadPackSession, *packp.AdvRefs, error) {
	sess, err := r.client.NewUploadPackSession(r.ep, r.auth)
	if err != nil {
		return nil, nil, err
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err == nil {
		return sess, ar, nil
	}
	cerr := sess.Close()
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, nil, cerr
	}
	return nil, nil, err
}

// Tip returns the commit ref is at on the remote, zero when it does not
// exist. It reads the remote's advertisement only.
func (r *Remote) Tip(ctx context.Context, ref plumbing.ReferenceName) (plumbing.Hash, error) {
	tip, err := r.tip(ctx, ref)
	if err != nil {
		return plumbing.ZeroHash, r.Fail("read", ref, err)
	}
	return tip, nil
}

func (r *Remote) tip(ctx context.Context, ref plumbing.ReferenceName) (tip plumbing.Hash, err error) {
	sess, ar, err := r.advertised(ctx)
	if err != nil || ar == nil {
		return plumbing.ZeroHash, err
	}
	defer closeInto(sess, &err)
	return ar.References[ref.String()], nil
}

// uploadRequest asks for head: at depth 1 without haves, else for what it
// adds to them (see Fetch).
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

// Push sends objs, which must hold every object reachable from the commit
// next that the remote may lack (see NewObjects), and moves ref from old
// (zero: ref must not exist) to next, in one receive-pack exchange whose
// ref update is the compare-and-swap: the remote moves ref only if it is
// still at old. It returns an error wrapping ErrRace when ref was
// elsewhere (nothing is sent then), wrapping ErrRefused when the remote
// took the objects but refused the update.
func (r *Remote) Push(ctx context.Context, s storer.EncodedObjectStorer, ref plumbing.ReferenceName, old, next plumbing.Hash, objs []plumbing.Hash) error {
	if err := r.sendPack(ctx, s, ref, old, next, objs); err != nil {
		return r.Fail("push", ref, err)
	}
	return nil
}

func (r *Remote) sendPack(ctx context.Context, s storer.EncodedObjectStorer, ref plumbing.ReferenceName, old, next plumbing.Hash, objs []plumbing.Hash) (err error) {
	sess, err := r.client.NewReceivePackSession(r.ep, r.auth)
	if err != nil {
		return err
	}
	defer closeInto(sess, &err)
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return err
	}
	if at := ar.References[ref.String()]; at != old {
		return fmt.Errorf("%w: the branch is at %s, not %s", ErrRace, CommitName(at), CommitName(old))
	}
	var pack bytes.Buffer
	enc := packfile.NewEncoder(&pack, s, !ar.Capabilities.Supports(capability.OFSDelta))
	if _, err := enc.Encode(objs, 10); err != nil {
		return fmt.Errorf("pack %d objects: %w", len(objs), err)
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	req.Commands = []*packp.Command{{Name: ref, Old: old, New: next}}
	req.Packfile = io.NopCloser(&pack)
	rs, err := sess.ReceivePack(ctx, req)
	switch {
	case rs != nil && rs.UnpackStatus == "ok" && err != nil:
		return fmt.Errorf("%w: %v", ErrRefused, err)
	case err != nil:
		return err
	case rs == nil:
		return errors.New("the remote did not report the update")
	}
	return nil
}
