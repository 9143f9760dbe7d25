#!/usr/bin/env bash
# tests/run_cuda.sh - the CUDA runtime's tests (runtime/cuda/, tests/cuda/)
# and the generated GPU collectives' (emitted/cuda/).
#
# Always: checks that every generated GPU collective's body (phases, rounds,
# steps, tags) is its MPI twin's with runtime/cuda's names; builds
# runtime/cuda.ninja (every .cu and every test, emitted/cuda/all.cu with tags
# off and on, compiled and linked with nvcc and mpicxx), compiles the public
# headers as C11 (cg_cuda.h plain, with CG_TAGS, without NCCL; the generated
# collgen_cuda.h), checks with nm that the tags-off collectives (hand-written
# and generated) reference no tag symbol (and the tags-on ones do), and runs
# build/cuda/test_nogpu (mappings, the piece cutter, the no-GPU errors, the
# generated table and argument checks).
# On a GPU only: the reduction kernel (test_reduce); the NCCL transport and
# native NCCL collectives with one rank per GPU (test_nccl), and the
# generated collectives over NCCL at p = 1 (emitted_cuda_check, when NCCL is
# built in); then at p = 1, 2, 3, 4, 8 processes sharing the GPUs, tags off
# and on: the transport and the ring collectives (test_xchg, test_xchg_tags)
# and every generated GPU collective against a host reference
# (emitted_cuda_check, emitted_cuda_check_tags). Without a GPU these print
#   SKIP <test>: no GPU (cudaGetDeviceCount: <reason>)
#
# Prints PASS / FAIL / SKIP lines (tests/run_all.sh counts PASS and FAIL) and
# ends with "cuda: N passed, M failed, K skipped"; exit status 0 when nothing
# failed.
#
# Environment:
#   CG_CUDA_NPS         process counts for the transport tests (default "1 2 3 4 8")
#   CG_CUDA_SKIP_BUILD  1: the build is done (harness/device_check.sh)
#   CG_CUDA_DEADLINE    epoch seconds: runs that would start later are not
#                       run (and fail), and each run is cut at the deadline
#   CG_MPIRUN_TIMEOUT   seconds per launched run (default 180); after a run
#                       of the transport series times out, the rest of the
#                       series is not run (each counts as a failure)
set -u
cd "$(dirname "$0")/.." || exit 2

passed=0
failed=0
skipped=0
last_rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() { # counts the PASS/FAIL/SKIP lines of $log, echoes it
    local p f s
    cat "$log"
    p=$(grep -c '^PASS ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    s=$(grep -c '^SKIP ' "$log")
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))
}

pass() {
    echo "PASS $*"
    passed=$((passed + 1))
}
fail() {
    echo "FAIL $*"
    failed=$((failed + 1))
}
skip() {
    echo "SKIP $*"
    skipped=$((skipped + 1))
}

# run NAME NP PROGRAM [ARGS...]: launches on NP ranks (NP "direct": started
# without a launcher, as an MPI singleton); a crash, time-out or a run that
# printed neither PASS nor SKIP counts as one failure.
run() {
    local name=$1 np=$2 rc limit=${CG_MPIRUN_TIMEOUT:-180}
    shift 2
    if [ -n "${CG_CUDA_DEADLINE:-}" ]; then
        local left=$((CG_CUDA_DEADLINE - $(date +%s)))
        if [ "$left" -lt 15 ]; then
            fail "$name (not run: the time budget is spent)"
            return
        fi
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    local t0=$SECONDS
    if [ "$np" = direct ]; then
        timeout -k 10 "$limit" "$@" >"$log" 2>&1
    else
        CG_MPIRUN_TIMEOUT=$limit bash tests/mpirun.sh openmpi "$np" "$@" >"$log" 2>&1
    fi
    rc=$?
    last_rc=$rc
    count
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$log"; then
        fail "$name (exit status $rc, no FAIL line printed)"
    elif [ "$rc" -eq 0 ] && ! grep -q '^\(PASS\|SKIP\) ' "$log"; then
        fail "$name (printed no PASS or SKIP line: ran no test)"
    fi
    echo "# $name: $((SECONDS - t0)) s"
}

