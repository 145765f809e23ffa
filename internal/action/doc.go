// Package action owns loop-action's GitHub face: it reads the Actions
// runner's contract (inputs, GITHUB_* variables, the event payload), parses
// /loop comment commands, decides what an event means for the loop, reports
// through PR comments, commit statuses, the job summary, annotations,
// outputs and the artifact service, and delivers the work the gate
// certified: one commit pushed onto a pull request's branch, a pull request
// from a loop branch, or a diff in the comment (the deliver input).
//
// It holds a run only through a runner.Session — one lock and one load of
// the checkpoint per job, under which comments are handled and the loop
// runs — and decides reviews by the runner's review rule. While a run goes
// it shows its progress in the sticky comment from the checkpoints the
// runner hands it (throttled; progress certifies nothing, and the final
// report is always the last write), and groups the job log by iteration
// outside the stop-commands fences around everything agents influence.
//
// It never decides whether a goal is met — the gate does — and never treats
// a comment's text as anything but data: a command counts only where people
// reading the comment see it, unedited, from someone allowed, answering the
// review request it is about; text echoed back never renders. It never lets
// a review decision read back from a store reach the gate without checking
// it against the comment it came from.
//
// It never sets loop/<name> success on a commit whose tree the gate did not
// certify in the same job (the status rule, decide.go), never takes a
// success from the state branch, and never pushes a commit whose tree is
// not the certified snapshot, one that holds a secret, one that changes
// .loop/, protected paths or (unless allowed) workflows, or one onto the
// default branch; a push is a compare-and-swap that never overwrites.
// What git does is behind Git; DeliveryGit implements it on package
// delivery.
//
// A job dispatches on its event and holds the session; what it learns
// goes to decide (the status rule, a pure function), whose actions a
// conclusion carries out; the publisher speaks on GitHub and in the
// runner's files.
package action
