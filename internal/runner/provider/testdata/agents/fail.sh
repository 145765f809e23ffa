# An agent that fails: progress, then an error, then exit status 3. Both
# lines go to stderr: the output tail interleaves stdout and stderr in the
# order they were read, which between two pipes is not the order written.
echo "Applying edits..." >&2
echo "fatal: could not apply patch to parser/tokenize.go" >&2
exit 3
