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
# prints within a minute), the suite is taken to hang. It prints every thread's stack of the test
# process (with gdb, when installed), then a line for each thread waiting on a lock (its named
# frames, innermost first) and, last, the test that started last; then it kills the run and exits
# 1, so CI reports the hang in minutes with its place instead of running out its time limit. The
# summary comes last because a CI log is often read from its tail.
set -uo pipefail

limit=${SUITE_SILENCE_LIMIT:-600}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
stamp=$(mktemp)
last=$(mktemp)
stacks=$(mktemp)
trap 'rm -f "$stamp" "$last" "$stacks"' EXIT

# Reads gdb's `thread apply all bt` and prints one line per thread that waits on a mutex, a
# recursive mutex (a GStreamer pad's stream lock), a Swift `Mutex` or a read-write lock (not on a
# condition or a semaphore: idle threads wait on those): the thread's name and its frames' names,
# innermost first, demangled; a frame without symbols is named by its library.
lock_waits() {
    awk '
        function flush() {
            if (header != "" && waiting) print header ": " frames
            header = ""; frames = ""; waiting = 0; count = 0
        }
        /^Thread / { flush(); header = $0; sub(/ \(Thread 0x[0-9a-f]+/, "", header); sub(/\):?$/, "", header); next }
        /^#/ {
            line = $0
            name = line
            sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, "", name)
            sub(/ \(.*$/, "", name)
            if (name == "" || name == "??") {
                library = line; sub(/^.* (from|at) /, "", library); sub(/^.*\//, "", library)
                name = "?" library
            }
            if (name ~ /lll_lock_wait|pthread_mutex_lock|g_mutex_lock|g_rec_mutex_lock|futex_lock|lockSlow|rwlock/) waiting = 1
            if (name ~ /^(__GI_|___pthread|__lll|lll_|_dl_|__futex|futex_)/) next
            if (count < 14) { frames = frames (count ? " < " : "") name; count++ }
            next
        }
        END { flush() }
    ' | if command -v swift-demangle >/dev/null; then swift-demangle --simplified --compact; else cat; fi
}

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
        echo "run-suite: no output for ${silent} s" >&2
        for pid in $(pgrep -f "^$root/\.build/.*PackageTests\.xctest" || true); do
            if command -v gdb >/dev/null; then
                echo "run-suite: the threads of $pid:" >&2
                gdb -p "$pid" -batch -ex 'thread apply all bt 40' 2>&1 | grep -E '^(Thread|#)' > "$stacks"
                cat "$stacks" >&2
                echo "run-suite: the threads of $pid waiting on a lock:" >&2
                lock_waits < "$stacks" >&2
            fi
            kill -9 "$pid" 2>/dev/null
        done
        echo "run-suite: the last test that started:" >&2
        cat "$last" >&2
        pkill -P $$ 2>/dev/null
        wait "$relay" 2>/dev/null
        exit 1
    fi
done
wait "$relay"
