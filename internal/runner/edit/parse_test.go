package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reply string
		want        []Block
		wantErr     string
	}{
		{name: "no blocks", reply: "I looked and changed nothing.\n"},
		{name: "plain", reply: "Fix:\n\nsrc/a.go\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n",
			want: []Block{{Path: "src/a.go", Search: "old\n", Replace: "new\n"}}},
		{name: "fenced, the path before the fence", reply: "a.txt\n```text\n<<<<<<< SEARCH\nx\ny\n=======\nz\n>>>>>>> REPLACE\n```\n",
			want: []Block{{Path: "a.txt", Search: "x\ny\n", Replace: "z\n"}}},
		{name: "fenced, the path inside the fence", reply: "```go\nmain.go\n<<<<<<< SEARCH\na\n=======\n>>>>>>> REPLACE\n```\n",
			want: []Block{{Path: "main.go", Search: "a\n", Replace: ""}}},
		{name: "empty search creates", reply: "**new/file.md**:\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n",
			want: []Block{{Path: "new/file.md", Replace: "hello\n"}}},
		{name: "two blocks, the second reuses the path", reply: "`a`\n<<<<<<< SEARCH\n1\n=======\n2\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n3\n=======\n4\n>>>>>>> REPLACE\nb\n<<<<<<< SEARCH\n5\n=======\n6\n>>>>>>> REPLACE",
			want: []Block{{"a", "1\n", "2\n"}, {"a", "3\n", "4\n"}, {"b", "5\n", "6\n"}}},
		{name: "crlf", reply: "a\r\n<<<<<<< SEARCH\r\nx\r\n=======\r\ny\r\n>>>>>>> REPLACE\r\n",
			want: []Block{{"a", "x\n", "y\n"}}},
		{name: "no path", reply: "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
			wantErr: "block 1 (line 1) has no file path line before its SEARCH marker"},
		{name: "unterminated", reply: "a\n<<<<<<< SEARCH\nx\n=======\ny\n",
			wantErr: `block 1 ("a", line 2): no >>>>>>> REPLACE marker`},
		{name: "no divider", reply: "a\n<<<<<<< SEARCH\nx\n",
			wantErr: `block 1 ("a", line 2): no ======= divider and no >>>>>>> REPLACE marker`},
		{name: "replace before divider", reply: "a\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n",
			wantErr: `block 1 ("a", line 2): the REPLACE marker (line 4) comes before any ======= divider`},
		{name: "nested search", reply: "a\n<<<<<<< SEARCH\n<<<<<<< SEARCH\n",
			wantErr: `block 1 ("a", line 2): a second SEARCH marker (line 3) before the block ended`},
		{name: "stray divider", reply: "a\n=======\n", wantErr: `line 2: "=======" outside a block (no SEARCH marker before it)`},
		{name: "a good block then a broken one", reply: "a\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\nb\n<<<<<<< SEARCH\n",
			wantErr: `block 2 ("b", line 8): no ======= divider and no >>>>>>> REPLACE marker`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.reply)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("Parse returned blocks with its error: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("blocks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseBoundsBlocks(t *testing.T) {
	t.Parallel()
	reply := "a\n" + strings.Repeat("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", MaxBlocks+1)
	if _, err := Parse(reply); err == nil || !strings.Contains(err.Error(), "more than 200 blocks") {
		t.Fatalf("Parse of %d blocks: %v", MaxBlocks+1, err)
	}
}

// FuzzParse checks that Parse never panics and that what it returns is
// consistent: blocks with paths, or an error and nothing.
func FuzzParse(f *testing.F) {
	f.Add("a\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n")
	f.Add("```go\nmain.go\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n```\n")
	f.Add("<<<<<<<<< SEARCH\n=========\n>>>>>>>>> REPLACE")
	f.Add("a\r\n<<<<<<< SEARCH\r\n")
	f.Fuzz(func(t *testing.T, reply string) {
		blocks, err := Parse(reply)
		if err != nil && blocks != nil {
			t.Fatalf("blocks with an error: %v", err)
		}
		for _, b := range blocks {
			if b.Path == "" {
				t.Fatalf("a block without a path: %+v", b)
			}
			if !strings.Contains(reply, strings.TrimSuffix(b.Search, "\n")) && !strings.Contains(strings.ReplaceAll(reply, "\r\n", "\n"), b.Search) {
				t.Fatalf("search text %q is not in the reply", b.Search)
			}
		}
		if len(blocks) > MaxBlocks {
			t.Fatalf("%d blocks", len(blocks))
		}
	})
}
