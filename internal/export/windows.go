package export

import (
	"fmt"
	"strings"
	"unicode"
)

// Names Windows reads differently. An export is made on Linux but
// extracted anywhere, its zip by Windows tools too, and Windows reads some
// names as something else: `out/..\..\evil.bat` is three levels up from
// out\ once `\` separates; `a:b` is the stream b of the file a, and `c:x`
// a path on drive C; CON, PRN, AUX, NUL, COM1-9 and LPT1-9 (with any
// extension, in any case) are devices; a trailing dot or space is dropped;
// `<>:"|?*` and control characters are refused; and names that differ
// only in case are one name. So no path of an export holds such a name,
// nor a look-alike of `\`, `/`, `:` or `"` that Windows' best-fit
// conversion to a code page (used by programs that are not Unicode) turns
// into one. WindowsNames is the one rule: the export withholds the files
// it refuses (a case clash counts only files it wrote, not those it
// withheld), and the zip of the artifact upload refuses them again.

// WindowsNames holds the paths of a tree as Windows reads them.
type WindowsNames struct {
	folded map[string]string // a path (and each directory above it) with its case folded -> as added
}

// Add adds the slash-separated path rel unless Check says why Windows
// would read it as another, which it returns.
func (n *WindowsNames) Add(rel string) string {
	why := n.Check(rel)
	if why == "" {
		n.Keep(rel)
	}
	return why
}

// Check returns why Windows would read the slash-separated path rel as
// something else, or "": a name in it that Windows reads differently
// (see windowsName), or a path (or a directory above it) that differs
// only in case from one kept before.
func (n *WindowsNames) Check(rel string) string {
	names := strings.Split(rel, "/")
	for i, name := range names {
		if why := windowsName(name); why != "" {
			if i == len(names)-1 {
				return "its name " + why
			}
			return fmt.Sprintf("the name %q in its path %s", name, why)
		}
	}
	for i := range names {
		p := strings.Join(names[:i+1], "/")
		if other, ok := n.folded[foldCase(p)]; ok && other != p {
			return fmt.Sprintf("%q differs only in case from %q, which is exported too, and Windows reads the two as one", p, other)
		}
	}
	return ""
}

// Keep records rel, and the directories above it, as paths of the tree.
func (n *WindowsNames) Keep(rel string) {
	if n.folded == nil {
		n.folded = map[string]string{}
	}
	names := strings.Split(rel, "/")
	for i := range names {
		p := strings.Join(names[:i+1], "/")
		if _, ok := n.folded[foldCase(p)]; !ok {
			n.folded[foldCase(p)] = p
		}
	}
}

// windowsName says how Windows reads the name (one element of a path)
// differently, or "" when it reads it as it is.
func windowsName(name string) string {
	for _, r := range name {
		switch {
		case r == '\\':
			return "holds `\\`, which Windows reads as a path separator"
		case r == ':':
			return "holds `:`, which Windows reads as a drive letter or an alternate data stream"
		case strings.ContainsRune(`<>"|?*`, r):
			return fmt.Sprintf("holds `%c`, which Windows does not allow in a name", r)
		case r < 0x20:
			return fmt.Sprintf("holds the control character U+%04X, which Windows does not allow in a name", r)
		}
		if like, ok := bestFit[r]; ok {
			return fmt.Sprintf("holds %c (U+%04X), which Windows turns into `%c` where it converts names to a code page", r, r, like)
		}
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return "ends in a dot or a space, which Windows drops"
	}
	stem, _, _ := strings.Cut(name, ".")
	if stem = strings.TrimRight(stem, " "); device(stem) {
		return fmt.Sprintf("is the device %s on Windows", strings.ToUpper(stem))
	}
	return ""
}

// bestFit maps look-alikes of the characters Windows reads as separators
// or refuses to the character its best-fit tables turn them into.
var bestFit = map[rune]rune{
	'\uFF3C': '\\', // fullwidth reverse solidus
	'\uFE68': '\\', // small reverse solidus
	'\u2216': '\\', // set minus
	'\uFF0F': '/',  // fullwidth solidus
	'\u2215': '/',  // division slash
	'\uFF1A': ':',  // fullwidth colon
	'\uFF02': '"',  // fullwidth quotation mark
}

// device reports whether stem (a name before its first dot, without the
// spaces before that dot) names a device on Windows: CON, PRN, AUX, NUL,
// CONIN$, CONOUT$, COM0-9 and LPT0-9 (with the digits ¹²³ too), in any
// case.
func device(stem string) bool {
	s := strings.ToUpper(stem)
	switch s {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	for _, port := range []string{"COM", "LPT"} {
		d, ok := strings.CutPrefix(s, port)
		if ok && (len(d) == 1 && '0' <= d[0] && d[0] <= '9' || d == "¹" || d == "²" || d == "³") {
			return true
		}
	}
	return false
}

// foldCase maps s to a key that two names share when Windows reads them
// as one: NTFS compares names upper-cased through its table, which is
// each character's simple upper-case mapping.
func foldCase(s string) string { return strings.Map(unicode.ToUpper, s) }
