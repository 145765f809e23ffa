// Package scaffold starts a repository on loop-action: it finds how the
// repository runs its tests and renders a starter loop config and workflow
// for one of three templates (a pull-request test fixer, nightly
// maintenance, a gate-only merge check).
//
// It owns the detection rules (which file means which test command, and
// which paths hold tests that agents must not weaken) and the templates.
// It must never run a command, write a file or ask a question: it reads the
// repository through an fs.FS and returns file contents; the CLI's init
// command asks, refuses to overwrite and writes. What it renders must pass
// loop-action validate and actionlint as written (tested).
package scaffold
