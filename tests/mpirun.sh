#!/usr/bin/env bash
# tests/mpirun.sh FLAVOUR NP PROGRAM [ARGS...]
#
# Runs PROGRAM on NP ranks of one machine with FLAVOUR's launcher (openmpi or
# mpich), tuned for a small machine with more ranks than cores, and exits with
# the launcher's status (124 when it ran past the time limit).
#
# Environment:
#   CG_MPIRUN_TIMEOUT  seconds before the run is killed (default 300)
#   CG_EXPECT_NP       set to NP for the ranks: a program started by the wrong
#                      launcher runs as NP singletons, each with size 1, and
#                      passes trivially unless it compares its size with this
#   CG_MPICH_YIELD_SO  where to build the MPICH yield shim (see below)
#   CG_PPN             passed on to the ranks when set: ranks per node for the
#                      topology schedules (runtime/topo.c)
#   CG_PRELOAD         libraries preloaded into the ranks only (not into the
#                      launcher), e.g. build/openmpi/libcgtune.so; CG_TUNE,
#                      CG_TUNE_LOG, CG_TUNE_STRICT and CG_TUNE_MAX_BYTES are
#                      passed on to the ranks when set (runtime/tune/)
#   CG_TUNED           a directory: preload build/FLAVOUR/libcgtune.so with
#                      CG_TUNE=CG_TUNED/FLAVOUR.json (descriptors/tests/tuned.json:
#                      a campaign run through the tuning library)
#
# Timings below: 2-core VM, Debian 12, 1000 x MPI_Allreduce of one double.
set -eu

usage() {
    echo "usage: $0 openmpi|mpich NP PROGRAM [ARGS...]" >&2
    exit 2
}

[ $# -ge 3 ] || usage
flavour=$1
np=$2
shift 2
case $np in
'' | *[!0-9]*) usage ;;
esac
limit=${CG_MPIRUN_TIMEOUT:-300}
export CG_EXPECT_NP=$np

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

# A binary linked against the other MPI would run NP singletons: refuse it
# before it starts. (The program also checks CG_EXPECT_NP, for what ldd
# cannot see, such as a wrapper script.)
refuse_other_mpi() {
    local other_lib=$1 other_name=$2 prog libs
    prog=$(command -v -- "$3" 2>/dev/null || true)
    [ -n "$prog" ] || return 0
    libs=$(ldd "$prog" 2>/dev/null || true)
    case $libs in
    *"$other_lib"*)
        echo "mpirun.sh: $3 is linked against $other_name ($other_lib), not $flavour" >&2
        exit 2
        ;;
    esac
}

# Why a preloaded shim for MPICH: Debian 12's MPICH 4.0.2 is built with
# --with-device=ch4:ucx, and its progress loop never yields the CPU
# (libmpich.so.12 imports no sched_yield). MPIR_CVAR_POLLS_BEFORE_YIELD
# belongs to ch3:nemesis and is ignored by ch4; MPIR_CVAR_CH4_PROGRESS_THROTTLE
# is not in 4.0.2 (newer MPICH CI sets it); MPIR_CVAR_DEFAULT_THREAD_LEVEL=
# MPI_THREAD_MULTIPLE, MPIR_CVAR_ASYNC_PROGRESS=1, MPIR_CVAR_CH4_GLOBAL_PROGRESS=0,
# MPIR_CVAR_NOLOCAL=1, UCX_TLS=self,sm and binding (hydra binds nothing by
# default) all left the time unchanged or worse. Each pass of the loop calls
# ucp_worker_progress() through the PLT, so a preloaded wrapper that calls
# sched_yield() when UCX reports no progress lets the other ranks on the core
# run:
#   np=4: 4.1 s -> 0.009 s;  np=8: 25.1 s -> 0.018 s   (1000 allreduces)
#   np=8, 20 allreduces of 262147 doubles: 2.16 s -> 0.18 s
#   np=2 (not oversubscribed): 0.001 s either way.
mpich_yield_shim() {
    local so=${CG_MPICH_YIELD_SO:-$root/build/mpich/cg_mpich_yield.so} src=$root/harness/mpich_yield.c tmp
    if [ -f "$so" ] && [ ! "$src" -nt "$so" ]; then
        echo "$so"
        return 0
    fi
    mkdir -p "$(dirname "$so")"
    tmp=$(mktemp "$so.XXXXXX")
    if ! "${CC:-cc}" -O2 -shared -fPIC -o "$tmp" "$src" -ldl >&2; then
        rm -f "$tmp"
        echo "mpirun.sh: could not build the MPICH yield shim; oversubscribed runs will be slow" >&2
        return 0
    fi
    mv -f "$tmp" "$so"
    echo "$so"
}

