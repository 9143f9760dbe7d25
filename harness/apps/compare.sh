#!/usr/bin/env bash
# harness/apps/compare.sh FLAVOUR NP SELECTION [REPEATS [N [MAXIT]]]
#
# Runs build/FLAVOUR/cg_app on NP ranks (tests/mpirun.sh) REPEATS times
# (default 5) without and with build/FLAVOUR/libcgtune.so preloaded
# (CG_TUNE=SELECTION), alternating, so that a change in the machine's load
# falls on both alike. Checks that every run's stdout is byte-identical to
# the first plain run's, and prints each solve time and the medians.
# Exit status 1 when an output differs.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 openmpi|mpich NP SELECTION [REPEATS [N [MAXIT]]]" >&2; exit 2; }
f=$1 np=$2 sel=$3 reps=${4:-5} n=${5:-128} maxit=${6:-400}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plain=() tuned=() same=1
for i in $(seq "$reps"); do
    tests/mpirun.sh "$f" "$np" "build/$f/cg_app" "$n" "$maxit" >"$tmp/plain.$i" 2>"$tmp/plain.err"
    plain+=("$(awk '/solve/ { print $3 }' "$tmp/plain.err")")
    CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$sel CG_TUNE_LOG=$tmp/footer \
        tests/mpirun.sh "$f" "$np" "build/$f/cg_app" "$n" "$maxit" >"$tmp/tuned.$i" 2>"$tmp/tuned.err"
    tuned+=("$(awk '/solve/ { print $3 }' "$tmp/tuned.err")")
    cmp -s "$tmp/plain.1" "$tmp/plain.$i" || same=0
    cmp -s "$tmp/plain.1" "$tmp/tuned.$i" || same=0
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mp=$(median "${plain[@]}") mt=$(median "${tuned[@]}")
echo "cg_app $f p=$np n=$n: plain ${plain[*]} s; tuned ${tuned[*]} s"
echo "cg_app $f p=$np n=$n: median plain $mp s, tuned $mt s, tuned/plain $(awk -v a="$mt" -v b="$mp" 'BEGIN { printf "%.2f", a / b }')"
echo "cg_app $f p=$np n=$n: output $( [ $same -eq 1 ] && echo identical || echo DIFFERS ) ($(tail -1 "$tmp/plain.1"))"
grep -v '^#' "$tmp/footer" | awk '$6 > 0 { printf "  footer: %s %s %s calls\n", $1, $5, $6 }'
[ $same -eq 1 ]
