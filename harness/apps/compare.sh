#!/usr/bin/env bash
# harness/apps/compare.sh [--app cg|deposit] FLAVOUR NP SELECTION [REPEATS [ARGS...]]
#
# Runs build/FLAVOUR/<app>_app (cg_app by default, or deposit_app) on NP
# ranks (tests/mpirun.sh) REPEATS times (default 5) without and with
# build/FLAVOUR/libcgtune.so preloaded (CG_TUNE=SELECTION), alternating, so
# that a change in the machine's load falls on both alike. ARGS are the
# app's (cg_app: N MAXIT, default 128 400; deposit_app: CELLS PARTICLES
# STEPS, default its own). Checks that every run's stdout is byte-identical
# to the first plain run's, and prints each solve time, the medians and the
# two-sided Mann-Whitney U test's p-value of plain against tuned.
# Exit status 1 when an output differs.
set -eu
app=cg
if [ "${1:-}" = "--app" ]; then
    app=${2:-}
    shift 2 || true
fi
case $app in cg | deposit) ;; *) echo "$0: --app is cg or deposit, not '$app'" >&2; exit 2 ;; esac
[ $# -ge 3 ] || { echo "usage: $0 [--app cg|deposit] openmpi|mpich NP SELECTION [REPEATS [ARGS...]]" >&2; exit 2; }
f=$1 np=$2 sel=$3 reps=${4:-5}
shift 3
[ $# -gt 0 ] && shift
if [ $# -eq 0 ] && [ "$app" = cg ]; then
    set -- 128 400
fi
bin=${app}_app
n="$*"
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plain=() tuned=() same=1
for i in $(seq "$reps"); do
    tests/mpirun.sh "$f" "$np" "build/$f/$bin" "$@" >"$tmp/plain.$i" 2>"$tmp/plain.err"
    plain+=("$(awk '/solve/ { print $3 }' "$tmp/plain.err")")
    CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$sel CG_TUNE_LOG=$tmp/footer \
        tests/mpirun.sh "$f" "$np" "build/$f/$bin" "$@" >"$tmp/tuned.$i" 2>"$tmp/tuned.err"
    tuned+=("$(awk '/solve/ { print $3 }' "$tmp/tuned.err")")
    cmp -s "$tmp/plain.1" "$tmp/plain.$i" || same=0
    cmp -s "$tmp/plain.1" "$tmp/tuned.$i" || same=0
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mp=$(median "${plain[@]}") mt=$(median "${tuned[@]}")
echo "$bin $f p=$np args $n: plain ${plain[*]} s; tuned ${tuned[*]} s"
echo "$bin $f p=$np args $n: median plain $mp s, tuned $mt s, tuned/plain $(awk -v a="$mt" -v b="$mp" 'BEGIN { printf "%.2f", a / b }')"
# Two-sided Mann-Whitney U test of the two sets of solve times (normal
# approximation with tie correction; close to exact from about 8 runs a side).
pval=$(/usr/bin/python3 - "${plain[*]}" "${tuned[*]}" <<'EOF'
import math, sys
a, b = [float(x) for x in sys.argv[1].split()], [float(x) for x in sys.argv[2].split()]
v = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
r, i = [0.0] * len(v), 0
while i < len(v):
    j = i
    while j + 1 < len(v) and v[j + 1][0] == v[i][0]:
        j += 1
    for k in range(i, j + 1):
        r[k] = (i + j) / 2 + 1
    i = j + 1
n1, n2 = len(a), len(b)
n = n1 + n2
u = sum(rk for rk, (_, g) in zip(r, v) if g == 0) - n1 * (n1 + 1) / 2
ties = {}
for x, _ in v:
    ties[x] = ties.get(x, 0) + 1
var = n1 * n2 / 12 * ((n + 1) - sum(t ** 3 - t for t in ties.values()) / (n * (n - 1)))
z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var) if var > 0 else 0.0
print("%.2g" % math.erfc(max(z, 0.0) / math.sqrt(2)))
EOF
)
echo "$bin $f p=$np args $n: Mann-Whitney U p = $pval ($reps runs a side; below 0.05: a significant difference)"
echo "$bin $f p=$np args $n: output $( [ $same -eq 1 ] && echo identical || echo DIFFERS ) ($(tail -1 "$tmp/plain.1"))"
# Why the fallback column: a native:<algorithm> rule is not switchable per
# call, so its calls run the library's default (reason native-alg); a
# footer that showed only the rule's name hid that the app ran plain.
grep -v '^#' "$tmp/footer" | awk '$6 > 0 { printf "  footer: %s %s %s calls, %s fell back to the library (%s)\n", $1, $5, $6, $7, $8 }'
[ $same -eq 1 ]
