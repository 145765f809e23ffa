package workspace

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Conversions between a file's bytes and its blob, as git 2.39's
// convert.c makes them: "clean" is what `git add` stores (the blob a
// snapshot hashes, the state branch stores and a delivery pushes), and
// "smudge" what a checkout writes. Supported exactly: text (set, unset,
// auto, and the values input and eol's), eol=lf|crlf, the legacy crlf
// attribute, binary (a macro for -text among others), ident, and the
// core.autocrlf and core.eol settings ([Checkout]), with git's "safer
// autocrlf" rule (a text=auto file whose blob in the index holds CRLF
// keeps its CRs: the index is the tree the loop root was checked out
// from, [Base]). Not run: filter drivers (filter=lfs among them) and
// working-tree-encoding, which need programs and character sets: a file
// under either is accepted only as the tree it was checked out from holds
// it (an LFS pointer checked out without smudging), and is otherwise a
// [Problem]. export-subst only changes what `git archive` writes, never
// a checkout, so it is no conversion at all.

// Checkout is how a snapshot reads a loop root: the git settings a
// checkout converts files with — what a checkout on a Linux runner has
// unless the repository says otherwise (core.autocrlf false, core.eol
// native, which is LF on Linux) is the zero value; the composition root
// reads the loop root's once with `git config` — and the largest file a
// snapshot holds.
type Checkout struct {
	AutoCRLF string // core.autocrlf: "" or "false", "true", "input"
	EOL      string // core.eol: "" or "native" (LF here), "lf", "crlf"
	// MaxFileSize is the largest regular file a snapshot holds, in bytes;
	// 0 is DefaultMaxFileSize. A larger one fails the walk with an error
	// wrapping ErrFileTooLarge that names it, by its lstat alone: it is
	// never read.
	MaxFileSize int64
	// Base is the tree the loop root was checked out from, as a fresh
	// checkout's index holds it (see [Base]); nil is the HEAD commit of the
	// loop root's repository, read when first needed.
	Base Base
}

// crlfAction is convert.c's enum convert_crlf_action; the zero value
// converts nothing.
type crlfAction uint8

const (
	crlfBinary crlfAction = iota
	crlfUndefined
	crlfText
	crlfTextInput
	crlfTextCRLF
	crlfAuto
	crlfAutoCRLF
	crlfAutoInput
)

func (a crlfAction) auto() bool { return a == crlfAuto || a == crlfAutoCRLF || a == crlfAutoInput }

// conv is what converts one file (convert.c's struct conv_attrs), with
// the lines that decided it, for messages. It is comparable, and working
// it out allocates nothing: the stat cache keeps a blob id only while a
// file's conv is the same.
type conv struct {
	crlf     crlfAction
	ident    bool
	filter   string // a filter driver's name
	encoding string // working-tree-encoding, or "" for none (UTF-8)
	bad      string // why git would refuse the file (a working-tree-encoding of true or false)
	eolFrom  setBy  // what decided the line endings: the line that set eol, text or crlf, or a setting
	identAt  setBy  // the line that set ident
	filterAt setBy  // the line that set filter or working-tree-encoding
}

// setBy is what set an attribute: a line of an attributes file, or a
// setting, for messages. It keeps the parsed file's own strings.
type setBy struct {
	line    attrValue
	name    string // the attribute
	note    string // said after it: " (text)"
	setting string // a setting that decided instead of a line ("core.autocrlf=true")
	with    string // a setting that decided with the line ("core.eol=crlf")
	ckin    bool   // a line git add applies and a checkout does not
}

func (s setBy) String() string {
	var b strings.Builder
	switch {
	case s.setting != "":
		b.WriteString(s.setting)
	case s.line.from:
		b.WriteString(s.line.origin() + " sets " + spelled(s.name, s.line.value) + s.note)
	default:
		return ""
	}
	if s.with != "" {
		b.WriteString(" (with " + s.with + ")")
	}
	if s.ckin {
		b.WriteString(" for git add, which a checkout does not apply (the file is ignored, or git reads its first line otherwise)")
	}
	return b.String()
}

// spelled spells an attribute's value as a line does.
func spelled(name, value string) string {
	switch value {
	case attrSet:
		return name
	case attrUnset:
		return "-" + name
	case attrUnspecified:
		return "!" + name
	}
	return name + "=" + value
}

// converts reports whether c changes anything or needs a look.
func (c conv) converts() bool {
	return c.crlf != crlfBinary || c.ident || c.filter != "" || c.encoding != "" || c.bad != ""
}

