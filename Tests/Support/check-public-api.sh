#!/usr/bin/env bash
# Lists every public declaration of a product that names a type it must not, and exits 1 if it
# lists any. Two rules (issue #13, "a narrow public surface"; issue #36, recording review as its
# own product):
#   - The SDK (Sources/ECV, Sources/ECVAgent, Sources/EnQualify, Sources/ECVPeer) names no type of
#     GStreamer, MediaRuntime or WebRTC: an app sees only the products and the values they
#     re-export (MediaPipeline, ECVProtocol), never the layers underneath.
#   - ECVRecording (Sources/ECVRecording) names only its own types and the MediaPipeline values it
#     re-exports (`@_exported import struct MediaPipeline.X` in its sources): no type of GStreamer,
#     MediaRuntime, WebRTC or GLibCore, and no MediaPipeline type an app importing it could not name;
#     and no SDK product (nor ECVService) imports it or lists it among its dependencies in Package.swift.
#
#   Tests/Support/check-public-api.sh
#
# What counts as a public declaration: a `public`/`open` declaration up to its body (a signature
# may span lines), the requirements of a public protocol, the cases of a public enum, an
# `@_exported import` of a forbidden module, and an extension of one of their types that conforms
# it or adds public members. What counts as naming: a forbidden module's name as a qualifier
# (`WebRTC.PeerState`), or one of its top-level public types by its bare name, unless the
# product's own modules declare a type of that name too (`ICEServer`), which then wins.
#
# It reads text, not Swift: string literals and `//` comments are dropped first, and a default
# argument that opens a closure ends the signature early.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
modifiers='([[:space:]]*(@[A-Za-z_]+([(][^)]*[)])?|final|indirect|nonisolated|static|class)[[:space:]]+)*'
kinds='(class|struct|enum|protocol|actor|typealias)'

# The type names declared (at any access) in the given source folders.
declared() {
    grep -rhoE "^${modifiers}((public|package|open|internal|fileprivate|private)[[:space:]]+)?${modifiers}${kinds}[[:space:]]+[A-Z][A-Za-z0-9_]*" "$@" \
        | grep -oE '[A-Z][A-Za-z0-9_]*$' | sort -u
}

# "Name=Module" for the top-level public types of each module in $2 (space-separated) whose name
# is not in the list $1 (one a line).
forbidden_names() {
    local own="$1" modules="$2" result="" module name
    for module in $modules; do
        for name in $(grep -rhoE "^(public|open)[[:space:]]+${modifiers}${kinds}[[:space:]]+[A-Z][A-Za-z0-9_]*" "Sources/$module" \
                          | grep -oE '[A-Z][A-Za-z0-9_]*$' | sort -u); do
            grep -qxF "$name" <<<"$own" || result+="$name=$module "
        done
    done
    echo "$result"
}

# check NAMES QUALIFIERS FOLDER...: runs the declaration reader over the folders' Swift files.
check() {
    local names="$1" lower="$2" status=0 file
    shift 2
    while IFS= read -r -d '' file; do
        awk -v names="$names" -v lower="$lower" "$program" "$file" || status=1
    done < <(find "$@" -name '*.swift' -print0 | sort -z)
    return $status
}

