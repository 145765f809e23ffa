package workspace

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzAttributes: any attributes file parses, in both of git's readings,
// into lines git would keep (valid names, no negative or empty pattern),
// its attributes apply to any path without a panic, and the conversions
// they give are stable: what a checkout writes of a blob cleans back to
// that blob.
func FuzzAttributes(f *testing.F) {
	for _, seed := range []string{
		"*.sh text eol=crlf\n", "[attr]m text ident\n*.c m -diff\n", "\"a b\" -text !eol x=y\n",
		"\xef\xbb\xbf* text=auto\r\n", "a/**/b binary\n!neg text\n", "[!a]*.[ch] ident\n\\!x crlf=input\n",
		"*.bin filter=lfs diff=lfs merge=lfs -text\n", "* working-tree-encoding=UTF-16\n",
	} {
		f.Add([]byte(seed), "dir/f.sh", []byte("a\r\nb\n$Id$\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte, path string, content []byte) {
		path = strings.Trim(strings.ReplaceAll(path, "\x00", ""), "/")
		if path == "" || strings.Contains(path, "//") {
			path = "f"
		}
		for _, fromFile := range []bool{true, false} {
			for _, dir := range []string{"", "dir"} {
				af := parseAttrs(data, dir, fromFile)
				for _, l := range af.lines {
					for _, a := range l.assigns {
						if !validAttrName(a.name) {
							t.Fatalf("kept an invalid attribute name %q", a.name)
						}
					}
					if l.macro == "" && strings.HasPrefix(l.pattern, "!") {
						t.Fatalf("kept a negative pattern %q", l.pattern)
					}
					if l.macro != "" && dir != "" {
						t.Fatalf("kept macro %q below the top", l.macro)
					}
				}
				stack := attrStack{af}
				if dir != "" {
					stack = attrStack{parseAttrs(nil, "", fromFile), af}
				}
				for _, k := range []Checkout{{}, {AutoCRLF: "true"}, {EOL: "crlf"}, {AutoCRLF: "input"}} {
					c := convOf(stack.attrs(path, nil), k)
					blob, err := k.clean(content, c, func() (bool, error) { return false, nil })
					if err != nil {
						t.Fatal(err)
					}
					again, err := k.clean(k.smudge(blob, c), c, func() (bool, error) { return false, nil })
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(again, blob) {
						t.Fatalf("%+v: clean(smudge(%q)) = %q", c, blob, again)
					}
				}
			}
		}
	})
}
