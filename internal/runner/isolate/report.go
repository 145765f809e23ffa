package isolate

// Kinds of [Change].
const (
	Modified = "modified" // the content (or the type: file or symlink) changed
	Created  = "created"  // the path did not exist in the node's base
	Mode     = "mode"     // only the executable bit changed
	Deleted  = "deleted"  // the node deleted the path; never propagated
)

// Reasons of a [Refusal].
const (
	ReasonProtected   = "protected path"
	ReasonOutside     = "symlink leads outside the loop root"
	ReasonLinkGit     = "symlink leads into .git"
	ReasonLinkLoop    = "symlink leads into .loop"
	ReasonGit         = "inside .git"
	ReasonLoop        = "inside .loop"
	ReasonUnreachable = "path is not reachable in the loop root"
	ReasonTooLarge    = "file larger than the largest a snapshot holds (run.max_file_size)"
)

// LoopRoot names the winner of a [Conflict] whose path was changed in the
// loop root by something other than a node published in this iteration
// (a non-isolated node, or a publication of an earlier iteration).
const LoopRoot = "loop root"

// Report is what one Publish did. Paths are slash-separated and relative to
// the loop root; entries are in the order of the nodes given to Publish and,
// for each node, of their paths.
type Report struct {
	Published []Change   // copied into the root
	Conflicts []Conflict // not copied: someone changed the root first
	Refused   []Refusal  // not copied, and the worktree's copy was put back
	Deletions []Change   // Kind Deleted: reported once, never propagated
}

// Change is a path a node changed.
type Change struct {
	Node string
	Path string
	Kind string
}

// Conflict is a change of Loser's to Path that was not published because
// Winner changed the path in the root since Loser's worktree was seeded.
type Conflict struct {
	Path   string
	Winner string // a node name, or LoopRoot
	Loser  string
}

// Refusal is a change that may never be published.
type Refusal struct {
	Node   string
	Path   string
	Reason string
}
