#!/usr/bin/env bash
# The libFuzzer targets over every parser of outside input (swiftc -sanitize=fuzzer,address).
# Builds what changed, runs each target for SECONDS (default 60) from its seeds in
# Tests/Fuzz/corpus/<target>, and prints per target the time, executions, corpus (the seeds and
# what the run found, merged into a temporary directory: the checked-in corpus does not grow)
# and coverage (edges, features), then the totals. Exits non-zero on any crash, leak, timeout or
# broken property, naming the reproducer.
#
# Usage: Tests/Fuzz/run.sh [SECONDS] [TARGET...]   (`make fuzz`: 60 s each; `make test`: a smoke)
# Reproduce: .build/fuzz/<target> <reproducer file>
#
# Builds are cached under .build/fuzz by a hash of the toolchain, the flags and every source, so a
# smoke run after an unrelated change starts at once. ECVProtocol and MediaPipeline are built
# once as instrumented libraries the targets link; a target compiles only its own files (and
# the few Sources files it fuzzes that live in a target with C imports).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
out=.build/fuzz
lib=$out/lib
mkdir -p "$lib"
# -package-name: the sources use `package` access, as they do in the SwiftPM package ECVKit.
flags=(-sanitize=fuzzer,address -parse-as-library -O -package-name ECVKit)
# A failed property is a fatalError: let libFuzzer report it, not Swift's backtracer (which reads
# memory ASan then flags).
export SWIFT_BACKTRACE=enable=no
toolchain=$(swiftc --version 2>&1)

# target | libraries | sources | dictionary (Tests/Fuzz/dict/<name>.dict)
targets=(
    "rest|ECVProtocol|Tests/Fuzz/Support/RoundTrip.swift Tests/Fuzz/RESTFuzz.swift|json"
    "signaling|ECVProtocol|Tests/Fuzz/Support/RoundTrip.swift Tests/Fuzz/SignalingFuzz.swift|json"
    "sockets|ECVProtocol|Tests/Fuzz/Support/RoundTrip.swift Tests/Fuzz/SocketsFuzz.swift|json"
    "pc-config|ECVProtocol|Tests/Fuzz/Support/RoundTrip.swift Sources/WebRTC/ICEServerURLs.swift Tests/Fuzz/PCConfigFuzz.swift|json"
    "datachannel|ECVProtocol|Tests/Fuzz/DataChannelFuzz.swift|datachannel"
    "peerjs|ECVProtocol|Tests/Fuzz/PeerJSFuzz.swift|json"
    "binarypack||Sources/ECVPeer/BinaryPack.swift Sources/ECVPeer/BinaryPackValue.swift Sources/ECVPeer/BinaryPackChunking.swift Tests/Fuzz/BinaryPackFuzz.swift|"
    "sdp|MediaPipeline|Sources/WebRTC/SDPMediaSections.swift Sources/WebRTC/OfferedFormats.swift Sources/WebRTC/SDPInspection.swift Tests/Fuzz/SDPFuzz.swift|sdp"
    "preset|MediaPipeline|Tests/Fuzz/PresetFuzz.swift|preset"
    "log-text||Sources/ECVProtocol/LogText.swift Tests/Fuzz/LogTextFuzz.swift|"
    "der||Sources/Soup/DERReader.swift Tests/Fuzz/DERFuzz.swift|"
    "dtls||Sources/WebRTC/DTLSDatagram.swift Tests/Fuzz/DTLSFuzz.swift|"
    "sender-report||Sources/WebRTC/SenderReportRewrite.swift Tests/Fuzz/SenderReportFuzz.swift|"
    "http-head||Sources/Soup/RequestHead.swift Tests/Fuzz/HTTPHeadFuzz.swift|http"
    "request-fields||Sources/Soup/RequestHead.swift Sources/ECVService/BearerToken.swift Tests/Fuzz/RequestFieldsFuzz.swift|"
    "origin||Sources/ECVService/PeerServer/SerializedOrigin.swift Tests/Fuzz/OriginFuzz.swift|"
    "arguments||Sources/ecv/Arguments.swift Tests/Fuzz/ArgumentsFuzz.swift|"
    "agent-script|ECVProtocol MediaPipeline|Sources/ECVAgent/AgentScript.swift Tests/Fuzz/AgentScriptFuzz.swift|agent-script"
)

fingerprint() { # files…: the toolchain, the flags, the file names and their contents
    { echo "$toolchain"; printf '%s\n' "${flags[@]}" "$@"; cat "$@"; } | sha256sum | cut -c1-32
}

# Runs a compile quietly (its output is kept in $2 and shown only when it fails).
compile() {
    local what=$1 log=$2; shift 2
    if ! swiftc "$@" >"$log" 2>&1; then
        grep -v "Cannot export local symbol" "$log" >&2 || true
        echo "fuzz: building $what failed" >&2
        exit 1
    fi
}

