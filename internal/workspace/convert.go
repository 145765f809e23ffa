package workspace

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Conversions between a file's bytes and its blob, as git 2.39's
// convert.c makes them: "clean" is what `git add` stores, "smudge" what a
// checkout writes. Supported exactly: text (set, unset, auto, input, and
// eol's values), eol, the legacy crlf, binary, ident, core.autocrlf and
// core.eol, with git's "safer autocrlf" rule (a text=auto file whose index
// blob holds CRLF keeps its CRs; the index is the [Base]). Not run: filter
// drivers and working-tree-encoding, which need programs and character
// sets: a file under either is accepted only as the Base holds it (an LFS
// pointer checked out without smudging), and is otherwise a [Problem].
// export-subst changes only what `git archive` writes.

// Checkout is how a snapshot reads a loop root: the git settings a
// checkout converts with (the zero value is a Linux runner's defaults:
// core.autocrlf false, core.eol native, i.e. LF) and the largest file a
// snapshot holds.
type Checkout struct {
	AutoCRLF string // core.autocrlf: "" or "false", "true", "input"
	EOL      string // core.eol: "" or "native" (LF here), "lf", "crlf"
	// MaxFileSize is the largest regular file a snapshot holds, in bytes;
	// 0 is DefaultMaxFileSize. A larger one fails the walk by its lstat
	// alone (ErrFileTooLarge): it is never read.
	MaxFileSize int64
	// Base is the tree the loop root was checked out from; nil is the
	// HEAD commit of its repository, read when first needed.
	Base Base
}

// crlfAction is convert.c's enum convert_crlf_action.
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
// the lines that decided it, for messages. It is comparable and costs no
// allocation: the stat cache keeps a blob id only while it is the same.
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

// setBy is the line or setting that set an attribute, for messages.
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

// convOf is convert.c's convert_attrs, under the settings of k.
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

// encodingOf is git_path_check_encoding ("" for UTF-8), or why git
// refuses the value.
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

// clean is convert_to_git: line endings, then ident.
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

// smudge is convert_to_working_tree: ident, then line endings.
func (k Checkout) smudge(blob []byte, c conv) []byte {
	if c.ident {
		blob = identToWorktree(blob)
	}
	return k.crlfToWorktree(blob, c.crlf)
}

// Problem is a file whose bytes no checkout of the snapshot reproduces,
// or may not: checks measured other bytes than the snapshot holds.
type Problem struct {
	Path string // slash-separated
	Why  string // which attribute, set where, and what a checkout writes instead
}

func (p Problem) String() string { return p.Path + ": " + p.Why }

// convertFile returns the blob cv makes of the bytes b of the file at rel,
// and why a checkout of it would not write b ("" when it would).
func (k Checkout) convertFile(rel string, b []byte, cv convs, base Base) (blob []byte, why string, err error) {
	c := cv.in
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
	if out := cv.out; out != c {
		if written := k.smudge(blob, out); !bytes.Equal(written, b) {
			if out.eolFrom == (setBy{}) && c.eolFrom != (setBy{}) {
				out.eolFrom = c.eolFrom
				out.eolFrom.ckin = true
			}
			return blob, checkoutDiffers(b, written, out), nil
		}
	}
	return blob, "", nil
}

// checkoutDiffers says how written (what a checkout writes) differs from
// b, naming the attributes and the lines that set them.
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

// eolSetting names the setting that makes text files CRLF.
func (k Checkout) eolSetting() string {
	if k.autocrlf() == "true" {
		return "core.autocrlf=true"
	}
	return "core.eol=crlf"
}
