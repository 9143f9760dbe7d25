#!/usr/bin/env bash
# harness/quickstart.sh - the main job (README, Quick start line 1), run after
# `ninja`: verify every schedule, then run the quickstart campaign
# (descriptors/tests/quickstart.json on descriptors/platforms/local.json:
# allreduce, allgather, reduce_scatter_block and bcast at 4 ranks, 8 B to
# 4 MiB, native default + forced native algorithms + every generated
# schedule, Open MPI and MPICH), and say where the table, plots and report are.
set -eu
cd "$(dirname "$0")/.."
echo "== verify: every schedule, p = 1..64,100,127,128,255,256,1000, every root"
build/collgen verify -q
echo "all schedules verified"
echo
echo "== campaign: descriptors/tests/quickstart.json on the local platform"
build/collgen run quickstart "$@"
