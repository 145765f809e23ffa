package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
)

// Changes is what changes.patch holds: the change from the commit the run
// started from to the workspace snapshot the gate certified.
type Changes struct {
	Patch   string // a unified diff that `git apply` takes on a checkout of the commit; "" when nothing changed
	Files   int    // how many paths it changes
	Missing string // why the export has no changes.patch (the commit is unknown, say); "" when it has one
}

// patchFile is the name of the patch in an export.
const patchFile = "changes.patch"

// writePatch writes changes.patch, unless there is none or it holds a
// provider secret: then it is withheld, like any file of the export.
func (w *writer) writePatch(c *Changes) {
	if c == nil || c.Missing != "" || w.err != nil {
		return
	}
	w.createScanned(patchFile, "", strings.NewReader(c.Patch))
}

// writeChanges says in EVIDENCE.md what changes.patch holds, or why the
// export has none.
func writeChanges(b *strings.Builder, in Input, withheld []Withheld) {
	c := in.Changes
	if c == nil {
		return
	}
	b.WriteString("\n## Changes\n\n")
	switch {
	case c.Missing != "":
		fmt.Fprintf(b, "This export has no `%s`: %s.\n", patchFile, c.Missing)
	case slices.ContainsFunc(withheld, func(wh Withheld) bool { return wh.Path == patchFile }):
		fmt.Fprintf(b, "`%s` was left out: it holds a provider secret (see \"Files left out\").\n", patchFile)
	case c.Files == 0:
		fmt.Fprintf(b, "`%s` is empty: nothing differs between commit %s and the certified snapshot %s.\n", patchFile, code(phrase.Short(in.Commit)), code(phrase.Short(in.Snapshot)))
	default:
		fmt.Fprintf(b, "`%s` holds the change from commit %s to the certified snapshot %s (%s); `git apply %s` applies it to a checkout of that commit.\n",
			patchFile, code(phrase.Short(in.Commit)), code(phrase.Short(in.Snapshot)), phrase.Plural(c.Files, "path", "paths"), patchFile)
	}
}
