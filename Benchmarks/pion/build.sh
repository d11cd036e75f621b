#!/usr/bin/env bash
# Builds the Pion side of `bench-call cost` (Benchmarks/pion) into .build/pion-bench/pion-bench, in
# GOPATH mode against Debian's packages (golang-go, golang-github-pion-webrtc.v3-dev under
# /usr/share/gocode: `make bench-deps` installs them). No module download, no third-party source
# in the repository. The sources are copied into a GOPATH of their own under .build, beside their
# go.mod, so Go's minimal module compatibility resolves Pion's /v3 import paths to Debian's tree.
# Prints the binary's path; exits 1 with one line when Go or Pion is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/pion/webrtc ]; then
    echo "pion-bench needs golang-go and golang-github-pion-webrtc.v3-dev (make bench-deps)" >&2
    exit 1
fi
out=$PWD/.build/pion-bench
source=$out/gopath/src/pionbench
rm -rf "$source"
mkdir -p "$source"
cp Benchmarks/pion/*.go Benchmarks/pion/go.mod "$source/"
GO111MODULE=off GOPATH="$out/gopath:/usr/share/gocode" GOCACHE="$out/cache" GOFLAGS= \
    go build -o "$out/pion-bench" pionbench
echo "$out/pion-bench"
