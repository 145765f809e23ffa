# An agent that prints 9 MiB of text on one line, more than is kept.
cat >/dev/null
head -c 9437184 /dev/zero | tr '\0' 'x'
