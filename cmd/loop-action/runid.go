package main

import (
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
)

// gitHead returns the branch and commit the loop root is on, when it is in
// a git repository; empty strings otherwise.
func gitHead(root string) (branch, commit string) {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return "", ""
	}
	head, err := repo.Head()
	if err != nil {
		return "", ""
	}
	if head.Name().IsBranch() {
		branch = head.Name().Short()
	}
	return branch, head.Hash().String()
}

// notRunIDRune is a rune a branch name may hold and a run id may not.
var notRunIDRune = regexp.MustCompile(`[^A-Za-z0-9._/-]`)

// deriveRunID names a run when run has no --run-id (resume and the other
// commands take the latest run instead): <loop>/<branch>, or <loop>/local
// outside a branch, as the action names scheduled runs.
func deriveRunID(loopName, branch string) string {
	if branch == "" {
		return loopName + "/local"
	}
	return loopName + "/" + strings.Trim(notRunIDRune.ReplaceAllString(branch, "-"), "/")
}
