#!/bin/sh
# commit.sh PACKAGE_DIR OUTPUT_DIR: writes OUTPUT_DIR/BuildCommit.swift with the git commit of
# PACKAGE_DIR (12 hex digits, "-dirty" with uncommitted changes to tracked files), or "unknown"
# when PACKAGE_DIR is not the top of a git checkout (a tarball, a folder inside another repository)
# or git is missing. The file is replaced only when its text changes, so an unchanged commit
# rebuilds nothing. Run before every build by the BuildCommit plugin (plugin.swift).
package="$1" out="$2"
commit=unknown
if top=$(git -C "$package" rev-parse --show-toplevel 2>/dev/null) \
    && [ "$(cd "$top" && pwd -P)" = "$(cd "$package" && pwd -P)" ] \
    && head=$(git -C "$package" rev-parse --short=12 HEAD 2>/dev/null); then
    commit=$head
    git -C "$package" diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
fi
mkdir -p "$out" || exit 1
printf '%s\n' "// Made before every build by Plugins/BuildCommit: the git commit ecv is built from." \
    "enum BuildCommit { static let commit = \"$commit\" }" > "$out/BuildCommit.swift.new" || exit 1
if cmp -s "$out/BuildCommit.swift.new" "$out/BuildCommit.swift"; then
    rm -f "$out/BuildCommit.swift.new"
else
    mv "$out/BuildCommit.swift.new" "$out/BuildCommit.swift"
fi
