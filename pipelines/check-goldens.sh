#!/bin/sh
# Runs every self-running golden (pipelines/golden/*.testrun.launch) with gst-launch-1.0 and checks
# that it negotiates, reaches EOS without errors or warnings, and that every sink in it rendered
# at least one buffer (read from basesink's "rendered: N" debug line when each sink stops), so a
# branch that passed EOS without data fails. Live sources stop after 60 buffers (about two
# seconds); a run still going after TIMEOUT seconds (default 30) counts as a hang.
#
# Usage: pipelines/check-goldens.sh [golden-name-substring]
# Exit status: 0 when every selected golden passed, 1 otherwise.
set -u
dir=$(cd "$(dirname "$0")/golden" && pwd)
filter=${1:-}
timeout_seconds=${TIMEOUT:-30}
passed=0
failed=0
for file in "$dir"/*.testrun.launch; do
    name=$(basename "$file" .testrun.launch)
    case "$name" in *"$filter"*) ;; *) continue ;; esac
    log=$(mktemp)
    start=$(date +%s.%N)
    # eval: the file holds gst-launch syntax exactly as typed after gst-launch-1.0 in a shell.
    eval "GST_DEBUG=basesink:5 GST_DEBUG_NO_COLOR=1 timeout $timeout_seconds gst-launch-1.0 -q $(cat "$file")" >"$log" 2>&1
    status=$?
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    # "<sink_name> rendered: N, dropped: M" for every sink, logged when it leaves PLAYING.
    counts=$(sed -n 's/.*<\([^>]*\)> rendered: \([0-9]*\), dropped: [0-9]*/\1=\2/p' "$log" | sort -u | tr '\n' ' ')
    problems=""
    [ $status -eq 0 ] || problems="exit status $status"
    if grep -q -E "^(ERROR|WARNING)" "$log"; then problems="$problems; ERROR/WARNING from gst-launch"; fi
    [ -n "$counts" ] || problems="$problems; no sink reported what it rendered"
    for count in $counts; do
        case "$count" in *=0) problems="$problems; sink ${count%=0} rendered nothing" ;; esac
    done
    if [ -z "$problems" ]; then
        printf 'PASS %-38s %4.1fs  %s\n' "$name" "$seconds" "$counts"
        passed=$((passed + 1))
    else
        printf 'FAIL %-38s %4.1fs  %s (%s)\n' "$name" "$seconds" "$problems" "$counts"
        grep -E "^(ERROR|WARNING)|erroneous|Additional debug" -A2 "$log" | head -12 | sed 's/^/     /'
        failed=$((failed + 1))
    fi
    rm -f "$log"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
