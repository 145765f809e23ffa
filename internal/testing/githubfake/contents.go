package githubfake

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// AddFile puts a file with content at ref (a branch name or a commit sha)
// of owner/repo, as GET /repos/{o}/{r}/contents/{path}?ref= will serve it.
func (s *Server) AddFile(owner, repo, ref, path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, repo).files[ref+":"+strings.Trim(path, "/")] = append([]byte(nil), content...)
}

// get answers GET /repos/{o}/{r}/contents/{path...}?ref= for one
// file (404 otherwise), base64-encoded as GitHub does.
func (s contentsAPI) get(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	path := strings.TrimPrefix(c.r.URL.Path, "/repos/"+c.p["owner"]+"/"+c.p["repo"]+"/contents/")
	ref := c.r.URL.Query().Get("ref")
	b, ok := rs.files[ref+":"+path]
	if !ok {
		writeError(c.w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/repos/contents#get-repository-content")
		return
	}
	c.json(http.StatusOK, map[string]any{
		"type": "file", "encoding": "base64", "size": len(b), "name": path[strings.LastIndex(path, "/")+1:],
		"path": path, "content": base64.StdEncoding.EncodeToString(b), "sha": "0000000000000000000000000000000000000000",
	})
}
