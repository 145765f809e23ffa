package delivery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// source is a file long enough for hunks far apart, with lines git takes
// for function headers.
var source = func() string {
	var b strings.Builder
	for i := range 40 {
		if i%10 == 0 {
			fmt.Fprintf(&b, "func f%d() {   \n", i)
		} else {
			fmt.Fprintf(&b, "\tline %d\n", i)
		}
	}
	return b.String()
}()

// patchBase is the repository the patch tests start from.
var patchBase = files{
	"calc.sh":         "echo $(($1 - $2))\n",
	"src/long.go":     source,
	"no-newline":      "last line without one",
	"a b.txt":         "spaced\n",
	"tab\there":       "tab\n",
	"quote\"d":        "quote\n",
	"é.txt":           "accent\n",
	"run.sh":          "#!/bin/sh\necho run\n",
	"link":            "->calc.sh",
	"gone.txt":        "to be deleted\nline 2\n",
	"docs/guide.md":   "guide\n",
	"empty-later.txt": "will be emptied\n",
}

// patchEdits is what the agent did to patchBase: every kind of text change.
func patchEdits(t *testing.T, root string) {
	long := strings.Replace(source, "\tline 2\n", "\tline two\n", 1)
	long = strings.Replace(long, "\tline 25\n", "\tline 25\n\tinserted\n", 1)
	long = strings.Replace(long, "\tline 38\n", "", 1)
	write(t, root, files{
		"calc.sh": "echo $(($1 + $2))\n", "src/long.go": long, "no-newline": "still none, changed",
		"a b.txt": "spaced out\n", "tab\there": "tab 2\n", "quote\"d": "quote 2\n", "é.txt": "accent 2\n",
		"link": "->run.sh", "new/file.txt": "brand new\nfile\n", "empty.txt": "", "empty-later.txt": "",
		"docs": "a file now\n",
	})
	remove("gone.txt")(t, root)
	chmod("run.sh", 0o755)(t, root)
}

// delivered builds the delivery of root on head and pushes it to bare as
// refs/heads/delivered.
func delivered(t *testing.T, root, head, bare string) *Delivery {
	t.Helper()
	d, err := Build(context.Background(), spec(root, head))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Push(context.Background(), Remote{URL: "file://" + bare}, "refs/heads/delivered", ""); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPatchIsGitDiff: for text changes the patch is what `git diff`
// prints between the base and the delivered commit.
func TestPatchIsGitDiff(t *testing.T) {
	bare, head := origin(t, patchBase)
	root := clone(t, "file://"+bare)
	patchEdits(t, root)
	d := delivered(t, root, head, bare)
	got, err := d.Patch()
	if err != nil {
		t.Fatal(err)
	}
	want := gitfake.Git(t, "", "--git-dir="+bare, "diff", "--no-renames", head, d.SHA)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Patch() differs from git diff (-git +ours):\n%s", diff)
	}
	applies(t, bare, head, got, d.Snapshot)
}

// TestPatchApplies: with binary files, links and random line edits, `git
// apply` on a checkout of the base turns it into the delivered tree.
func TestPatchApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base, edited := files{"bin/blob": "\x00\x01\x02binary\n", "bin/gone": "\x00gone", "text-to-bin": "text\n"}, files{}
	for i := range 40 {
		old := randomText(rng, 30)
		base[fmt.Sprintf("r/%02d.txt", i)] = old
		edited[fmt.Sprintf("r/%02d.txt", i)] = mutate(rng, old)
	}
	var oldBig, newBig strings.Builder // more edits apart than the line diff searches
	for i := range maxEdits {
		fmt.Fprintf(&oldBig, "old %d\n", i)
		fmt.Fprintf(&newBig, "new %d\n", i)
	}
	base["big.txt"], edited["big.txt"] = "same head\n"+oldBig.String()+"same tail\n", "same head\n"+newBig.String()+"same tail\n"
	edited["bin/blob"] = "\x00\x01\x03binary, changed\n" + strings.Repeat("\xff\x00", 300)
	edited["bin/new"] = "\x00new"
	edited["text-to-bin"] = "now\x00binary"
	edited["file-to-link"] = "->bin/blob"
	base["file-to-link"] = "a file\n"
	bare, head := origin(t, base)
	root := clone(t, "file://"+bare)
	write(t, root, edited)
	remove("bin/gone")(t, root)
	d := delivered(t, root, head, bare)
	patch, err := d.Patch()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch, "GIT binary patch") {
		t.Fatalf("no binary patch in:\n%s", patch)
	}
	applies(t, bare, head, patch, d.Snapshot)
}

