#!/usr/bin/env bash
# harness/quickstart.sh - the main job (README, Quick start line 1), run after
# `ninja`: verify every schedule for the default range of p, then run each
# generated collective beside the native one under Open MPI and under MPICH
# at 4 ranks, and print a short table per library.
set -eu
cd "$(dirname "$0")/.."
np=${CG_QUICKSTART_NP:-4}
echo "== verify: every schedule, p = 1..64,100,127,128,255,256,1000, every root"
build/collgen verify
echo
echo "== generated: emitted/mpi/*.c (ninja regenerated them from schedules/)"
build/collgen list
status=0
for f in openmpi mpich; do
    echo
    echo "== run: $np ranks, $f"
    tests/mpirun.sh "$f" "$np" "build/$f/quickstart" || status=1
done
exit $status
