package gitremote

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestFailHidesSecrets: an error the remote returns never shows the token
// nor the URL's password, raw or in the forms a transport writes them.
func TestFailHidesSecrets(t *testing.T) {
	t.Parallel()
	const token, password = "ghs_token0123456789", "pa ss/w0rd:x"
	r, err := Open("https://x-access-token:"+url.PathEscape(password)+"@github.example/o/r.git", token)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("denied for " + token + " at https://x:" + url.QueryEscape(password) + "@github.example and " + password)
	msg := r.Fail("push", plumbing.NewBranchReferenceName("loop-state"), cause).Error()
	for _, s := range []string{token, password, url.QueryEscape(password), url.PathEscape(password)} {
		if strings.Contains(msg, s) {
			t.Errorf("the message holds %q: %s", s, msg)
		}
	}
	if !strings.Contains(msg, `push "loop-state" at https://x-access-token:xxxxx@github.example/o/r.git: denied for ***`) {
		t.Errorf("message = %s", msg)
	}
	if !errors.Is(r.Fail("push", "refs/heads/x", cause), cause) {
		t.Error("Fail does not wrap the cause")
	}
}