// applies applies patch with git apply on a fresh checkout of head and
// checks that the checkout then has the snapshot want.
func applies(t *testing.T, bare, head, patch, want string) {
	t.Helper()
	co := filepath.Join(t.TempDir(), "co")
	gitfake.Git(t, "", "clone", "-q", "file://"+bare, co)
	gitfake.Git(t, co, "checkout", "-q", head)
	file := filepath.Join(t.TempDir(), "changes.patch")
	if err := os.WriteFile(file, []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	gitfake.Git(t, co, "apply", file)
	got, err := workspace.NewHasher(co).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("after git apply the checkout is at %s, want the delivered %s; status:\n%s", got, want, gitfake.Git(t, co, "status", "--short"))
	}
}

// randomText is n lines drawn from a small set, so that the line diff
// meets repeated lines, with or without a final newline.
func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "line %c\n", 'a'+rune(rng.IntN(5)))
	}
	s := b.String()
	if rng.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// mutate deletes, inserts and changes random lines of s.
func mutate(rng *rand.Rand, s string) string {
	ls := strings.SplitAfter(s, "\n")
	var out []string
	for _, l := range ls {
		switch rng.IntN(8) {
		case 0: // deleted
		case 1:
			out = append(out, l, fmt.Sprintf("new %d\n", rng.IntN(3)))
		case 2:
			out = append(out, "changed "+l)
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestPatchAppliesToRandomTrees: for random bases and random edits of
// them (text with and without a final newline, CRLF text, empty files,
// binaries, links, the execute bit, deletions, files becoming
// directories, links or binaries and back, names git quotes), `git apply`
// of the patch on a checkout of the base gives the delivered tree, and
// the same root gives the same patch bytes.
func TestPatchAppliesToRandomTrees(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 24))
			base := randomTree(rng, nil)
			edited := randomTree(rng, base)
			bare, head := origin(t, base)
			root := clone(t, "file://"+bare)
			replaceFiles(t, root, edited)
			d := delivered(t, root, head, bare)
			patch, err := d.Patch()
			if err != nil {
				t.Fatal(err)
			}
			applies(t, bare, head, patch, d.Snapshot)
			again, err := Build(t.Context(), spec(root, head))
			if err != nil {
				t.Fatal(err)
			}
			if p, err := again.Patch(); err != nil || p != patch {
				t.Errorf("a second Build of the same root gives another patch (%v):\n%s", err, cmp.Diff(patch, p))
			}
		})
	}
}

// randomPaths are the paths random trees are made of: some are a file in
// one tree and a directory in another.
var randomPaths = []string{
	"a.txt", "b c.txt", "tab\tname", "quo\"te", "é.md", "dir/x", "dir/y", "dir",
	"deep/er/z", "deep/er", "deep", "tab\tdir/f", "tab\tdir", "link", "bin.dat", "crlf.bat", "empty", "run.sh",
}

// randomTree returns a tree of random paths (none below another): with
// from nil, new ones; else an edit of from that keeps about half its
// files as they are and mutates some text.
func randomTree(rng *rand.Rand, from files) files {
	out := files{}
	free := func(p string) bool {
		for q := range out {
			if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
				return false
			}
		}
		return true
	}
	for _, p := range rng.Perm(len(randomPaths)) {
		p := randomPaths[p]
		old, had := from[p]
		switch {
		case !free(p):
		case had && rng.IntN(2) == 0:
			out[p] = old
		case had && rng.IntN(3) == 0 && !strings.HasPrefix(old, "->") && !strings.ContainsRune(old, 0):
			out[p] = mutate(rng, old)
		case rng.IntN(4) > 0:
			out[p] = randomBody(rng, p)
		}
	}
	return out
}

// randomBody is a file or link at p of one of the kinds a patch must
// carry. A link never leads below itself: `git apply` of git's own diff
// cannot create a file below a link that loops (ELOOP).
func randomBody(rng *rand.Rand, p string) string {
	switch rng.IntN(8) {
	case 0:
		if to := randomPaths[rng.IntN(len(randomPaths))]; to != p && !strings.HasPrefix(to, p+"/") {
			return "->" + to
		}
		return "->elsewhere"
	case 1:
		return "x:" + randomText(rng, 5)
	case 2:
		return ""
	case 3:
		return strings.ReplaceAll(randomText(rng, 12), "\n", "\r\n")
	case 4:
		return "\x00binary " + randomText(rng, 3)
	}
	return randomText(rng, 1+rng.IntN(20))
}

// replaceFiles makes root's files (all but .git) exactly fs.
func replaceFiles(t *testing.T, root string, fs files) {
	t.Helper()
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Name() != ".git" {
			remove(de.Name())(t, root)
		}
	}
	write(t, root, fs)
}
