#!/usr/bin/env bash
# Starts K recording bots on this host against one ECV service and waits for them; Ctrl-C (or
# SIGTERM) logs every one out. Run it on N hosts with the same URL: the service's ACD routes
# each call to a free bot on any host (no distributor of our own).
#
#   Benchmarks/scale/run-bots.sh https://ecv.example.com 8 [recordings-dir] [-- extra ecv agent options]
set -euo pipefail
url=${1:?usage: run-bots.sh SERVICE_URL K [DIR] [-- ecv agent options]}
count=${2:?usage: run-bots.sh SERVICE_URL K [DIR] [-- ecv agent options]}
dir=${3:-recordings}
shift $(( $# < 3 ? $# : 3 ))
[[ "${1:-}" == "--" ]] && shift
ecv=${ECV:-ecv}
mkdir -p "$dir"   # ecv agent --record makes only the last level
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait' INT TERM
for i in $(seq 1 "$count"); do
    "$ecv" agent --service-url "$url" --name "Bot $(hostname -s)-$i" --receive-only --jitter-buffer-ms 1000 --record "$dir/$i" --json "$@" \
        >"$dir.bot-$i.log" 2>&1 &
    pids+=($!)
done
echo "started $count bots (logs: $dir.bot-*.log)"
wait
