// Package edit owns the SEARCH/REPLACE edit format in which builders of
// type "openai" answer (Aider's format): parsing a model's reply into
// blocks, and applying them inside a loop root.
//
// Apply writes only through workspace.Writer, only below the root, never
// through a symbolic link, never into .git or .loop and never into a path
// the caller refuses (the protected paths); it checks every block against
// the files as they are before it writes anything, so a reply is applied
// whole or not at all. It must never run anything, read outside the root
// it is given, or decide whether a goal is met: a reply is model output,
// and what it changed is measured by the runner's checks.
package edit

import (
	"fmt"
	"regexp"
	"strings"
)

// Block is one SEARCH/REPLACE block: replace the exact text Search in the
// file Path (slash-separated, relative to the loop root) by Replace. An
// empty Search creates the file.
type Block struct {
	Path    string
	Search  string
	Replace string
}

// MaxBlocks bounds the blocks of one reply.
const MaxBlocks = 200

var (
	searchRE  = regexp.MustCompile(`^<{5,9} SEARCH\s*$`)
	dividerRE = regexp.MustCompile(`^={5,9}\s*$`)
	replaceRE = regexp.MustCompile(`^>{5,9} REPLACE\s*$`)
	fenceRE   = regexp.MustCompile("^\\s*(```|~~~)")
)

// Parse reads the SEARCH/REPLACE blocks of a reply, in order. Each block
// is a file path on its own line, then <<<<<<< SEARCH, the text to find,
// =======, the text to put instead and >>>>>>> REPLACE. A code fence
// between the path line and the block (or around the whole block) is
// allowed. Text outside blocks is ignored; a reply without blocks has
// none. A block without its path line or without its closing markers is
// an error, and so is every other block then: nothing of a malformed
// reply is applied.
func Parse(reply string) ([]Block, error) {
	lines := strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n")
	var blocks []Block
	path := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case searchRE.MatchString(line):
			if path == "" {
				return nil, fmt.Errorf("block %d (line %d) has no file path line before its SEARCH marker", len(blocks)+1, i+1)
			}
			b, next, err := readBlock(lines, i+1, path)
			if err != nil {
				return nil, fmt.Errorf("block %d (%q, line %d): %w", len(blocks)+1, path, i+1, err)
			}
			if len(blocks) == MaxBlocks {
				return nil, fmt.Errorf("the reply has more than %d blocks", MaxBlocks)
			}
			blocks = append(blocks, b)
			i = next
		case dividerRE.MatchString(line) || replaceRE.MatchString(line):
			return nil, fmt.Errorf("line %d: %q outside a block (no SEARCH marker before it)", i+1, strings.TrimSpace(line))
		case fenceRE.MatchString(line) || strings.TrimSpace(line) == "":
		default:
			path = pathLine(line)
		}
	}
	return blocks, nil
}

// readBlock reads a block's text from lines[from:]: the SEARCH text up to
// the divider, the REPLACE text up to the closing marker. next is the
// index of the closing marker.
func readBlock(lines []string, from int, path string) (b Block, next int, err error) {
	b.Path = path
	div := -1
	for i := from; i < len(lines); i++ {
		switch line := lines[i]; {
		case searchRE.MatchString(line):
			return Block{}, 0, fmt.Errorf("a second SEARCH marker (line %d) before the block ended", i+1)
		case dividerRE.MatchString(line) && div < 0:
			div = i
		case dividerRE.MatchString(line):
			return Block{}, 0, fmt.Errorf("a second ======= divider (line %d)", i+1)
		case replaceRE.MatchString(line) && div < 0:
			return Block{}, 0, fmt.Errorf("the REPLACE marker (line %d) comes before any ======= divider", i+1)
		case replaceRE.MatchString(line):
			b.Search, b.Replace = text(lines[from:div]), text(lines[div+1:i])
			return b, i, nil
		}
	}
	if div < 0 {
		return Block{}, 0, fmt.Errorf("no ======= divider and no >>>>>>> REPLACE marker")
	}
	return Block{}, 0, fmt.Errorf("no >>>>>>> REPLACE marker")
}

// text joins lines back into text ending with a line break; no lines is "".
func text(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// pathLine is the path a line before a block names: the line without the
// decoration models put around a file name (a list marker, backticks,
// bold, a trailing colon).
func pathLine(line string) string {
	s := strings.TrimSpace(line)
	s = strings.TrimPrefix(s, "- ")
	s = strings.TrimLeft(s, "#")
	s = strings.Trim(strings.TrimSpace(s), "`*:")
	return strings.TrimSpace(s)
}
