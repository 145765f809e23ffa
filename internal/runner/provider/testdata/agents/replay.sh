# An agent that reads its prompt and prints a recorded output: the file named
# by its first argument (relative to this script's directory's parent).
cat >/dev/null
cat "$(dirname "$0")/../$1"
