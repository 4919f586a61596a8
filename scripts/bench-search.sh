#!/usr/bin/env bash
# bench-search.sh — synapse search against ripgrep on one generated vault,
# in one run: the same queries, the same files, one after the other.
#
#   go run ./tools/genvault -pages 10000 -sources 0 -out /tmp/search-g10k
#   scripts/bench-search.sh /tmp/search-g10k [QUERIES]
#
# Reports: cold reindex time, store size, in-process search latency
# (go test -bench Query), incremental single-page update time
# (go test -bench UpdateOnePage), and p50/p95 wall time of a whole
# `synapse search QUERY -k 5` process next to `rg -l -i -F QUERY wiki/`.
# Queries come from the vault's manifest (DIR.pages.tsv): titles, aliases,
# unique headings and "how do I use …?" questions. The vault's store is
# rebuilt; the pages are not modified (the update benchmark restores the
# page it edits).
set -euo pipefail

vault=${1:?usage: bench-search.sh VAULT [QUERIES]}
vault=$(cd "$vault" && pwd)
n=${2:-100}
manifest="${vault%/}.pages.tsv"
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$manifest" ] || { echo "no manifest $manifest (generate the vault with tools/genvault)" >&2; exit 2; }
command -v rg >/dev/null || { echo "ripgrep (rg) is not installed: apt-get install -y ripgrep" >&2; exit 2; }

bin=$(mktemp -d)/synapse
(cd "$root" && CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$bin" .) # as the README installs it
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$(dirname "$bin")"' EXIT

now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

# percentile FILE P: the P-th percentile of the numbers in FILE (µs → ms)
percentile() {
	sort -n "$1" | awk -v p="$2" '{a[NR]=$1} END {i=int(NR*p/100+0.5); if(i<1)i=1; if(i>NR)i=NR; printf "%.1f", a[i]/1000}'
}

echo "vault: $vault ($(find "$vault/wiki" -name '*.md' | wc -l) pages, $(du -sh "$vault/wiki" | cut -f1))"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

t0=$(now_us)
"$bin" --vault "$vault" reindex >/dev/null
t1=$(now_us)
db="$vault/.synapse/synapse.db"
printf 'cold reindex: %.2f s; store %s MiB\n' "$(echo "($t1-$t0)/1000000" | bc -l)" "$(( $(stat -c %s "$db") / 1048576 ))"

# the queries: every k-th manifest line, cycling through four kinds
lines=$(wc -l <"$manifest")
step=$(( lines / n > 0 ? lines / n : 1 ))
awk -F'\t' -v step="$step" -v n="$n" 'NR % step == 1 && c < n {
	k = c % 4
	if (k == 0) q = $1
	else if (k == 1) q = ($4 != "" ? $4 : tolower($1))
	else if (k == 2) q = $5
	else q = "how do I use " tolower($1) "?"
	print q; c++
}' "$manifest" >"$tmp/queries"
echo "queries: $(wc -l <"$tmp/queries") from $manifest"

# warm the page cache for both tools the same way
rg -l -i -F -e zzzzwarmup "$vault/wiki" >/dev/null || true
"$bin" --vault "$vault" search warmup >/dev/null 2>&1 || true

: >"$tmp/syn" ; : >"$tmp/rg"
while IFS= read -r q; do
	a=$(now_us)
	"$bin" --vault "$vault" search -k 5 -- "$q" >/dev/null 2>&1
	b=$(now_us)
	rg -l -i -F -e "$q" "$vault/wiki" >/dev/null || true
	c=$(now_us)
	echo $(( b - a )) >>"$tmp/syn"
	echo $(( c - b )) >>"$tmp/rg"
done <"$tmp/queries"

syn50=$(percentile "$tmp/syn" 50); syn95=$(percentile "$tmp/syn" 95)
rg50=$(percentile "$tmp/rg" 50); rg95=$(percentile "$tmp/rg" 95)
printf '\n%-34s %10s %10s\n' "whole process (ms)" p50 p95
printf '%-34s %10s %10s\n' "synapse search QUERY -k 5" "$syn50" "$syn95"
printf '%-34s %10s %10s\n' "rg -l -i -F QUERY wiki/" "$rg50" "$rg95"
printf '%-34s %10s %10s\n' "ripgrep / synapse" "$(echo "$rg50/$syn50" | bc -l | xargs printf '%.1fx')" "$(echo "$rg95/$syn95" | bc -l | xargs printf '%.1fx')"

echo
echo "in-process (go test -bench, same vault):"
(cd "$root" && SYNAPSE_BENCH_VAULT="$vault" go test ./search -run XXX -bench 'Query$' -benchtime 400x 2>/dev/null | grep -E '^Benchmark')
(cd "$root" && SYNAPSE_BENCH_VAULT="$vault" go test ./search -run XXX -bench 'UpdateOnePage/Search' -benchtime 100x 2>/dev/null | grep -E '^Benchmark')
(cd "$root" && SYNAPSE_BENCH_VAULT="$vault" go test ./search -run XXX -bench 'UpdateOnePage/Scan' -benchtime 5x 2>/dev/null | grep -E '^Benchmark')
