#!/usr/bin/env bash
# Lists every `try?` in the Swift files under the given directories that has no `//` comment on
# its own line or as the line just above it (a `///` doc comment does not count), and exits 1 if
# it lists any. The rule (issue #13): a `try?` either becomes a reported failure or says why its
# failure does not matter.
#
#   Tests/Support/check-try.sh Sources/GStreamer Sources/MediaRuntime
#   Tests/Support/check-try.sh GStreamer MediaRuntime      # the same: names under Sources/
#
# It reads text, not Swift: a `//` inside a string literal on the line counts as a comment.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ $# -eq 0 ]; then
    echo "usage: $0 DIRECTORY..." >&2
    exit 2
fi
cd "$root"
status=0
for dir in "$@"; do
    dir=${dir%/}
    if [ -d "$dir" ]; then
        path=$dir
    elif [ -d "Sources/$dir" ]; then
        path=Sources/$dir
    else
        echo "$0: no directory $dir (nor Sources/$dir)" >&2
        exit 2
    fi
    while IFS= read -r -d '' file; do
        awk '
            {
                code = $0
                sub(/\/\/.*/, "", code)
                commented = index($0, "//") > 0
                if (code ~ /(^|[^A-Za-z0-9_])try\?/ && !commented && !comment_above) {
                    line = $0
                    sub(/^[ \t]+/, "", line)
                    printf "%s:%d: %s\n", FILENAME, FNR, line
                    found = 1
                }
                comment_above = $0 ~ /^[ \t]*\/\/([^\/]|$)/
            }
            END { exit found }
        ' "$file" || status=1
    done < <(find "$path" -name '*.swift' -print0 | sort -z)
done
exit $status
