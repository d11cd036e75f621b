#!/bin/sh
# Checks that Package.swift declares, for every Swift target, exactly the package targets its
# files import: a declared dependency nothing imports, or an import that works only because a
# dependency brings the module along, is reported. Run from the package root; exits 1 on a
# mismatch, with one line per target.
set -eu
awk '
    # One target per `.target(` / `.executableTarget(` / `.testTarget(` call: name, path, dependencies.
    /\.(target|executableTarget|testTarget|systemLibrary)\(name:/ {
        if (name != "") emit()
        match($0, /name: *"[^"]+"/); name = substr($0, RSTART, RLENGTH); sub(/name: *"/, "", name); sub(/"$/, "", name)
        kind = $0; sub(/^.*\./, "", kind); sub(/\(.*$/, "", kind)
        body = ""
    }
    name != "" { body = body " " $0 }
    END { if (name != "") emit() }
    function emit(   deps, path, d, n, i, list) {
        # C module maps and shims are imported by name but not checked themselves.
        skip = (kind == "systemLibrary" || name ~ /Shims$/) ? "skip" : ""
        deps = ""
        if (match(body, /dependencies: *\[[^]]*\]/)) {
            list = substr(body, RSTART, RLENGTH); sub(/^[^[]*\[/, "", list); sub(/\]$/, "", list)
            n = split(list, d, ",")
            for (i = 1; i <= n; i++) { gsub(/[ "]/, "", d[i]); if (d[i] != "") deps = deps " " d[i] }
        }
        if (match(body, /path: *"[^"]+"/)) { path = substr(body, RSTART, RLENGTH); sub(/path: *"/, "", path); sub(/"$/, "", path) }
        else path = (kind == "testTarget" ? "Tests/" : "Sources/") name
        print name "|" path "|" deps "|" skip
        name = ""
    }
' Package.swift > /tmp/check-dependencies.$$
trap 'rm -f /tmp/check-dependencies.$$' EXIT
targets=$(cut -d'|' -f1 /tmp/check-dependencies.$$ | tr '\n' ' ')
paths=$(cut -d'|' -f2 /tmp/check-dependencies.$$ | tr '\n' ' ')
status=0
while IFS='|' read -r name path deps skip; do
    [ -z "$skip" ] || continue
    # The files of this target: under its path, but not under another target's path inside it.
    others=""
    for other in $paths; do
        case "$other" in "$path"/*) others="$others -path $other -prune -o" ;; esac
    done
    # shellcheck disable=SC2086
    imports=$(find "$path" $others -name '*.swift' -print | xargs -r sed -n -E \
        's/^[[:space:]]*(@testable[[:space:]]+|@_exported[[:space:]]+|(internal|package|public|private|fileprivate)[[:space:]]+)*import[[:space:]]+([A-Za-z_][A-Za-z0-9_]*).*/\3/p' | sort -u)
    wanted=""
    for module in $imports; do
        case " $targets " in *" $module "*) wanted="$wanted $module" ;; esac
    done
    declared=$(echo "$deps" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
    imported=$(echo "$wanted" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
    if [ "$declared" != "$imported" ]; then
        unused=$(for d in $declared; do case " $imported " in *" $d "*) ;; *) printf '%s ' "$d" ;; esac; done)
        missing=$(for i in $imported; do case " $declared " in *" $i "*) ;; *) printf '%s ' "$i" ;; esac; done)
        echo "$name: declared but not imported: [${unused% }]; imported but not declared: [${missing% }]"
        status=1
    fi
done < /tmp/check-dependencies.$$
exit $status
