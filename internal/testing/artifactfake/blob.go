package artifactfake

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"net/http"
)

// blobError is the fake's storage call that failed.
type blobError struct {
	status    int
	code, msg string
}

func (s *Server) putBlob(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	kinds := map[string]Kind{"block": Block, "blocklist": BlockList}
	if kind, ok := kinds[q.Get("comp")]; ok {
		if f, ok := s.hit(kind); ok {
			writeBlobError(w, blobError{f.status, "InjectedFault", f.msg})
			return
		}
	}
	body := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	if _, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, 256<<20)); err != nil {
		writeBlobError(w, blobError{http.StatusBadRequest, "InvalidInput", err.Error()})
		return
	}
	if e := s.store(r, body.Bytes()); e != nil {
		writeBlobError(w, *e)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// store checks a blob request and applies it.
func (s *Server) store(r *http.Request, body []byte) *blobError {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, e := s.signed(r)
	if e != nil {
		return e
	}
	q := r.URL.Query()
	switch q.Get("comp") {
	case "block":
		return a.putBlock(q.Get("blockid"), body)
	case "blocklist":
		return a.putBlockList(body, r.Header.Get("x-ms-blob-content-type"))
	case "":
		return &blobError{http.StatusBadRequest, "UnsupportedOperation",
			"Put Blob is not supported: upload in blocks (act silently drops a Put Blob)"}
	default:
		return &blobError{http.StatusBadRequest, "UnsupportedQueryParameter", "comp=" + q.Get("comp") + " is not supported"}
	}
}

// signed is the artifact a blob request is for, if its signature and
// headers are right. The caller holds s.mu.
func (s *Server) signed(r *http.Request) (*artifact, *blobError) {
	var a *artifact
	for _, c := range s.artifacts {
		if c.key == r.PathValue("key") {
			a = c
		}
	}
	switch {
	case a == nil:
		return nil, &blobError{http.StatusNotFound, "ResourceNotFound", "no such blob"}
	case r.URL.Query().Get("sig") != a.sig:
		return nil, &blobError{http.StatusForbidden, "AuthenticationFailed", "the SAS signature does not match"}
	case r.Header.Get("Authorization") != "":
		return nil, &blobError{http.StatusBadRequest, "InvalidAuthenticationInfo",
			"a SAS request carries no Authorization header (the fake is stricter than Azure here)"}
	case r.Header.Get("x-ms-version") == "":
		return nil, &blobError{http.StatusBadRequest, "MissingRequiredHeader", "x-ms-version is required"}
	case a.Finalized:
		return nil, &blobError{http.StatusConflict, "BlobImmutable", "the artifact is finalized"}
	}
	return a, nil
}

// putBlock stages a block; every staged block id must have the same length.
func (a *artifact) putBlock(id string, body []byte) *blobError {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil || len(raw) == 0 || len(raw) > 64 {
		return &blobError{http.StatusBadRequest, "InvalidQueryParameterValue",
			fmt.Sprintf("blockid %q is not base64 of 1 to 64 bytes", id)}
	}
	for other := range a.blocks {
		if len(other) != len(id) {
			return &blobError{http.StatusBadRequest, "InvalidBlobOrBlock", "block ids of a blob must all have the same length"}
		}
	}
	a.blocks[id] = body
	return nil
}

// putBlockList commits the staged blocks it names, in its order, as the blob.
func (a *artifact) putBlockList(body []byte, contentType string) *blobError {
	var list struct {
		XMLName xml.Name `xml:"BlockList"`
		Items   []struct {
			XMLName xml.Name
			ID      string `xml:",chardata"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal(body, &list); err != nil {
		return &blobError{http.StatusBadRequest, "InvalidXmlDocument", err.Error()}
	}
	size := 0
	for _, it := range list.Items {
		size += len(a.blocks[it.ID])
	}
	blob := make([]byte, 0, size)
	for _, it := range list.Items {
		data, ok := a.blocks[it.ID]
		if kind := it.XMLName.Local; !ok || (kind != "Latest" && kind != "Uncommitted") {
			return &blobError{http.StatusBadRequest, "InvalidBlockList",
				fmt.Sprintf("<%s>%s</%s> names no staged block", kind, it.ID, kind)}
		}
		blob = append(blob, data...)
	}
	a.blob, a.committed, a.ContentType = blob, true, contentType
	a.blocks = map[string][]byte{}
	return nil
}

func writeBlobError(w http.ResponseWriter, e blobError) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-ms-error-code", e.code)
	w.WriteHeader(e.status)
	var msg bytes.Buffer
	xml.EscapeText(&msg, []byte(e.msg))
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, e.code, msg.String())
}
