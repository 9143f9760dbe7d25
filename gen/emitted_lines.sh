#!/usr/bin/env bash
# gen/emitted_lines.sh [REV] - the size of the generated code, as
# gen/README.md quotes it: for emitted/mpi/<schedule>.c and
# emitted/cuda/<schedule>.cu (all.c and all.cu left out), the files, their
# lines, and their lines of code (lines with something outside a comment);
# then the lines of the shared files. With REV, the emitted/ of that commit.
# Prints, e.g., "mpi: 68 files, 5902 lines, 3247 lines of code".
set -eu
cd "$(dirname "$0")/.."
dir=emitted
if [ $# -gt 0 ]; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    git archive "$1" emitted | tar -x -C "$dir"
    dir=$dir/emitted
fi
# Lines of code: what is left of a line once /* ... */ comments (which may
# span lines) are taken out, when that is not blank.
code() {
    awk '{
        line = $0; code = 0
        while (length(line) > 0) {
            if (inc) {
                i = index(line, "*/")
                if (i == 0) { line = ""; break }
                line = substr(line, i + 2); inc = 0
            } else {
                i = index(line, "/*")
                if (i == 0) { if (line ~ /[^ \t]/) code = 1; break }
                if (substr(line, 1, i - 1) ~ /[^ \t]/) code = 1
                line = substr(line, i + 2); inc = 1
            }
        }
        n += code
    } END { print n + 0 }' "$@"
}
for b in mpi:c cuda:cu; do
    sub=${b%%:*}
    ext=${b#*:}
    files=$(ls "$dir/$sub"/*."$ext" | grep -v "/all\.$ext\$")
    # shellcheck disable=SC2086 # one word per file
    echo "$sub: $(echo "$files" | wc -l) files, $(cat $files | wc -l) lines, $(code $files) lines of code"
done
shared=""
for f in mpi/collgen.h mpi/all.c registry.c tags.c cuda/collgen_cuda.h cuda/all.cu registry.json; do
    [ -f "$dir/$f" ] && shared="$shared $dir/$f"
done
# shellcheck disable=SC2086
echo "shared files: $(cat $shared | wc -l) lines"
