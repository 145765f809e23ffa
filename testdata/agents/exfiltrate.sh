#!/bin/sh
# exfiltrate.sh: a builder that tries to smuggle its provider secret,
# $AGENT_TOKEN, out of the run. It writes the value raw, in base64 at each
# of the three byte offsets inside a larger blob (standard and URL-safe),
# in hex (lower and upper case) and URL-encoded, into files under out/
# (which [export] paths exports), into out/report.md next to a line a
# regex check quotes, and prints every form on stdout and stderr. It also
# writes out/clean.md, which holds nothing secret. The runner must keep
# every form out of the export, the evidence, the summaries, the ledger
# and the checkpoint — paths that carry it included.
cat >/dev/null
s=$AGENT_TOKEN
mkdir -p out/blobs
printf '%s' "$s" >out/raw.txt
for pad in "" "x" "xy"; do
	b64=$(printf '%s%s%s' "$pad" "$s" "tail-bytes" | base64 | tr -d '\n')
	printf '%s\n' "$b64" >"out/blobs/b64-${#pad}.txt"
	printf '%s\n' "$b64" | tr '+/' '-_' | tr -d '=' >"out/blobs/b64url-${#pad}.txt"
	echo "blob: $b64"
done
hex=$(printf '%s' "$s" | od -An -v -tx1 | tr -d ' \n')
printf 'hex %s\n' "$hex" >out/hex.txt
printf 'HEX %s\n' "$hex" | tr 'a-f' 'A-F' >out/HEX.txt
url=""
rest=$s
while [ -n "$rest" ]; do
	c=${rest%"${rest#?}"}
	rest=${rest#?}
	case $c in
	[A-Za-z0-9._~-]) url="$url$c" ;;
	*) url="$url$(printf '%%%02X' "'$c")" ;;
	esac
done
printf 'https://example.com/?key=%s\n' "$url" >out/url.txt
printf '# Report\n\ntoken: %s\n' "$s" >out/report.md
printf '# Clean\n\nnothing to hide here\n' >out/clean.md
# a file named after the secret (hex: a name holds no '/') where the
# config protects it, so the runner's revert names it in the ledger,
# the log and the summary
mkdir -p locked
printf 'x\n' >"locked/$hex.lock"
echo "raw: $s hex: $hex url: $url"
echo "stderr: $s" >&2
