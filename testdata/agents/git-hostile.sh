#!/bin/sh
# git-hostile.sh: a scripted builder that does everything git allows in an
# isolated node's worktree, hoping some of it reaches the loop root's
# repository: it commits its change, creates a branch and a tag, sets
# configuration (an fsmonitor command), plants hooks, writes an object,
# and then, by $HOSTILE:
#   alternates  points objects/info/alternates at a directory of its own
#   symlink     replaces its .git by a symbolic link to the root's .git
#               (../../../.git from the worktree)
#   through     the same, and then creates a branch, stages a.txt and sets
#               configuration through the link, in the root's repository
#   (empty)     nothing more
# Afterwards it changes a.txt again without committing: the working
# tree, not the commit, is what publishing takes.
set -eu
printf 'committed by the node\n' >a.txt
git add -A
git commit -qm "node commit"
git branch evil-branch
git tag evil-tag
git config core.fsmonitor 'touch fsmonitor-ran'
git config user.name evil
mkdir -p .git/hooks
printf '#!/bin/sh\ntouch hook-ran\n' >.git/hooks/post-checkout
printf '#!/bin/sh\ntouch hook-ran\n' >.git/hooks/pre-commit
chmod +x .git/hooks/post-checkout .git/hooks/pre-commit
echo "planted object" | git hash-object -w --stdin >/dev/null
case "${HOSTILE:-}" in
alternates)
	mkdir -p "$PWD/../evil-objects"
	echo "$PWD/../evil-objects" >.git/objects/info/alternates
	;;
symlink | through)
	rm -rf .git
	ln -s ../../../.git .git
	if [ "$HOSTILE" = through ]; then
		git branch evil-through-link
		git add a.txt
		git config loop.evil yes
	fi
	;;
esac
printf 'working tree of the node\n' >a.txt