# ---- always ---------------------------------------------------------------------

# The GPU backend's bodies are the MPI backend's (gen/emit_common.c writes
# both): from the first phase to the call tag's end, each emitted/cuda file,
# one level less indented and with runtime/cuda's names mapped back, must be
# its emitted/mpi twin. So the tags (ids, nesting, counts: what test_tags.c
# checks of the MPI backend against `collgen tags`) are the same too.
bodies_ok=1
nbodies=0
body() { # FILE: the lines from the first phase comment to the call tag's end
    awk '/^ *\/\* [a-z0-9_]+\.json:[0-9]+ phase / { on = 1 }
         on { print }
         on && /TAG_END\(CG_TAG_[A-Z0-9_]+\);$/ && !/__/ { exit }' "$1"
}
for cu in emitted/cuda/*.cu; do
    name=$(basename "$cu" .cu)
    [ "$name" = all ] && continue
    nbodies=$((nbodies + 1))
    c=emitted/mpi/$name.c
    body "$cu" | sed 's/^    //; s/CG_CU_TAG_/CG_TAG_/g; s/cg_cu_xchg_/cg_xchg_/g;
        s/cg_cu_send(/cg_send(/g; s/cg_cu_recv(/cg_recv(/g; s/cg_cu_reduce_blocks(/cg_reduce(/g;
        s/cg_cu_copy_blocks(/cg_copy(/g' >"$log.cu"
    if [ ! -f "$c" ] || [ ! -s "$log.cu" ] || ! body "$c" | diff - "$log.cu" >"$log" 2>&1; then
        bodies_ok=0
        echo "# the body of $cu is not that of $c:"
        head -20 "$log"
    fi
done
rm -f "$log.cu"
if [ "$bodies_ok" = 1 ] && [ "$nbodies" -gt 0 ]; then
    pass "cuda_emitted_bodies_are_the_mpi_backends ($nbodies schedules)"
else
    fail "cuda_emitted_bodies_are_the_mpi_backends ($nbodies schedules)"
fi

if ! command -v nvcc >/dev/null 2>&1; then
    skip "cuda: nvcc not found (the CUDA part is built only where nvcc is)"
    echo "cuda: $passed passed, $failed failed, $skipped skipped"
    exit 0
fi

if [ "${CG_CUDA_SKIP_BUILD:-0}" != 1 ]; then
    if ninja -f runtime/cuda.ninja >"$log" 2>&1; then
        pass "cuda_build_compiles_and_links_every_cu_and_test"
    else
        fail "cuda_build_compiles_and_links_every_cu_and_test"
        grep -v '^\[' "$log" | tail -30
    fi
fi
for f in libcg_cuda.a emitted/all.o emitted/all_tags.o test_nogpu gpu_probe test_reduce test_xchg \
    test_xchg_tags emitted_cuda_check emitted_cuda_check_tags test_nccl bench_reduce bench_ring; do
    [ -e "build/cuda/$f" ] || fail "cuda_build_output_exists build/cuda/$f"
done

# The public header from C11, in each configuration.
hdr_ok=1
for defs in "" "-DCG_TAGS" "-DCG_CUDA_NO_NCCL"; do
    # shellcheck disable=SC2086,SC2046 # flags.sh prints several words
    if ! echo '#include "cg_cuda.h"
int main(void) { return CG_CU_TAG_BEGIN(0), (int)cg_cu_dtype_size(CG_CU_INT32) - 4; }' |
        mpicc.openmpi -std=c11 -Wall -Wextra -Werror -pedantic -Iruntime -Iruntime/cuda \
            $(sh runtime/cuda/flags.sh cc) $defs -fsyntax-only -x c - >"$log" 2>&1; then
        hdr_ok=0
        fail "cuda_public_header_compiles_as_c11 ${defs:-(default)}"
        head -20 "$log"
    fi
done
[ "$hdr_ok" = 1 ] && pass "cuda_public_header_compiles_as_c11 (default, CG_TAGS, CG_CUDA_NO_NCCL)"
# shellcheck disable=SC2046 # flags.sh prints several words
if echo '#include "collgen_cuda.h"
int main(void) { return cg_cu_nalgos > 0 && cg_cu_algos[0] != 0 ? 0 : CG_NTAGS; }' |
    mpicc.openmpi -std=c11 -Wall -Wextra -Werror -pedantic -Iruntime -Iruntime/cuda -Iemitted/mpi \
        -Iemitted/cuda $(sh runtime/cuda/flags.sh cc) -fsyntax-only -x c - >"$log" 2>&1; then
    pass "cuda_generated_header_compiles_as_c11 (emitted/cuda/collgen_cuda.h)"
else
    fail "cuda_generated_header_compiles_as_c11 (emitted/cuda/collgen_cuda.h)"
    head -20 "$log"
fi

# Tags compiled out reference no tag symbol; compiled in, they do: the
# hand-written ring and the generated collectives.
for pair in "tests/ring.o tests/ring_tags.o" "emitted/all.o emitted/all_tags.o"; do
    off=build/cuda/${pair% *}
    on=build/cuda/${pair#* }
    [ -f "$off" ] && [ -f "$on" ] || continue
    if nm "$off" | grep -q 'cg_cu_tag_\|cg_tag_'; then
        fail "cuda_tags_off_objects_reference_no_tag_symbol $off: $(nm "$off" | grep 'cg_cu_tag_\|cg_tag_' | head -3 | tr '\n' ' ')"
    else
        pass "cuda_tags_off_objects_reference_no_tag_symbol $off"
    fi
    if nm "$on" | grep -q ' U cg_cu_tag_begin'; then
        pass "cuda_tags_on_objects_reference_the_tag_functions $on"
    else
        fail "cuda_tags_on_objects_reference_the_tag_functions $on"
    fi
done

[ -x build/cuda/test_nogpu ] && run "cuda test_nogpu" 1 build/cuda/test_nogpu

# ---- on a GPU ---------------------------------------------------------------------

probe=$(build/cuda/gpu_probe 2>&1 || true)
case $probe in
"gpus "*)
    echo "# cuda: $probe"
    # Why without the launcher: the kernel test needs no peer, and so it
    # still runs where launching fails.
    run "cuda test_reduce" direct build/cuda/test_reduce
    run "cuda test_nccl p=1" 1 build/cuda/test_nccl
    if [ "$(sh runtime/cuda/flags.sh nccl)" != none ]; then
        CG_CUDA_TRANSPORT=nccl run "cuda emitted_cuda_check p=1 nccl" 1 build/cuda/emitted_cuda_check
    else
        skip "emitted_cuda_check p=1 nccl: built without NCCL"
    fi
    # Why stop the series at a time-out: a run that hangs (cross-process
    # waits that never complete) would hang at every larger p too, and the
    # device's time is short.
    hung=
    for np in ${CG_CUDA_NPS:-1 2 3 4 8}; do
        for t in test_xchg test_xchg_tags emitted_cuda_check emitted_cuda_check_tags; do
            if [ -n "$hung" ]; then
                fail "cuda $t p=$np (not run: $hung timed out)"
                continue
            fi
            run "cuda $t p=$np" "$np" "build/cuda/$t"
            if [ "$last_rc" -eq 124 ] || [ "$last_rc" -eq 137 ]; then
                hung="$t p=$np"
            fi
        done
    done
    ;;
*)
    why=${probe#none: }
    for t in "test_reduce (kernel vs host reference, every dtype/op/count/alignment/order)" \
        "test_xchg (IPC transport and ring collectives, p = ${CG_CUDA_NPS:-1 2 3 4 8})" \
        "test_xchg_tags (the same with tags on)" \
        "test_nccl (NCCL transport and native NCCL collectives, p = 1)" \
        "emitted_cuda_check (every generated GPU collective vs a host reference, p = ${CG_CUDA_NPS:-1 2 3 4 8}, and p = 1 over NCCL)" \
        "emitted_cuda_check_tags (the same with tags on, shorter, and the tags)"; do
        skip "$t: no GPU ($why)"
    done
    ;;
esac

echo "cuda: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
