package openai

import (
	"fmt"
	"io"
	"net/http"
)

// MaxReplyBytes bounds the body of one answer of the API: a reply, an
// error or a stream of junk from a broken endpoint is read no further.
const MaxReplyBytes = 16 << 20

// errTooLarge is the error of a body past MaxReplyBytes.
var errTooLarge = fmt.Errorf("the answer is larger than %d MiB", MaxReplyBytes>>20)

// limited is a transport whose response bodies end in an error past
// MaxReplyBytes.
type limited struct{ next http.RoundTripper }

func (l limited) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err == nil {
		resp.Body = &capped{ReadCloser: resp.Body, left: MaxReplyBytes}
	}
	return resp, err
}

// capped reads at most left bytes, then fails.
type capped struct {
	io.ReadCloser
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.ReadCloser.Read(one[:])
		if n > 0 || err == nil {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// httpClient is c.HTTP, or a client of its own, with its bodies capped.
func (c Client) httpClient() *http.Client {
	hc := &http.Client{}
	if c.HTTP != nil {
		*hc = *c.HTTP
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = limited{next: next}
	return hc
}
