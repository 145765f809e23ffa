# An agent that prints its arguments, one per line, and for an argument that
# names a file, the file's mode and content.
for arg in "$@"; do
	printf 'arg=%s\n' "$arg"
	if [ -f "$arg" ]; then
		printf 'mode=%s\n' "$(ls -l "$arg" | cut -c1-10)"
		printf 'content='
		cat "$arg"
		printf '\n'
	fi
done
printf 'stdin='
cat
