#!/usr/bin/env bash
# Benchmarks the indexer on generated vaults (issue 2): cold reindex time,
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

# peak RSS and RssAnon (kB) of a command, sampled every 20 ms
measure() {
  local out=$1; shift
  "$@" >"$out.stdout" 2>"$out.stderr" &
  local pid=$! peak=0 peakanon=0 rss anon
  while kill -0 "$pid" 2>/dev/null; do
    if [ -r /proc/$pid/status ]; then
      rss=$(awk '/^VmHWM/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
      anon=$(awk '/^RssAnon/{print $2}' /proc/$pid/status 2>/dev/null || echo 0)
      [ "${rss:-0}" -gt "$peak" ] && peak=$rss
      [ "${anon:-0}" -gt "$peakanon" ] && peakanon=$anon
    fi
    sleep 0.02
  done
  wait "$pid"
  echo "$peak $peakanon"
}

printf '%-8s %-8s %-12s %-14s %-14s %-16s %s\n' pages MB reindex_s peak_rss_MB peak_anon_MB rescan_ms store_MB
for n in "${sizes[@]}"; do
  v="$dir/v$n"
  if [ ! -d "$v" ]; then
    go run ./tools/genvault -pages "$n" -sources 1000 -out "$v" >/dev/null 2>&1
  fi
  mb=$(find "$v/wiki" -name '*.md' -printf '%s\n' | awk '{s+=$1} END {printf "%.0f", s/1e6}')
  rm -f "$v/.synapse/synapse.db"
  start=$(date +%s.%N)
  read -r peak anon < <(measure "$dir/reindex$n" "$bin" reindex --vault "$v")
  end=$(date +%s.%N)
  secs=$(echo "$end - $start" | bc)
  best=999999
  for i in 1 2 3 4 5; do
    s=$(date +%s%N); "$bin" source rescan --vault "$v" >/dev/null; e=$(date +%s%N)
    ms=$(( (e - s) / 1000000 )); [ "$ms" -lt "$best" ] && best=$ms
  done
  store=$(( $(stat -c %s "$v/.synapse/synapse.db") / 1000000 ))
  printf '%-8s %-8s %-12.2f %-14s %-14s %-16s %s\n' "$n" "$mb" "$secs" "$((peak/1024))" "$((anon/1024))" "$best" "$store"
done
echo "(rescan_ms: best of 5 whole 'synapse source rescan' processes on the unchanged vault; reindex_s: whole process, store deleted first)"
