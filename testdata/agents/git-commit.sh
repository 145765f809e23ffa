#!/bin/sh
# git-commit.sh: a scripted builder that commits its work, as agent CLIs
# such as Claude Code and Codex do. In its working directory (an isolated
# node's worktree, whose repository borrows the loop root's objects) it
# changes a.txt and runs git commit -am, then adds copy.txt, a copy of
# dir/b.txt, and runs git add -A and git commit: git writes a blob the
# root's store already holds, and so freshens (touches) it there.
set -eu
printf 'changed by the node\n' >>a.txt
git commit -qam "node: change a.txt"
cp dir/b.txt copy.txt
git add -A
git commit -qm "node: add copy.txt"
