#!/usr/bin/env bash
# How often `ecv demo` passes its own check: runs it RUNS times (default 5), each in a fresh
# folder, and prints each run's verdict per leg and one line: "ecv demo: both legs complete in
# K of N runs". Exit status 0 when every run completed both legs, 1 otherwise, 2 for bad usage.
# On a 2-core machine each run takes about 20 s.
#
#   Benchmarks/demo-verdicts.sh [RUNS] [ECV]    (ECV: the binary, default .build/debug/ecv)
set -uo pipefail

runs=${1:-5}
ecv=${2:-.build/debug/ecv}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "demo-verdicts.sh: RUNS must be a positive whole number, not '$runs'" >&2; exit 2; }
[[ -x "$ecv" ]] || { echo "demo-verdicts.sh: no ecv at $ecv (swift build first, or give its path)" >&2; exit 2; }
ecv=$(cd "$(dirname "$ecv")" && pwd)/$(basename "$ecv")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
complete=0
for run in $(seq 1 "$runs"); do
    mkdir -p "$work/$run"
    if ! (cd "$work/$run" && timeout 180 "$ecv" demo --json >demo.ndjson 2>demo.log); then
        echo "run $run: ecv demo failed: $(tail -n 1 "$work/$run/demo.log")"
        continue
    fi
    verdicts=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    event = json.loads(line)
    if event.get("event") == "summary":
        print(" | ".join("leg %d: %s" % (leg["leg"], leg["verdict"]) for leg in event["recordings"]))
' "$work/$run/demo.ndjson")
    echo "run $run: ${verdicts:-no summary}"
    [[ "$verdicts" == "leg 1: complete | leg 2: complete" ]] && complete=$((complete + 1))
done
echo "ecv demo: both legs complete in $complete of $runs runs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
[[ $complete -eq $runs ]]
