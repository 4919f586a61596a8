#!/usr/bin/env bash
# Benchmarks the indexer on generated vaults: cold reindex time,
# peak memory (total RSS, and anonymous RSS = heap and stacks without the
# store's memory-mapped file pages), unchanged-rescan time.
#
#   scripts/bench-index.sh [PAGES...]      default: 10000 100000
#
# Vaults are generated once under ${BENCH_DIR:-/tmp/synapse-bench} with
# tools/genvault (seed 1, 1000 sources) and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/synapse-bench}
mkdir -p "$dir"
go build -o "$dir/synapse" .
bin="$dir/synapse"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)

# runs a command; prints "wall_seconds peak_rss_kB peak_anon_kB". Peak RSS
# comes from /usr/bin/time (it includes the store's memory-mapped pages);
# the anonymous part (heap, stacks) is sampled from /proc every 100 ms
# with shell builtins only, so the sampling costs next to nothing.
measure() {
  local out=$1; shift
  /usr/bin/time -f "%e %M" -o "$out.time" "$@" >"$out.stdout" 2>"$out.stderr" &
  local tpid=$! pid="" peakanon=0 line
  sleep 0.05
  pid=$(pgrep -P "$tpid" | head -1)
  while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
    while read -r line; do
      case "$line" in RssAnon:*) set -- $line; [ "$2" -gt "$peakanon" ] && peakanon=$2 ;; esac
    done < "/proc/$pid/status" 2>/dev/null
    sleep 0.1
  done
  wait "$tpid"
  read -r secs peak < "$out.time"
  echo "$secs $peak $peakanon"
}

printf '%-8s %-8s %-12s %-14s %-14s %-16s %s\n' pages MB reindex_s peak_rss_MB peak_anon_MB rescan_ms store_MB
for n in "${sizes[@]}"; do
  v="$dir/v$n"
  if [ ! -d "$v" ]; then
    go run ./tools/genvault -pages "$n" -sources 1000 -out "$v" >/dev/null 2>&1
  fi
  mb=$(find "$v/wiki" -name '*.md' -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s/1e6}')
  rm -f "$v/.synapse/synapse.db"
  read -r secs peak anon < <(measure "$dir/reindex$n" "$bin" reindex --vault "$v")
  best=999999
  for i in 1 2 3 4 5; do
    s=$(date +%s%N); "$bin" source rescan --vault "$v" >/dev/null; e=$(date +%s%N)
    ms=$(( (e - s) / 1000000 )); [ "$ms" -lt "$best" ] && best=$ms
  done
  store=$(( $(stat -c %s "$v/.synapse/synapse.db") / 1000000 ))
  printf '%-8s %-8s %-12.2f %-14s %-14s %-16s %s\n' "$n" "$mb" "$secs" "$((peak/1024))" "$((anon/1024))" "$best" "$store"
done
echo "(rescan_ms: best of 5 whole 'synapse source rescan' processes on the unchanged vault; reindex_s: whole process, store deleted first)"
