#!/usr/bin/env bash
# `make sanitize`: the test suite built with AddressSanitizer and with ThreadSanitizer, each in its
# own scratch path (.build/asan, .build/tsan, so neither clobbers the normal build), then run
# under each. Prints the build and run time, the test result and the sanitizer reports of each;
# exits non-zero on any failed test or report. Logs: .build/<asan|tsan>-test.log, reports (one file
# per process, child processes included): .build/<asan|tsan>-reports/.
#
# Usage: Tests/Sanitize/run.sh [address] [thread]      (default: both)
#
# Skipped: InteropTests (SANITIZE_SKIP, a --skip regex; empty runs everything). Its cells drive
# headless Chromium and aiortc, whose code is not instrumented, and take long enough without a
# sanitizer; every ECVKit path they use runs in the other suites too.
#
# GStreamer, GLib, libsoup and the GStreamer plugins are not instrumented. ASan sees our accesses to
# their memory; TSan sees none of their own accesses and none of their locks (GMutex is a futex
# TSan cannot follow): Tests/Sanitize/tsan.supp lists what that hides, each with why.
set -euo pipefail
cd "$(dirname "$0")/../.."
sanitizers=("$@")
((${#sanitizers[@]} > 0)) || sanitizers=(address thread)
skip=${SANITIZE_SKIP-InteropTests}
skip_args=()
[[ -n $skip ]] && skip_args=(--skip "$skip")

# Swift's backtracer reads memory the sanitizers then flag; their own reports are what we want.
export SWIFT_BACKTRACE=enable=no
# GLib's slice allocator recycles GstBuffers and other small blocks without malloc/free, so to
# both sanitizers a new buffer would be the old one (ASan misses use-after-free, TSan reports the
# new owner's writes as races with the old one's). With always-malloc every block is seen.
export G_SLICE=always-malloc
# Reports go to files, one per process, so those of the child processes the tests start (`ecv`,
# benchmarks) are counted too; TSan's exit code is left alone so those children still pass.

status=0
summary=()
for sanitizer in "${sanitizers[@]}"; do
    case $sanitizer in
        address) scratch=.build/asan ;;
        thread) scratch=.build/tsan ;;
        *) echo "sanitize: unknown sanitizer $sanitizer (address, thread)" >&2; exit 2 ;;
    esac
    log=$scratch-test.log
    reports_dir=$PWD/$scratch-reports
    rm -rf "$reports_dir" && mkdir -p "$reports_dir"
    # LeakSanitizer stays off: GStreamer's registry, plugins and type system live until exit by
    # design, and leaks of our own objects are what the suite's instance counters check.
    export ASAN_OPTIONS="detect_leaks=0:print_summary=1:log_path=$reports_dir/asan"
    export TSAN_OPTIONS="suppressions=$PWD/Tests/Sanitize/tsan.supp:halt_on_error=0:exitcode=0:report_signal_unsafe=0:history_size=4:print_suppressions=1:log_path=$reports_dir/tsan"
    # Tests that measure RSS skip that bound under a sanitizer (its quarantine and shadow grow it).
    export ECV_SANITIZER=$sanitizer
    begin=$SECONDS
    if ! swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" >"$scratch-build.log" 2>&1; then
        grep -E "error:" "$scratch-build.log" | head -20 >&2
        echo "sanitize $sanitizer: the build failed (see $scratch-build.log)" >&2
        exit 1
    fi
    built=$((SECONDS - begin))
    begin=$SECONDS
    rc=0
    stdbuf -oL -eL swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel \
        "${skip_args[@]}" >"$log" 2>&1 || rc=$?
    ran=$((SECONDS - begin))
    result=$(grep -E "Test run with [0-9]+ tests? .*(passed|failed)" "$log" | tail -1 | sed -E 's/^[^A-Za-z]*//' || true)
    shopt -s nullglob
    files=("$reports_dir"/*)
    shopt -u nullglob
    if [[ $sanitizer == thread ]]; then
        triage=$(python3 Tests/Sanitize/tsan-triage.py "${files[@]}") || rc=1
        reports=${triage%%$'\n'*}
    else
        count=$(cat "${files[@]}" /dev/null | grep -c "ERROR: AddressSanitizer" || true)
        reports="asan: $count report(s)"
        ((count == 0)) || rc=1
    fi
    line="sanitize $sanitizer: built in ${built} s, ran in ${ran} s; ${result:-no test summary}; $reports"
    echo "$line"
    summary+=("$line")
    if ((rc != 0)); then
        status=1
        [[ $sanitizer == thread ]] && echo "$triage" | tail -n +2
        cat "${files[@]}" /dev/null | grep -E "SUMMARY: AddressSanitizer" | sort | uniq -c | sort -rn | head -10 || true
        grep -E "✘ Test .* (failed|recorded an issue)" "$log" | head -10 || true
        echo "  test log: $log; sanitizer reports: $reports_dir"
    fi
done
((${#summary[@]} > 1)) && printf '%s\n' "${summary[@]}"
exit $status
