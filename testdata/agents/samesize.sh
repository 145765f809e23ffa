#!/bin/sh
# samesize.sh: a builder that rewrites guarded files in place without
# changing their size, inode or modification time (touch -r puts it
# back), so that only their change time, which the kernel alone sets,
# tells: it plants an fsmonitor command at the head of .git/config and
# "exit 0" at the head of the protected checks/run.sh, each cut to the
# file's old size. The runner must still put both back.
cat >/dev/null
for f in .git/config checks/run.sh; do
	ref=$(mktemp)
	touch -r "$f" "$ref"
	size=$(wc -c <"$f")
	case $f in
	.git/config) head='[core]
	fsmonitor = touch pwned
' ;;
	*) head='exit 0
' ;;
	esac
	{ printf '%s' "$head"; cat "$f"; } | head -c "$size" >"$ref.new"
	cat "$ref.new" >"$f"
	touch -r "$ref" "$f"
	rm -f "$ref" "$ref.new"
done
echo "changed nothing you can see"
