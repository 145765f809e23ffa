package artifact

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/loop-action/loop-action/internal/backoff"
)

const (
	// msVersion is the Azure Storage REST version the block calls ask for.
	msVersion = "2020-10-02"
	// maxBlocks is how many committed blocks a block blob may have.
	maxBlocks = 50000
	// maxBody bounds how much of a response body is read.
	maxBody = 1 << 20
)

// blob is the block blob behind a signed upload URL. The URL's SAS query
// authorizes the calls, so they carry no Authorization header.
type blob struct {
	client *http.Client
	url    *url.URL
	policy backoff.Policy
}

func newBlob(cfg Config, signed string) (*blob, error) {
	u, err := url.Parse(signed)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the signed upload URL is not an absolute http(s) URL")
	}
	return &blob{client: cfg.HTTPClient, url: u, policy: cfg.policy()}, nil
}

// putBlock stages one block (Azure Put Block).
func (b *blob) putBlock(ctx context.Context, id string, data []byte) error {
	return b.put(ctx, "comp=block&blockid="+url.QueryEscape(id), data, nil)
}

// putBlockList commits the staged blocks, in the order of ids (Azure Put
// Block List).
func (b *blob) putBlockList(ctx context.Context, ids []string) error {
	var body bytes.Buffer
	body.WriteString(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	for _, id := range ids {
		body.WriteString("<Latest>" + id + "</Latest>") // base64: nothing to escape
	}
	body.WriteString("</BlockList>")
	h := http.Header{}
	h.Set("Content-Type", "application/xml")
	h.Set("x-ms-blob-content-type", "zip")
	return b.put(ctx, "comp=blocklist", body.Bytes(), h)
}

func (b *blob) put(ctx context.Context, query string, body []byte, h http.Header) error {
	target := withQuery(b.url, query)
	_, err := backoff.Do(ctx, b.policy, func(ctx context.Context) (struct{}, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, bytes.NewReader(body))
		if err != nil {
			return struct{}{}, hideURL(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("x-ms-version", msVersion)
		resp, err := b.client.Do(req)
		if err != nil {
			return struct{}{}, backoff.Again(hideURL(err))
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if resp.StatusCode/100 == 2 {
			return struct{}{}, nil
		}
		return struct{}{}, retryable(resp.StatusCode, fmt.Errorf("blob storage answered %s%s", resp.Status, storageMessage(data)))
	})
	return err
}

// withQuery is u with query appended to its own query, if any.
func withQuery(u *url.URL, query string) string {
	v := *u
	if v.RawQuery == "" {
		v.RawQuery = query
	} else {
		v.RawQuery += "&" + query
	}
	return v.String()
}

// hideURL takes the query, which holds the SAS signature, out of the URL a
// transport error quotes.
func hideURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL, _, _ = strings.Cut(ue.URL, "?")
	}
	return err
}

// storageMessage is ": <Code>: <Message>" from an Azure Storage error body,
// or "" if it has none.
func storageMessage(body []byte) string {
	var e struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(body, &e) != nil || e.Code+e.Message == "" {
		return ""
	}
	msg, _, _ := strings.Cut(e.Message, "\n")
	return ": " + e.Code + ": " + msg
}

// blockWriter uploads what is written to it as blocks of blockSize bytes,
// one after the other, and hashes and counts what it uploaded.
type blockWriter struct {
	ctx  context.Context
	blob *blob
	buf  []byte
	ids  []string
	size int64
	sum  hash.Hash
}

func newBlockWriter(ctx context.Context, b *blob, blockSize int, sum hash.Hash) *blockWriter {
	return &blockWriter{ctx: ctx, blob: b, buf: make([]byte, 0, blockSize), sum: sum}
}

func (w *blockWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+n]
		p = p[n:]
		written += n
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush uploads the buffered bytes as the next block.
func (w *blockWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if len(w.ids) == maxBlocks {
		return fmt.Errorf("the zip needs more than %d blocks of %d bytes", maxBlocks, cap(w.buf))
	}
	id := blockID(len(w.ids))
	if err := w.blob.putBlock(w.ctx, id, w.buf); err != nil {
		return fmt.Errorf("put block %d: %w", len(w.ids)+1, err)
	}
	w.sum.Write(w.buf)
	w.size += int64(len(w.buf))
	w.ids = append(w.ids, id)
	w.buf = w.buf[:0]
	return nil
}

// commit uploads what is left and commits the blocks in order.
func (w *blockWriter) commit() error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.blob.putBlockList(w.ctx, w.ids); err != nil {
		return fmt.Errorf("put block list: %w", err)
	}
	return nil
}

// blockID names block i; every id has the same length, as Azure requires.
func blockID(i int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "block-%06d", i))
}
