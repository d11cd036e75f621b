#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer,address) and runs each for SECONDS
# (default 60) from its corpus under Tests/Fuzz/corpus/<target>, printing the totals.
# Usage: Tests/Fuzz/run.sh [SECONDS]      (`make fuzz`; `make test` runs a 5-second smoke)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
out=.build/fuzz
mkdir -p "$out"
build() { # target, sources…
    local target=$1; shift
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "Fuzz_${target//-/_}" "$@" \
        -o "$out/$target" 2> >(grep -v "Cannot export local symbol" >&2)
}
build protocol-json Sources/ECVProtocol/*.swift Tests/Fuzz/ProtocolJSONFuzz.swift
build log-text Sources/ECVProtocol/LogText.swift Tests/Fuzz/LogTextFuzz.swift
build der Sources/Soup/DERReader.swift Tests/Fuzz/DERFuzz.swift
status=0
for target in protocol-json log-text der; do
    corpus=Tests/Fuzz/corpus/$target
    work=$(mktemp -d)
    log="$out/$target.log"
    if "$out/$target" -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$out/$target-" "$work" "$corpus" >"$log" 2>&1; then
        runs=$(grep -m1 "stat::number_of_executed_units" "$log" | awk '{print $2}')
        cov=$(grep -E "^#[0-9]+.*DONE" "$log" | tail -1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
        echo "fuzz $target: ${seconds}s, ${runs:-?} runs, coverage ${cov:-?}, no crash"
    else
        echo "fuzz $target: FAILED (see $log)"; tail -20 "$log"; status=1
    fi
    rm -rf "$work"
done
exit $status
