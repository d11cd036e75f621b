#!/usr/bin/env bash
# ECVKit benchmarks, the whole set (what `make bench` runs):
#   1. release build of bench-encode and bench-call
#   2. aiortc in Benchmarks/.venv (created once, quietly; benchmarks only)
#   3. bench-encode: encode latency, framework overhead vs gst-launch-1.0, our half of the aiortc comparison
#   4. bench-call g2g: glass-to-glass latency through two real peer connections;
#      bench-call setup: call setup time over 20 calls; bench-call cost: CPU and RSS of concurrent agent calls;
#      bench-voice: voice turn latency split, barge-in reaction and CPU of a talking bot (results/voice-latest.md)
#   5. aiortc's encoders on the same raw frames
#   6. merge into Benchmarks/results/<timestamp>.json|.md, latest.json|.md, latest-encode.svg
#
# Usage: Benchmarks/run.sh [--smoke | --cost | --network]
#   --smoke   seconds instead of minutes, tiny frame counts, no aiortc, results in a temporary directory
#   --cost    only the cost table (50–300 recording, 10–40 decoding, 50–200 receive-only, 50–100 sending calls; bots
#             in 1 and in 4 processes; each tier but decoding with Pion's peers too, alternated: about 45 minutes),
#             merged into results/latest.* with the other sections kept as they were
#   --network only `bench-call network` (about 17 minutes; root, ip, nft, tc, chromium, chromedriver and
#             the interop venv from `make test-deps`): results/network-<timestamp>.{json,md}, network-latest.*
# Environment: ECV_BENCH_FRAMES (default 300), ECV_BENCH_SCRATCH (a --scratch-path for the build),
# ECV_INTEROP_PYTHON (the venv's python for --network, default .build/interop-venv/bin/python).
set -euo pipefail

cd "$(dirname "$0")/.."
started=$SECONDS
smoke=""
cost_only=""
network=""
if [[ "${1:-}" == "--smoke" ]]; then smoke="--smoke"; elif [[ "${1:-}" == "--cost" ]]; then cost_only=yes;
elif [[ "${1:-}" == "--network" ]]; then network=yes; elif [[ $# -gt 0 ]]; then
    echo "usage: Benchmarks/run.sh [--smoke | --cost | --network]" >&2; exit 2
fi
# The cost table's bot processes: all calls in one, and spread over four.
cost_processes=(--processes 1,4)
[[ -n "$smoke" ]] && cost_processes=()
frames=${ECV_BENCH_FRAMES:-300}
scratch=()
[[ -n "${ECV_BENCH_SCRATCH:-}" ]] && scratch=(--scratch-path "$ECV_BENCH_SCRATCH")
# Quiet when the build succeeds; on failure, its last lines (without SwiftPM's harmless
# "prohibited flag(s): -pthread" warnings).
build() {
    local log
    log=$(mktemp)
    if swift build -c release "${scratch[@]}" "$@" >"$log" 2>&1; then rm -f "$log"; return 0; fi
    grep -v "prohibited flag(s): -pthread" "$log" | tail -n 40 >&2
    rm -f "$log"
    return 1
}

echo "== building (release)"
[[ -z "$network" ]] && build --product bench-encode
[[ -z "$network" ]] && build --product bench-voice
build --product bench-call
bin=$(swift build -c release "${scratch[@]}" --show-bin-path)
if [[ -n "$cost_only" ]]; then
    work=Benchmarks/.work; rm -rf "$work"; mkdir -p "$work"
    echo "== bench-call cost"
    "$bin/bench-call" cost "${cost_processes[@]}" --work "$work" --fragment "$work/cost.json" --no-publish
    "$bin/bench-encode" report Benchmarks/results/latest.json "$work/cost.json" --results Benchmarks/results
    echo "== done in $((SECONDS - started)) s"
    exit 0
fi
export ECV_BENCH_SWIFT_VERSION="$(swift --version 2>/dev/null | head -n 1)"

if [[ -n "$network" ]]; then
    build --product ecv-network-peer
    build --product ecv
    echo "== bench-call network"
    "$bin/bench-call" network --results Benchmarks/results
    echo "== done in $((SECONDS - started)) s"
    exit 0
fi

venv=Benchmarks/.venv
aiortc=""
if [[ -z "$smoke" ]]; then
    echo "== aiortc (Benchmarks/.venv)"
    if ! "$venv/bin/python" -c "import aiortc" 2>/dev/null; then
        if python3 -m venv "$venv" >/dev/null && "$venv/bin/pip" install -q --disable-pip-version-check aiortc; then :; else
            echo "aiortc could not be installed; the comparison with aiortc is left out" >&2
        fi
    fi
    "$venv/bin/python" -c "import aiortc" 2>/dev/null && aiortc=yes
fi

if [[ -n "$smoke" ]]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; frames_args=(); else
    work=Benchmarks/.work; rm -rf "$work"; mkdir -p "$work"; frames_args=(--frames "$frames")
fi

echo "== bench-encode"
"$bin/bench-encode" run $smoke "${frames_args[@]}" --work "$work" --fragment "$work/encode.json" --no-publish --keep-raw
echo "== bench-call g2g"
"$bin/bench-call" g2g $smoke "${frames_args[@]}" --work "$work" --fragment "$work/call.json" --no-publish

echo "== bench-call setup"
"$bin/bench-call" setup $smoke --work "$work" --fragment "$work/setup.json" --no-publish
echo "== bench-call cost"
"$bin/bench-call" cost $smoke "${cost_processes[@]}" --work "$work" --fragment "$work/cost.json" --no-publish

echo "== bench-voice"
voice_turns=20 barge_ins=20
[[ -n "$smoke" ]] && voice_turns=2 barge_ins=2
"$bin/bench-voice" --turns "$voice_turns" --barge-ins "$barge_ins" --out "$work/voice.md" 2>/dev/null
[[ -z "$smoke" ]] && cp "$work/voice.md" Benchmarks/results/voice-latest.md

merge=("$work/encode.json" "$work/call.json" "$work/setup.json" "$work/cost.json")
if [[ -n "$aiortc" ]]; then
    echo "== aiortc encoders on the same frames"
    "$venv/bin/python" Benchmarks/aiortc/encode_bench.py --frames-file "$work/frames-640x480.i420" --count "$frames" \
        --width 640 --height 480 --kbps 800 --out "$work/aiortc.json"
    merge+=(--aiortc "$work/aiortc.json")
fi
rm -f "$work/frames-640x480.i420"

echo "== results"
results=()
[[ -z "$smoke" ]] && results=(--results Benchmarks/results)
"$bin/bench-encode" report "${merge[@]}" "${results[@]}"
echo "== done in $((SECONDS - started)) s"