// convOf is convert.c's convert_attrs for a file with the attributes
// attrs, under the settings of k.
func convOf(attrs attrList, k Checkout) conv {
	var c conv
	text, crlf, eol := attrs.get("text"), attrs.get("crlf"), attrs.get("eol")
	c.crlf, c.eolFrom = crlfOf(text.value), setBy{line: text, name: "text"}
	if c.crlf == crlfUndefined {
		c.crlf, c.eolFrom = crlfOf(crlf.value), setBy{line: crlf, name: "crlf"}
	}
	if id := attrs.get("ident"); id.value == attrSet {
		c.ident, c.identAt = true, setBy{line: id, name: "ident"}
	}
	if f := attrs.get("filter"); isValue(f.value) {
		c.filter, c.filterAt = f.value, setBy{line: f, name: "filter"}
	}
	if c.crlf != crlfBinary {
		switch e := eolOf(eol.value); {
		case c.crlf == crlfAuto && e == "lf":
			c.crlf, c.eolFrom = crlfAutoInput, setBy{line: eol, name: "eol", note: " (text=auto)"}
		case c.crlf == crlfAuto && e == "crlf":
			c.crlf, c.eolFrom = crlfAutoCRLF, setBy{line: eol, name: "eol", note: " (text=auto)"}
		case e == "lf":
			c.crlf, c.eolFrom = crlfTextInput, setBy{line: eol, name: "eol", note: " (text)"}
		case e == "crlf":
			c.crlf, c.eolFrom = crlfTextCRLF, setBy{line: eol, name: "eol", note: " (text)"}
		}
	}
	wte := attrs.get("working-tree-encoding")
	if c.encoding, c.bad = encodingOf(wte); c.encoding != "" || c.bad != "" {
		c.filterAt = setBy{line: wte, name: "working-tree-encoding"}
	}
	byEOL := c.crlf == crlfText || c.crlf == crlfAuto // the settings decide the line endings
	switch {
	case c.crlf == crlfText && k.eolIsCRLF():
		c.crlf = crlfTextCRLF
	case c.crlf == crlfText:
		c.crlf = crlfTextInput
	case c.crlf == crlfUndefined && k.autocrlf() == "true":
		c.crlf, c.eolFrom = crlfAutoCRLF, setBy{setting: "core.autocrlf=true"}
	case c.crlf == crlfUndefined && k.autocrlf() == "input":
		c.crlf, c.eolFrom = crlfAutoInput, setBy{setting: "core.autocrlf=input"}
	case c.crlf == crlfUndefined:
		c.crlf = crlfBinary
	}
	if byEOL && k.eolIsCRLF() {
		c.eolFrom.with = k.eolSetting()
	}
	if c.crlf == crlfBinary {
		c.eolFrom = setBy{}
	}
	return c
}

// isValue reports whether v is a value, not set, unset or unspecified.
func isValue(v string) bool { return v != "" && v[0] != 0 }

// crlfOf is git_path_check_crlf.
func crlfOf(v string) crlfAction {
	switch v {
	case attrSet:
		return crlfText
	case attrUnset:
		return crlfBinary
	case "input":
		return crlfTextInput
	case "auto":
		return crlfAuto
	}
	return crlfUndefined
}

// eolOf is git_path_check_eol: "lf", "crlf" or "".
func eolOf(v string) string {
	if v == "lf" || v == "crlf" {
		return v
	}
	return ""
}

// encodingOf is git_path_check_encoding: the encoding, none for UTF-8,
// or why git refuses the value.
func encodingOf(v attrValue) (enc, bad string) {
	switch {
	case v.value == attrSet || v.value == attrUnset:
		return "", "working-tree-encoding is set to true or false, which git refuses (\"true/false are no valid working-tree-encodings\")"
	case !isValue(v.value):
		return "", ""
	case strings.EqualFold(v.value, "utf-8") || strings.EqualFold(v.value, "utf8"):
		return "", ""
	}
	return v.value, ""
}

func (k Checkout) autocrlf() string {
	if k.AutoCRLF == "" {
		return "false"
	}
	return k.AutoCRLF
}

// eolIsCRLF is convert.c's text_eol_is_crlf, on Linux (native is LF).
func (k Checkout) eolIsCRLF() bool {
	switch k.autocrlf() {
	case "true":
		return true
	case "input":
		return false
	}
	return k.EOL == "crlf"
}

// outputCRLF reports whether a checkout writes CRLF line endings for a
// file with action a (convert.c's output_eol).
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

// crlfToGit is convert.c's crlf_to_git; indexCRLF reports whether the
// file's blob in the index has CRLF line endings (has_crlf_in_index),
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

// countIdent is convert.c's count_ident.
func countIdent(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		i++
		if c != '$' {
			continue
		}
		if len(b)-i < 3 {
			break
		}
		if b[i] != 'I' || b[i+1] != 'd' {
			continue
		}
		c = b[i+2]
		i += 3
		if c == '$' {
			n++
		}
		if c != ':' {
			continue
		}
		for i < len(b) {
			c = b[i]
			i++
			if c == '$' {
				n++
				break
			}
			if c == '\n' {
				break
			}
		}
	}
	return n
}

