# An agent that reads its prompt, prints a recorded output on stderr (the
# file named by its first argument, relative to this script's directory's
# parent) and nothing on stdout, and exits with its second argument.
cat >/dev/null
cat "$(dirname "$0")/../$1" >&2
exit "$2"
