package workspace

import (
	"bytes"
	"fmt"
	"regexp"
)

// The ident attribute, as git 2.39's convert.c applies it.

// identRE finds the keywords convert.c's count_ident counts.
var identRE = regexp.MustCompile(`\$Id(\$|:[^$\n]*\$)`)

// expandedRE finds an expanded keyword, which ident_to_git collapses.
var expandedRE = regexp.MustCompile(`\$Id:[^$\n]*\$`)

// identToGit is convert.c's ident_to_git: "$Id: ... $" collapses to "$Id$".
func identToGit(b []byte) []byte { return expandedRE.ReplaceAllLiteral(b, []byte("$Id$")) }

// identToWorktree is convert.c's ident_to_worktree: "$Id$" (or an
// expanded one in the blob) becomes "$Id: <blob id> $".
func identToWorktree(b []byte) []byte {
	n := len(identRE.FindAllIndex(b, -1)) // convert.c's count_ident
	if n == 0 {
		return b
	}
	id := hashObject("blob", b).String()
	out := make([]byte, 0, len(b)+n*(len(id)+3))
	for {
		d := bytes.IndexByte(b, '$')
		if d < 0 {
			break
		}
		out, b = append(out, b[:d+1]...), b[d+1:]
		if len(b) < 3 || b[0] != 'I' || b[1] != 'd' {
			continue
		}
		switch b[2] {
		case '$':
			b = b[3:]
		case ':':
			e := bytes.IndexByte(b[3:], '$')
			if e < 0 {
				return append(out, b...)
			}
			if bytes.IndexByte(b[3:3+e], '\n') >= 0 {
				continue
			}
			if e > 1 && bytes.IndexByte(b[4:3+e-1], ' ') >= 0 {
				continue // spaces in unexpected places: another system's id
			}
			b = b[3+e+1:]
		default:
			continue
		}
		out = append(append(append(out, "Id: "...), id...), " $"...)
	}
	return append(out, b...)
}

// idents returns the "$Id...$" keywords of b.
func idents(b []byte) []string {
	var out []string
	for _, m := range identRE.FindAll(b, -1) {
		out = append(out, string(m))
	}
	return out
}

// quoteIdents quotes the first of ids, or says there is none.
func quoteIdents(ids []string) string {
	if len(ids) == 0 {
		return "no $Id$"
	}
	return fmt.Sprintf("%q", ids[0])
}
