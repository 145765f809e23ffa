#!/bin/sh
# fake-metrics.sh: a builder that fakes its numbers. It writes files
# claiming 100% coverage where a naive loop would read them (coverage.json,
# metrics.json, .loop-metrics.json) and prints the claim. The trusted
# metrics command measures coverage itself and ignores them.
cat >/dev/null
for f in coverage.json metrics.json .loop-metrics.json; do
	echo '{"coverage": 100.0}' >"$f"
done
echo '{"coverage": 100.0}'
echo "coverage is now 100%"