if [ -n "${CG_TUNED:-}" ]; then
    CG_PRELOAD=$root/build/$flavour/libcgtune.so
    CG_TUNE=$(cd "$CG_TUNED" && pwd)/$flavour.json
    export CG_PRELOAD CG_TUNE
fi

# The tuning library's variables, for the ranks (empty ones too: an empty
# CG_TUNE is a test of its own).
tune_env=()
for v in CG_TUNE CG_TUNE_LOG CG_TUNE_STRICT CG_TUNE_MAX_BYTES; do
    if [ -n "${!v+set}" ]; then
        case $flavour in
        openmpi) tune_env+=(-x "$v") ;;
        mpich) tune_env+=(-genv "$v" "${!v}") ;;
        esac
    fi
done

status=0
started=$(date +%s)
case $flavour in
openmpi)
    refuse_other_mpi libmpich.so MPICH "$1"
    # --oversubscribe: more ranks than cores. mpi_yield_when_idle 1: without
    # it, np=8 takes 2.6 s for 100 allreduces, with it 0.014 s for 1000.
    # Open MPI turns it on by itself only when it counts more ranks than
    # cores, which it may miscount in a container, so it is set here.
    # --bind-to none: binding ranks to a core's worth of PUs serialises them.
    # btl self,vader: shared memory only, no TCP probing. single copy none:
    # CMA (process_vm_readv) needs ptrace rights that containers often deny;
    # copying through the shared segment costs nothing measurable here
    # (np=8, 50 x 262147 doubles: 0.113 s vs 0.111 s).
    timeout -k 10 "$limit" mpirun.openmpi --allow-run-as-root --oversubscribe \
        --bind-to none --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
        --mca mpi_yield_when_idle 1 -x CG_EXPECT_NP ${CG_PPN:+-x CG_PPN} \
        ${CG_PRELOAD:+-x LD_PRELOAD="$CG_PRELOAD"} "${tune_env[@]}" -np "$np" "$@" || status=$?
    ;;
mpich)
    refuse_other_mpi libmpi.so "Open MPI" "$1"
    shim=$(mpich_yield_shim)
    preload=${shim}${LD_PRELOAD:+${shim:+:}$LD_PRELOAD}
    preload=${preload}${CG_PRELOAD:+${preload:+:}$CG_PRELOAD}
    # -launcher fork: every rank is local; never try ssh.
    timeout -k 10 "$limit" mpirun.mpich -launcher fork -genv CG_EXPECT_NP "$np" \
        ${preload:+-genv LD_PRELOAD "$preload"} ${CG_PPN:+-genv CG_PPN "$CG_PPN"} "${tune_env[@]}" \
        -n "$np" "$@" || status=$?
    ;;
*)
    usage
    ;;
esac

# Why the elapsed time decides: timeout(1) exits 124 after its SIGTERM and
# 137 when it had to send SIGKILL 10 s later, but 137 is also what a
# launcher killed by SIGKILL for any other reason (a rank out of memory, a
# kill from outside) returns; only a run that lasted its limit timed out.
elapsed=$(($(date +%s) - started))
if [ "$status" -eq 124 ] || { [ "$status" -eq 137 ] && [ "$elapsed" -ge "$limit" ]; }; then
    echo "mpirun.sh: $flavour np=$np $1: killed after ${limit} s (CG_MPIRUN_TIMEOUT)" >&2
elif [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then
    echo "mpirun.sh: $flavour np=$np $1: exited with status $status after ${elapsed} s:" \
        "killed by signal $((status - 128)) ($(kill -l $((status - 128)) 2>/dev/null || echo ?)), not by the time limit (${limit} s)" >&2
fi
exit "$status"