// identToGit is convert.c's ident_to_git: "$Id: ... $" collapses to "$Id$".
func identToGit(b []byte) []byte {
	if countIdent(b) == 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for {
		d := bytes.IndexByte(b, '$')
		if d < 0 {
			break
		}
		out, b = append(out, b[:d+1]...), b[d+1:]
		if len(b) > 3 && string(b[:3]) == "Id:" {
			e := bytes.IndexByte(b[3:], '$')
			if e < 0 {
				break
			}
			if bytes.IndexByte(b[3:3+e], '\n') >= 0 {
				continue
			}
			out, b = append(out, "Id$"...), b[3+e+1:]
		}
	}
	return append(out, b...)
}

// identToWorktree is convert.c's ident_to_worktree: "$Id$" (and an
// expanded id that crept into the blob) becomes "$Id: <blob id> $".
func identToWorktree(b []byte) []byte {
	if countIdent(b) == 0 {
		return b
	}
	id := hashObject("blob", b).String()
	out := make([]byte, 0, len(b)+countIdent(b)*(len(id)+3))
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

// clean is convert_to_git for the conversions that are run: line endings,
// then ident.
func (k Checkout) clean(b []byte, c conv, indexCRLF func() (bool, error)) ([]byte, error) {
	b, err := crlfToGit(b, c.crlf, indexCRLF)
	if err != nil {
		return nil, err
	}
	if c.ident {
		b = identToGit(b)
	}
	return b, nil
}

// smudge is convert_to_working_tree for the conversions that are run:
// ident, then line endings.
func (k Checkout) smudge(blob []byte, c conv) []byte {
	if c.ident {
		blob = identToWorktree(blob)
	}
	return k.crlfToWorktree(blob, c.crlf)
}

// Problem is a file whose bytes in the loop root no checkout of the
// snapshot reproduces, or that loop-action cannot tell a checkout would:
// checks that measured it measured something else than the certified
// snapshot holds.
type Problem struct {
	Path string // slash-separated
	Why  string // which attribute, set where, and what a checkout writes instead
}

func (p Problem) String() string { return p.Path + ": " + p.Why }

// convertOne returns the blob of the bytes b of the file at rel, which
// c converts, and why a checkout of that blob would not write b ("" when
// it would). base is asked about the file when a conversion depends on it.
func (k Checkout) convertOne(rel string, b []byte, c conv, base Base) (blob []byte, why string, err error) {
	if c.bad != "" {
		return b, c.filterAt.String() + ", which git refuses to check out: " + c.bad, nil
	}
	blob, err = k.clean(b, c, func() (bool, error) {
		data, ok, err := base.Blob(rel)
		return ok && hasCRLF(data), err
	})
	if err != nil {
		return nil, "", err
	}
	if c.filter != "" || c.encoding != "" {
		data, ok, err := base.Blob(rel)
		if err != nil {
			return nil, "", err
		}
		if !ok || !bytes.Equal(data, blob) {
			what := "runs no filter driver"
			if c.filter == "" {
				what = "converts no encoding"
			}
			return blob, c.filterAt.String() + "; loop-action " + what + ", and the file is not what the tree the run started from holds there: a checkout may write other bytes", nil
		}
	}
	if written := k.smudge(blob, c); !bytes.Equal(written, b) {
		return blob, checkoutDiffers(b, written, c), nil
	}
	return blob, "", nil
}

// checkoutDiffers says how written (what a checkout writes) differs from the
// file's bytes b, naming the attributes and the lines that set them.
func checkoutDiffers(b, written []byte, c conv) string {
	var parts []string
	if c.ident && !slices.Equal(idents(b), idents(written)) {
		parts = append(parts, fmt.Sprintf("%s; a checkout writes %s where the workspace has %s",
			c.identAt.String(), quoteIdents(idents(written)), quoteIdents(idents(b))))
	}
	sb, sw := gatherStats(b), gatherStats(written)
	if sb.crlf != sw.crlf || sb.lonecr != sw.lonecr || sb.lonelf != sw.lonelf || len(parts) == 0 {
		what := "other line endings than the workspace has"
		switch {
		case sw.crlf > sb.crlf && sb.lonelf > sw.lonelf:
			what = "CRLF line endings where the workspace has LF"
		case sw.crlf < sb.crlf:
			what = "LF line endings where the workspace has CRLF"
		}
		parts = append(parts, fmt.Sprintf("%s; a checkout writes %s", orSetting(c.eolFrom), what))
	}
	return strings.Join(parts, ", and ")
}

func orSetting(s setBy) string {
	if s := s.String(); s != "" {
		return s
	}
	return "the line-ending settings"
}

// identRE finds what ident expands or collapses.
var identRE = regexp.MustCompile(`\$Id(\$|:[^$\n]*\$)`)

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

// eolSetting names the setting that makes text files CRLF.
func (k Checkout) eolSetting() string {
	if k.autocrlf() == "true" {
		return "core.autocrlf=true"
	}
	return "core.eol=crlf"
}
