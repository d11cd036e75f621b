#!/bin/sh
# The longest functions and the largest types in Sources (or the directories given), so a
# refactoring can quote them before and after. A function is a `func`, `init` or `deinit` from
# its declaration to its closing brace; a type is a class, struct, enum or actor with every
# extension of it, summed over the files that hold them. Lines inside strings and comments
# are counted but their braces are not.
#   Tests/Support/code-size.sh [TOP] [DIR...]   (TOP: how many of each to print, 5 by default)
set -eu
top=${1:-5}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- Sources
find "$@" -name '*.swift' | sort | xargs awk -v top="$top" '
function strip(line,    out, i, c, n) {
    # Drops string contents and line comments, so only code braces are counted.
    out = ""; n = length(line)
    for (i = 1; i <= n; i++) {
        c = substr(line, i, 1)
        if (inMulti) { if (substr(line, i, 3) == "\"\"\"") { inMulti = 0; i += 2 } ; continue }
        if (inString) {
            if (c == "\\") { i++; continue }
            if (c == "\"") inString = 0
            continue
        }
        if (substr(line, i, 3) == "\"\"\"") { inMulti = 1; i += 2; continue }
        if (c == "\"") { inString = 1; continue }
        if (substr(line, i, 2) == "//") break
        out = out c
    }
    inString = 0
    return out
}
FNR == 1 { depth = 0; fdepth = -1; tdepth = -1; inMulti = 0 }
{
    code = strip($0)
    if (fdepth < 0 && code ~ /(^|[^A-Za-z0-9_.])(func [^(]+\(|init[?!]?[(<]|deinit[ {])/ && code !~ /^[ \t]*(let|var) /) {
        fname = FILENAME ":" FNR ": " code; sub(/^[ \t]+/, "", fname); fstart = FNR; fdepth = depth; fopened = 0
    }
    if (tdepth < 0 && match(code, /(^|[ \t])(class|struct|enum|actor|extension) [A-Za-z_][A-Za-z0-9_.]*/)) {
        decl = substr(code, RSTART, RLENGTH); sub(/^[ \t]+/, "", decl)
        split(decl, words, " "); tname = words[2]; sub(/^.*\./, "", tname)
        if (tname != "") { tstart = FNR; tdepth = depth; topened = 0; tkind = words[1] }
    }
    opens = gsub(/\{/, "{", code); closes = gsub(/\}/, "}", code)
    depth += opens - closes
    if (fdepth >= 0) {
        if (opens > 0) fopened = 1
        if (fopened && depth <= fdepth) { funcs[fname] = FNR - fstart + 1; fdepth = -1 }
        else if (!fopened && code ~ /[^{]$/ && code !~ /[,(\[:>-]$/ && code !~ /throws|async|where|->|^[ \t]*$/ && FNR > fstart + 8) { fdepth = -1 }
    }
    if (tdepth >= 0) {
        if (opens > 0) topened = 1
        if (topened && depth <= tdepth) {
            types[tname] += FNR - tstart + 1; files[tname] = files[tname] " " FILENAME
            parts[FILENAME ":" tstart ": " tkind " " tname] = FNR - tstart + 1; tdepth = -1
        }
    }
}
END {
    print "Longest functions (lines):"
    for (f in funcs) printf "%6d  %s\n", funcs[f], f | "sort -rn | head -" top
    close("sort -rn | head -" top)
    print "Largest types (lines, with their extensions):"
    for (t in types) { n = split(files[t], fl, " "); printf "%6d  %s (%d parts)\n", types[t], t, n | "sort -rn | head -" top }
    close("sort -rn | head -" top)
    print "Largest single declarations (a type or one extension of it, lines):"
    for (p in parts) printf "%6d  %s\n", parts[p], p | "sort -rn | head -" top
    close("sort -rn | head -" top)
}'