program='

        BEGIN {
            n = split(names, pairs, " ")
            for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); module[kv[1]] = kv[2] }
            split(lower, mods, " ")
            for (i in mods) isLower[mods[i]] = 1
        }
        # Lower-layer names in a piece of a declaration, as "Name (Module)".
        function offenders(text,    found, rest, word, before, qualified) {
            found = ""
            rest = text
            while (match(rest, /[A-Za-z_][A-Za-z0-9_]*([.][A-Z][A-Za-z0-9_]*)?/)) {
                word = substr(rest, RSTART, RLENGTH)
                before = RSTART > 1 ? substr(rest, RSTART - 1, 1) : ""
                rest = substr(rest, RSTART + RLENGTH)
                if (before == ".") continue
                split(word, qualified, ".")
                if (qualified[1] in isLower && qualified[2] != "") found = found " " word
                else if (word in module) found = found " " word " (" module[word] ")"
            }
            return found
        }
        function report(text, what) {
            what = offenders(text)
            if (what != "") {
                line = text
                gsub(/[ \t]+/, " ", line)
                sub(/^ /, "", line)
                printf "%s:%d:%s: %s\n", FILENAME, startLine, what, line
                bad = 1
            }
        }
        {
            code = $0
            gsub(/\\"/, "", code)
            gsub(/"[^"]*"/, "\"\"", code)
            sub(/\/\/.*/, "", code)

            if (code ~ /^[ \t]*@_exported[ \t]+import/) {
                split(code, parts, /[ \t.]+/)
                for (i in parts) if (parts[i] in isLower) { startLine = FNR; printf "%s:%d: re-exports %s: %s\n", FILENAME, FNR, parts[i], $0; bad = 1 }
            }

            # Continuing a multi-line signature.
            if (collecting) {
                cut = index(code, "{")
                piece = cut ? substr(code, 1, cut - 1) : code
                signature = signature " " piece
                depthParen += gsub(/\(/, "(", piece) - gsub(/\)/, ")", piece)
                if (cut || (depthParen <= 0 && code !~ /(,|\(|->|:|&|=)[ \t]*$/)) { collecting = 0; report(signature) }
            } else {
                container = (depth in publicBody) ? publicBody[depth] : ""
                isPublic = code ~ /(^|[ \t])(public|open)[ \t]/ && code !~ /^[ \t]*import/
                isMember = (container == "protocol" && code ~ /^[ \t]*((static|mutating|nonmutating|@[A-Za-z_]+)[ \t]+)*(func|var|let|init|subscript|associatedtype|typealias)[ \t(<?]/) \
                        || (container == "enum" && code ~ /^[ \t]*(indirect[ \t]+)?case[ \t]/)
                isExtension = code ~ /^[ \t]*extension[ \t]/
                if (isPublic || isMember) {
                    startLine = FNR
                    # A one-line public enum or protocol: its cases and requirements are in the line.
                    cut = code ~ /(public|open)[ \t]+([a-z]+[ \t]+)*(enum|protocol)[ \t]/ ? 0 : index(code, "{")
                    piece = cut ? substr(code, 1, cut - 1) : code
                    signature = piece
                    depthParen = gsub(/\(/, "(", piece) - gsub(/\)/, ")", piece)
                    if (cut || (depthParen <= 0 && code !~ /(,|\(|->|:|&|=)[ \t]*$/)) report(signature)
                    else collecting = 1
                } else if (isExtension) {
                    # An extension of a lower type: reported when it conforms it or adds public members.
                    cut = index(code, "{")
                    extensionHead = cut ? substr(code, 1, cut - 1) : code
                    sub(/[ \t]where[ \t].*/, "", extensionHead)
                    extensionLine = FNR
                    extensionDepth = depth
                    startLine = FNR
                    if (extensionHead ~ /:/) report(extensionHead)
                    else pendingExtension = 1
                }
            }
            if (pendingExtension && depth == extensionDepth + 1 && code ~ /(^|[ \t])(public|open)[ \t]/) {
                pendingExtension = 0
                startLine = extensionLine
                report(extensionHead)
            }

            # Braces: which bodies belong to a public enum or protocol (their members are public).
            opens = gsub(/\{/, "{", code)
            closes = gsub(/\}/, "}", code)
            if (opens > 0 && code ~ /(^|[ \t])(public|open)[ \t]+([a-z]+[ \t]+)*(enum|protocol)[ \t]/) {
                publicBody[depth + 1] = code ~ /enum[ \t]/ ? "enum" : "protocol"
            } else if (opens > 0 && opens > closes) {
                publicBody[depth + 1] = ""
            }
            depth += opens - closes
            if (pendingExtension && depth <= extensionDepth) pendingExtension = 0
        }
        END { exit bad }
    
'

status=0
sdk_lower="GStreamer MediaRuntime WebRTC CallEngine"
sdk_own=$(declared Sources/ECV Sources/ECVAgent Sources/EnQualify Sources/ECVPeer Sources/MediaPipeline Sources/ECVProtocol)
if ! check "$(forbidden_names "$sdk_own" "$sdk_lower")" "$sdk_lower" Sources/ECV Sources/ECVAgent Sources/EnQualify Sources/ECVPeer; then
    echo "The SDK's public declarations above name types of $sdk_lower (issue #13): move the value into MediaPipeline, or keep it package." >&2
    status=1
fi

# ECVRecording: MediaPipeline counts as a lower layer except for the types it re-exports.
recording_lower="GStreamer MediaRuntime WebRTC GLibCore"
reexported=$(grep -rhoE "^@_exported[[:space:]]+import[[:space:]]+${kinds}[[:space:]]+MediaPipeline[.][A-Z][A-Za-z0-9_]*" Sources/ECVRecording \
                 | grep -oE '[A-Z][A-Za-z0-9_]*$' | sort -u)
recording_own=$(printf '%s\n%s\n' "$(declared Sources/ECVRecording)" "$reexported")
if ! check "$(forbidden_names "$recording_own" "$recording_lower MediaPipeline")" "$recording_lower" Sources/ECVRecording; then
    echo "ECVRecording's public declarations above name types of $recording_lower, or MediaPipeline types it does not re-export" \
         "(issue #36): re-export the value (Sources/ECVRecording/Exports.swift), wrap it, or keep it internal." >&2
    status=1
fi

# Outside the SDK products' link: none of them imports ECVRecording or lists it in Package.swift.
for product in ECV ECVAgent EnQualify ECVPeer ECVService; do
    dependencies=$(tr '\n' ' ' < Package.swift | grep -oE "\.target\(name: \"$product\", dependencies: \[[^]]*\]" || true)
    if grep -q '"ECVRecording"' <<<"$dependencies" || grep -rlq '^import ECVRecording' "Sources/$product"; then
        echo "$product depends on ECVRecording: recording review stays outside the SDK products (issue #36)." >&2
        status=1
    fi
done
exit $status
