package workspace

import "strings"

// wildmatch is git's wildmatch.c, case-sensitive (core.ignoreCase is
// false on Linux runners). path.Match differs on classes, "**" and
// malformed patterns.

// Results of dowild, as git names them.
const (
	wmMatch           = 0
	wmNoMatch         = 1
	wmAbortAll        = -1
	wmAbortToStarStar = -2
)

// wildmatch reports whether text matches pattern.
func wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, text, pathname) == wmMatch
}

// cAt returns s[i], or 0 past its end, as a C string reads.
func cAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// globSpecial reports whether c is one of git's glob specials: * ? [ \.
func globSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// dowild is wildmatch.c's dowild; a NUL ends p and text, as in C.
func dowild(p, text string, pathname bool) int {
	pi, ti := 0, 0
	for ; cAt(p, pi) != 0; ti, pi = ti+1, pi+1 {
		pch, tch := cAt(p, pi), cAt(text, ti)
		if tch == 0 && pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			pi++
			pch = cAt(p, pi)
			if tch != pch {
				return wmNoMatch
			}
			continue
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
			continue
		case '*':
			r, done, next := star(p, pi, text, ti, pathname)
			if done {
				return r
			}
			pi, ti = r, next // both slashes are consumed by the loop
			continue
		case '[':
			r, npi := class(p, pi, tch, pathname)
			if r != wmMatch {
				return r
			}
			pi = npi
			continue
		default:
			if tch != pch {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// star matches the "*" or "**" at p[pi] against text[ti:]: done with the
// result, or, for a "*/" skipping to text's next slash, not done with the
// indexes of both slashes to go on from.
func star(p string, pi int, text string, ti int, pathname bool) (r int, done bool, next int) {
	matchSlash := !pathname
	pi++
	if cAt(p, pi) == '*' {
		prev := pi - 2
		for pi++; cAt(p, pi) == '*'; pi++ {
		}
		switch {
		case !pathname:
			matchSlash = true
		case (prev < 0 || p[prev] == '/') &&
			(cAt(p, pi) == 0 || cAt(p, pi) == '/' || (cAt(p, pi) == '\\' && cAt(p, pi+1) == '/')):
			if cAt(p, pi) == '/' && dowild(p[pi+1:], text[ti:], pathname) == wmMatch {
				return wmMatch, true, 0
			}
			matchSlash = true
		default:
			matchSlash = false
		}
	}
	if cAt(p, pi) == 0 {
		if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
			return wmNoMatch, true, 0
		}
		return wmMatch, true, 0
	}
	if !matchSlash && cAt(p, pi) == '/' {
		slash := strings.IndexByte(text[ti:], '/')
		if slash < 0 {
			return wmNoMatch, true, 0
		}
		return pi, false, ti + slash
	}
	for tch := cAt(text, ti); tch != 0; tch = cAt(text, ti) {
		if pc := cAt(p, pi); !globSpecial(pc) {
			for tch = cAt(text, ti); tch != 0 && (matchSlash || tch != '/'); tch = cAt(text, ti) {
				if tch == pc {
					break
				}
				ti++
			}
			if tch != pc {
				return wmNoMatch, true, 0
			}
		}
		m := dowild(p[pi:], text[ti:], pathname)
		if m != wmNoMatch {
			if !matchSlash || m != wmAbortToStarStar {
				return m, true, 0
			}
		} else if !matchSlash && tch == '/' {
			return wmAbortToStarStar, true, 0
		}
		ti++
	}
	return wmAbortAll, true, 0
}

// class matches the bracket expression at p[pi] against tch: wmMatch with
// the index of its "]", or why not.
func class(p string, pi int, tch byte, pathname bool) (int, int) {
	pi++
	pch := cAt(p, pi)
	if pch == '^' {
		pch = '!'
	}
	negated := pch == '!'
	if negated {
		pi++
		pch = cAt(p, pi)
	}
	var prev byte
	matched := false
	for {
		if pch == 0 {
			return wmAbortAll, pi
		}
		switch {
		case pch == '\\':
			pi++
			if pch = cAt(p, pi); pch == 0 {
				return wmAbortAll, pi
			}
			if tch == pch {
				matched = true
			}
		case pch == '-' && prev != 0 && cAt(p, pi+1) != 0 && cAt(p, pi+1) != ']':
			pi++
			pch = cAt(p, pi)
			if pch == '\\' {
				pi++
				if pch = cAt(p, pi); pch == 0 {
					return wmAbortAll, pi
				}
			}
			if tch <= pch && tch >= prev {
				matched = true
			}
			pch = 0 // prev becomes 0
		case pch == '[' && cAt(p, pi+1) == ':':
			s := pi + 2
			for pi = s; cAt(p, pi) != 0 && cAt(p, pi) != ']'; pi++ {
			}
			if cAt(p, pi) == 0 {
				return wmAbortAll, pi
			}
			if n := pi - s - 1; n < 0 || p[pi-1] != ':' {
				pi, pch = s-2, '[' // no ":]": a plain "["
				if tch == pch {
					matched = true
				}
				break
			} else {
				ok, known := posixClass(p[s:s+n], tch)
				if !known {
					return wmAbortAll, pi
				}
				matched = matched || ok
			}
			pch = 0
		default:
			if tch == pch {
				matched = true
			}
		}
		prev = pch
		pi++
		if pch = cAt(p, pi); pch == ']' {
			break
		}
	}
	if matched == negated || (pathname && tch == '/') {
		return wmNoMatch, pi
	}
	return wmMatch, pi
}

// posixClass reports whether c is in the named C-locale class, and
// whether there is one.
func posixClass(name string, c byte) (in, known bool) {
	upper, lower, digit := c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9'
	alpha := upper || lower
	graph := c > ' ' && c < 0x7f
	switch name {
	case "alnum":
		return alpha || digit, true
	case "alpha":
		return alpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !alpha && !digit, true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
