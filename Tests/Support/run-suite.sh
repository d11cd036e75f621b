#!/usr/bin/env bash
# Runs `swift test` with the arguments given, line by line, under a watchdog.
#
#   Tests/Support/run-suite.sh --no-parallel
#
# Line by line: SwiftPM relays the test process's output through a block-buffered pipe, so a run
# that is killed shows only what filled its last 4 KiB, not the test it was in; `stdbuf` makes
# every line leave as it is written.
#
# The watchdog: when no line has come for SUITE_SILENCE_LIMIT seconds (600; the slowest test
# prints within a minute), the suite is taken to hang. It prints the last test that started,
# every thread's stack of the test process (with gdb, when installed), kills the run and exits 1,
# so CI reports the hang in minutes with its place instead of running out its time limit.
set -uo pipefail

limit=${SUITE_SILENCE_LIMIT:-600}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
stamp=$(mktemp)
last=$(mktemp)
trap 'rm -f "$stamp" "$last"' EXIT

stdbuf -oL -eL "${SWIFT:-swift}" test "$@" 2>&1 | while IFS= read -r line; do
    touch "$stamp"
    # SwiftPM warns about -pthread in pkg-config flags; it is harmless (the Makefile's QUIET_PTHREAD).
    case "$line" in *"prohibited flag(s): -pthread"*) continue ;; esac
    printf '%s\n' "$line"
    case "$line" in *"Test "*" started."*) printf '%s\n' "$line" > "$last" ;; esac
done &
relay=$!

while kill -0 "$relay" 2>/dev/null; do
    sleep 10
    silent=$(( $(date +%s) - $(stat -c %Y "$stamp") ))
    if (( silent > limit )); then
        echo "run-suite: no output for ${silent} s; the last test that started:" >&2
        cat "$last" >&2
        for pid in $(pgrep -f "^$root/\.build/.*PackageTests\.xctest" || true); do
            if command -v gdb >/dev/null; then
                echo "run-suite: the threads of $pid:" >&2
                gdb -p "$pid" -batch -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)' >&2
            fi
            kill -9 "$pid" 2>/dev/null
        done
        pkill -P $$ 2>/dev/null
        wait "$relay" 2>/dev/null
        exit 1
    fi
done
wait "$relay"
