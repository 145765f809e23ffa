package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// attrCases are trees whose attributes, for every path asked, must be
// what `git check-attr -a` says.
var attrCases = []struct {
	name  string
	ops   []op
	paths []string
}{
	{name: "precedence and macros", ops: []op{
		file(".gitattributes", "# comment\n[attr]crlfy text eol=crlf\n*.txt text\n*.txt -text\n*.sh crlfy\n"+
			"*.bin binary\n*.mix binary text\n*.xim text binary\nnoattr\n*.v eol=lf !eol\n*.w foo=bar -baz !qux\n"),
		file("sub/.gitattributes", "*.txt eol=crlf\n[attr]sub text\n*.sub sub\n*.sh -crlfy\n"),
		file("sub/deep/.gitattributes", "* ident\n*.txt !eol\n"),
	}, paths: []string{"a.txt", "a.sh", "a.bin", "a.mix", "a.xim", "noattr", "x/noattr", "a.v", "a.w",
		"sub/a.txt", "sub/a.sub", "sub/a.sh", "sub/deep/a.txt", "sub/deep/x/y.sh", "other/a.txt"}},
	{name: "patterns", ops: []op{
		file(".gitattributes", "/rooted r\ndir/ d\ndir/* ds\na/**/b aab\n**/x sx\nz/** zz\n*.[ch] c\n[!a]*.k nk\n"+
			"\\!bang bang\n\"sp ace\" quoted\n\"tab\\there\" tab\na**b ab\nm/*/n mn\n[[:digit:]]* dig\n[]x]q brk\n"+
			"\\#hash hash\n*.end/ enddir\nq?r qr\n"),
		file("p/.gitattributes", "rel/f relf\n/abs pabs\n*.c -c\n"),
	}, paths: []string{"rooted", "x/rooted", "dir", "dir/f", "dir/g/h", "a/b", "a/x/b", "a/x/y/b", "x", "q/x",
		"z/f", "z/f/g", "z", "f.c", "f.h", "f.ch", "a.k", "b.k", "!bang", "sp ace", "tab\there", "ab", "axb",
		"ax/yb", "a/b/x", "m/o/n", "m/o/p/n", "1f", "xq", "]q", "#hash", "a.end", "qxr", "q/r",
		"p/rel/f", "p/abs", "p/x/abs", "p/f.c", "rel/f"}},
	{name: "invalid and ignored lines", ops: []op{
		file(".gitattributes", "!neg.txt text\n*.bad te$t\n*.bad2 -\n*.ok ok\n*.eq a=b=c -d=e !f=g\n"+
			"\"unterminated text\n\"esc\\q\" t\n[attr] spaced m\n*.long "+strings.Repeat("x", 2100)+"\n"),
		file("s/.gitattributes", "[attr]m text\n*.m m\n"),
	}, paths: []string{"neg.txt", "a.bad", "a.bad2", "a.ok", "a.eq", "\"unterminated", "esc\\q", "[attr]", "a.long", "s/a.m"}},
	{name: "bom and crlf", ops: []op{
		file(".gitattributes", "\xef\xbb\xbf*.a a\r\n*.b b\r\n  *.c   c  d=1\t e\r\n"),
	}, paths: []string{"x.a", "x.b", "x.c"}},
}

func TestAttributesMatchGit(t *testing.T) {
	for _, tc := range attrCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := build(t, tc.ops...)
			compareAttrs(t, root, tc.paths)
		})
	}
}

// TestAttributesMatchGitGenerated compares random attributes files with
// git's reading of them.
func TestAttributesMatchGitGenerated(t *testing.T) {
	comps := []string{"a", "b", "x.txt", "y.sh", "dir", "d.c"}
	globs := []string{"*", "**", "?", "*.txt", "[ab]", "[!a]*", "x*", "*.[ch]", "a**", "\\a", "[[:alpha:]]*"}
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 22))
			pick := func(s []string) string { return s[rng.IntN(len(s))] }
			pattern := func() string {
				var parts []string
				for range 1 + rng.IntN(3) {
					if rng.IntN(2) == 0 {
						parts = append(parts, pick(comps))
					} else {
						parts = append(parts, pick(globs))
					}
				}
				p := strings.Join(parts, "/")
				switch rng.IntN(6) {
				case 0:
					p = "/" + p
				case 1:
					p += "/"
				}
				return p
			}
			attrs := []string{"text", "-text", "!text", "eol=crlf", "eol=lf", "binary", "ident", "m", "filter=lfs", "text=auto"}
			var ops []op
			for _, dir := range []string{"", "a", "a/b", "dir"} {
				var b strings.Builder
				if dir == "" {
					b.WriteString("[attr]m text eol=crlf\n")
				}
				for range 8 {
					fmt.Fprintf(&b, "%s %s %s\n", pattern(), pick(attrs), pick(attrs))
				}
				ops = append(ops, file(join(dir, ".gitattributes"), b.String()))
			}
			var paths []string
			for range 60 {
				var parts []string
				for range 1 + rng.IntN(4) {
					parts = append(parts, pick(comps))
				}
				paths = append(paths, strings.Join(parts, "/"))
			}
			compareAttrs(t, build(t, ops...), paths)
		})
	}
}

// compareAttrs compares the attributes of paths in root with git's.
func compareAttrs(t *testing.T, root string, paths []string) {
	t.Helper()
	want := checkAttr(t, root, paths)
	got := map[string]map[string]string{}
	for _, p := range paths {
		got[p] = ourAttrs(t, root, p)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attributes (-git +ours):\n%s", diff)
	}
}

// ourAttrs is what the walk's stacks assign to path in root.
func ourAttrs(t *testing.T, root, path string) map[string]string {
	t.Helper()
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := &walker{mode: hashing, base: NoBase}
	parts := strings.Split(path, "/")
	for i := range parts {
		dir := strings.Join(parts[:i], "/")
		sub := r
		if dir != "" {
			if sub, err = r.OpenRoot(filepath.FromSlash(dir)); err != nil {
				break
			}
		}
		in, out, err := w.readAttrs(sub, dir)
		if dir != "" {
			sub.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		if in != nil {
			w.in, w.out = w.in.push(in), w.out.push(out)
		}
	}
	out := map[string]string{}
	for _, v := range w.in.attrs(path, nil) {
		name := v.name
		switch v.value {
		case attrSet:
			out[name] = "set"
		case attrUnset:
			out[name] = "unset"
		case attrUnspecified:
		default:
			out[name] = v.value
		}
	}
	return out
}

// checkAttr asks `git check-attr -a` about paths in root, with a git
// directory of its own and no global or system configuration.
func checkAttr(t *testing.T, root string, paths []string) map[string]map[string]string {
	t.Helper()
	gitDir := filepath.Join(t.TempDir(), "oracle.git")
	runGit(t, "", "init", "-q", "--bare", gitDir)
	cmd := exec.Command("git", "--git-dir="+gitDir, "--work-tree="+root, "check-attr", "-a", "-z", "--stdin")
	cmd.Dir = root
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git check-attr: %v", err)
	}
	got := map[string]map[string]string{}
	for _, p := range paths {
		got[p] = map[string]string{}
	}
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		got[fields[i]][fields[i+1]] = fields[i+2]
	}
	if len(fields)%3 != 0 && !slices.Equal(fields, []string{""}) {
		t.Fatalf("git check-attr printed %q", out)
	}
	return got
}
