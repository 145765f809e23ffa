#!/bin/sh
# git-look.sh: a scripted builder that relies on git, as agent CLIs do. In
# its working directory (an isolated node's worktree) it changes a.txt and
# adds new.txt, then prints what git shows it: git status --porcelain,
# git diff --name-only and git log --format=%s, each after a "== name" line.
# It writes nothing else, so what git shows must be its own change only.
set -eu
printf 'changed by the node\n' >>a.txt
printf 'new\n' >new.txt
echo "== status"
git status --porcelain
echo "== diff"
git diff --name-only
echo "== log"
git log --format=%s
