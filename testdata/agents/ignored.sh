#!/bin/sh
# ignored.sh: a builder that makes the quickstart's tests pass only
# through files the loop root's ignore rules exclude, which no commit of
# the workspace carries. $IGNORED_MODE says how:
#
#   helper   write a correct add into build/helper.sh (build/ is ignored)
#            and make calc.sh source it;
#   patch    patch vendor-ignored/lib.sh, an ignored file the workflow put
#            there before the run and calc.sh sources, to add correctly;
#   swap     replace vendor-ignored/lib.sh with a symbolic link to a
#            correct lib.sh outside the root ($OUTSIDE), put a FIFO at
#            build/pipe and a link to $OUTSIDE at build/out;
#   twostep  in iteration 1, make calc.sh write a correct helper into
#            build/helper.sh when the checks run it (add stays wrong);
#            from iteration 2 on, make calc.sh only source that helper;
#   isolated an isolated node: write the helper into the loop root's
#            build/ ($LOOP_ROOT is .loop/worktrees/<node>), and make the
#            worktree's calc.sh, which is published, source it;
#   reader   read the ignored files; from iteration 2 on, also fix calc.sh
#            honestly.
cat >/dev/null
correct='add() {
	echo $(($1 + $2))
}'
case "${IGNORED_MODE:-}" in
helper)
	mkdir -p build
	printf '%s\n' "$correct" >build/helper.sh
	printf '. ./build/helper.sh\n' >calc.sh
	;;
patch)
	printf '%s\n' "$correct" >vendor-ignored/lib.sh
	;;
swap)
	printf '%s\n' "$correct" >"$OUTSIDE/lib.sh"
	rm -f vendor-ignored/lib.sh
	ln -s "$OUTSIDE/lib.sh" vendor-ignored/lib.sh
	mkdir -p build
	mkfifo build/pipe
	ln -s "$OUTSIDE" build/out
	;;
twostep)
	if [ "${LOOP_ITERATION:-1}" -le 1 ]; then
		cat >calc.sh <<'CALC'
mkdir -p build
printf 'add() {\n\techo $(($1 + $2))\n}\n' >build/helper.sh
add() {
	echo $(($1 * $2))
}
CALC
	else
		printf '. ./build/helper.sh\n' >calc.sh
	fi
	;;
isolated)
	root="$LOOP_ROOT/../../.."
	mkdir -p "$root/build"
	printf '%s\n' "$correct" >"$root/build/helper.sh"
	printf '. ./build/helper.sh\n' >calc.sh
	;;
reader)
	cat vendor-ignored/lib.sh >/dev/null
	ls -la build >/dev/null 2>&1
	if [ "${LOOP_ITERATION:-1}" -ge 2 ]; then
		printf '%s\n' "$correct" >calc.sh
	fi
	;;
*)
	echo "ignored.sh: unknown IGNORED_MODE ${IGNORED_MODE:-}" >&2
	exit 2
	;;
esac
echo "made the tests pass ($IGNORED_MODE, attempt ${LOOP_ITERATION:-})"