build_library() { # name
    local name=$1 key
    local sources
    shopt -s nullglob # and one folder level down (MediaPipeline/AppMedia)
    sources=(Sources/"$name"/*.swift Sources/"$name"/*/*.swift)
    shopt -u nullglob
    key=$(fingerprint "${sources[@]}")
    [[ -f $lib/$name.hash && $(<"$lib/$name.hash") == "$key" ]] && return
    echo "fuzz: building the $name library"
    rm -f "$lib/$name.hash"
    compile "$name" "$lib/$name.log" "${flags[@]}" -enable-testing -module-name "$name" -emit-module \
        -emit-module-path "$lib/$name.swiftmodule" -emit-library -static -o "$lib/lib$name.a" "${sources[@]}"
    echo "$key" >"$lib/$name.hash"
}

build_target() { # name, libraries, sources
    local name=$1 libraries=$2 key
    read -ra sources <<<"$3"
    local inputs=("${sources[@]}") linking=()
    for library in $libraries; do
        build_library "$library"
        inputs+=("$lib/$library.hash")
        linking+=(-I "$lib" -L "$lib" "-l$library")
    done
    key=$(fingerprint "${inputs[@]}")
    [[ -x $out/$name && -f $out/$name.hash && $(<"$out/$name.hash") == "$key" ]] && return
    echo "fuzz: building $name"
    rm -f "$out/$name.hash"
    compile "$name" "$out/$name.build.log" "${flags[@]}" -module-name "Fuzz_${name//-/_}" "${linking[@]}" \
        "${sources[@]}" -o "$out/$name"
    echo "$key" >"$out/$name.hash"
}

selected=("$@")
chosen=()
for entry in "${targets[@]}"; do
    name=${entry%%|*}
    if ((${#selected[@]} == 0)) || [[ " ${selected[*]} " == *" $name "* ]]; then chosen+=("$entry"); fi
done
((${#chosen[@]} > 0)) || { echo "fuzz: no target named ${selected[*]}" >&2; exit 2; }

started=$SECONDS
for entry in "${chosen[@]}"; do
    IFS='|' read -r name libraries sources _ <<<"$entry"
    build_target "$name" "$libraries" "$sources"
done
((SECONDS - started > 0)) && echo "fuzz: built in $((SECONDS - started)) s"

status=0 total_runs=0 total_files=0 total_bytes=0 total_seconds=0 passed=0
for entry in "${chosen[@]}"; do
    IFS='|' read -r name _ _ dictionary <<<"$entry"
    corpus=Tests/Fuzz/corpus/$name
    log=$out/$name.log
    work=$(mktemp -d "${TMPDIR:-/tmp}/ecv-fuzz-$name.XXXXXX")
    merged=$(mktemp -d "${TMPDIR:-/tmp}/ecv-fuzz-$name-merged.XXXXXX")
    dict=()
    [[ -n $dictionary ]] && dict=(-dict="Tests/Fuzz/dict/$dictionary.dict")
    rm -f "$out/$name"-{crash,leak,timeout,oom,slow-unit}-*
    begin=$SECONDS
    rc=0
    "$out/$name" -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$out/$name-" "${dict[@]}" "$work" "$corpus" >"$log" 2>&1 || rc=$?
    elapsed=$((SECONDS - begin))
    if ((rc != 0)); then
        reproducer=$(grep -m1 -oE "(Test unit|artifact) written to [^ ]+" "$log" | awk '{print $NF}' || true)
        echo "fuzz $name: FAILED after ${elapsed} s (exit $rc); reproducer: ${reproducer:-none, see $log}"
        grep -E "Fatal error|ERROR:|SUMMARY:" "$log" | head -5 || tail -20 "$log"
        [[ -n $reproducer ]] && echo "  reproduce: $out/$name $reproducer"
        status=1
        rm -rf "$work" "$merged"
        continue
    fi
    "$out/$name" -merge=1 -rss_limit_mb=2048 -timeout=10 "$merged" "$work" "$corpus" >"$log.merge" 2>&1 || true
    runs=$(awk '/stat::number_of_executed_units/ {print $2; exit}' "$log")
    read -r cov ft < <(grep -E '^#[0-9]+' "$log" | tail -1 | sed -nE 's/.* cov: ([0-9]+) ft: ([0-9]+).*/\1 \2/p'; echo)
    files=$(find "$merged" -type f | wc -l)
    bytes=$(find "$merged" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    printf 'fuzz %-12s %4d s %11d execs   corpus %5d files %9d bytes   coverage %5s edges %6s features\n' \
        "$name" "$elapsed" "${runs:-0}" "$files" "$bytes" "${cov:-?}" "${ft:-?}"
    total_runs=$((total_runs + ${runs:-0})) total_files=$((total_files + files)) total_bytes=$((total_bytes + bytes))
    total_seconds=$((total_seconds + elapsed)) passed=$((passed + 1))
    rm -rf "$work" "$merged"
done
printf 'fuzz total: %d/%d targets without a crash, %d s, %d execs, corpus %d files %d bytes\n' \
    "$passed" "${#chosen[@]}" "$total_seconds" "$total_runs" "$total_files" "$total_bytes"
exit $status
