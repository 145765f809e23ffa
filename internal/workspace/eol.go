package workspace

import "bytes"

// Line endings, as git 2.39's convert.c converts them.

// outputCRLF is convert.c's output_eol == EOL_CRLF.
func (k Checkout) outputCRLF(a crlfAction) bool {
	switch a {
	case crlfTextCRLF, crlfUndefined, crlfAutoCRLF:
		return true
	case crlfText, crlfAuto:
		return k.eolIsCRLF()
	}
	return false
}

// textStat is convert.c's struct text_stat.
type textStat struct {
	nul, lonecr, lonelf, crlf, printable, nonprintable int
}

// gatherStats is convert.c's gather_stats.
func gatherStats(b []byte) textStat {
	var s textStat
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				s.crlf++
				i++
			} else {
				s.lonecr++
			}
		case c == '\n':
			s.lonelf++
		case c == 127:
			s.nonprintable++
		case c < 32:
			switch c {
			case '\b', '\t', '\033', '\014':
				s.printable++
			case 0:
				s.nul++
				s.nonprintable++
			default:
				s.nonprintable++
			}
		default:
			s.printable++
		}
	}
	if len(b) > 0 && b[len(b)-1] == '\032' {
		s.nonprintable--
	}
	return s
}

// binary is convert.c's convert_is_binary.
func (s textStat) binary() bool {
	return s.lonecr > 0 || s.nul > 0 || s.printable>>7 < s.nonprintable
}

// willCRLF is convert.c's will_convert_lf_to_crlf.
func (k Checkout) willCRLF(s textStat, a crlfAction) bool {
	if !k.outputCRLF(a) || s.lonelf == 0 {
		return false
	}
	return !a.auto() || (s.lonecr == 0 && s.crlf == 0 && !s.binary())
}

// crlfToGit is convert.c's crlf_to_git; indexCRLF is has_crlf_in_index,
// asked only when it matters.
func crlfToGit(b []byte, a crlfAction, indexCRLF func() (bool, error)) ([]byte, error) {
	if a == crlfBinary || len(b) == 0 || bytes.IndexByte(b, '\r') < 0 {
		return b, nil
	}
	s := gatherStats(b)
	if s.crlf == 0 {
		return b, nil
	}
	if a.auto() {
		if s.binary() {
			return b, nil
		}
		if has, err := indexCRLF(); err != nil || has {
			return b, err
		}
		return bytes.ReplaceAll(b, []byte{'\r'}, nil), nil
	}
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte{'\n'}), nil
}

// hasCRLF is has_crlf_in_index's test of an index blob.
func hasCRLF(blob []byte) bool {
	if bytes.IndexByte(blob, '\r') < 0 {
		return false
	}
	s := gatherStats(blob)
	return !s.binary() && s.crlf > 0
}

// crlfToWorktree is convert.c's crlf_to_worktree.
func (k Checkout) crlfToWorktree(b []byte, a crlfAction) []byte {
	if len(b) == 0 || !k.outputCRLF(a) || !k.willCRLF(gatherStats(b), a) {
		return b
	}
	out := make([]byte, 0, len(b)+bytes.Count(b, []byte{'\n'}))
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		if i > 0 && b[i-1] == '\r' {
			out = append(out, b[:i+1]...)
		} else {
			out = append(append(out, b[:i]...), '\r', '\n')
		}
		b = b[i+1:]
	}
	return append(out, b...)
}
