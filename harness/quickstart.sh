#!/usr/bin/env bash
# harness/quickstart.sh - the main job (README, Quick start line 1), run after
# `ninja`: verify every schedule, then run the quickstart campaign
# (descriptors/tests/quickstart.json on descriptors/platforms/local.json:
# allreduce, allgather, reduce_scatter_block and bcast at 4 ranks, 8 B to
# 4 MiB, native default + forced native algorithms + every generated
# schedule, Open MPI and MPICH), and end by saying where the table, plots and
# report are. Arguments go to `collgen run` (--out DIR, --quiet,
# --platform P). Exit status: collgen verify's when it fails, else collgen
# run's (harness/README.md).
set -eu
cd "$(dirname "$0")/.."
echo "== verify: every schedule, p = 1..64,100,127,128,255,256,1000, every root"
build/collgen verify -q
echo "all schedules verified"
echo
echo "== campaign: descriptors/tests/quickstart.json on the local platform"
out=results/quickstart-$(date -u +%Y%m%d-%H%M%S)
prev=
for a in "$@"; do
    [ "$prev" = --out ] && out=$a
    prev=$a
done
rc=0
build/collgen run quickstart --out "$out" "$@" || rc=$?
echo
echo "== quickstart done (collgen run exit status $rc)"
if [ -f "$out/points.jsonl" ]; then
    nplots=$(find "$out/plots" -name '*.png' 2>/dev/null | wc -l)
    echo "table:   $out/table.txt"
    echo "report:  $out/report.md"
    echo "plots:   $out/plots/ ($nplots PNG files)"
    echo "records: $out/points.jsonl, $out/points.csv, $out/raw/"
    echo "guidelines: $out/guidelines.txt (mock-ups against the native default), profile: $out/profile.json"
    echo "remake table, report and plots: build/collgen report $out"
fi
exit "$rc"
