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
# generated table and argument checks); the harness's GPU mode
# (harness/gpu/, build/cuda/bench_cuda): its NCCL debug parser and its
# records from synthetic outcomes (test_bench_cuda), checked field by field
# and read by `collgen report` when build/collgen exists.
# Without a GPU: bench_cuda on a tiny hand-written job exits 5 and records
# every point as skipped, with the reason, and writes its run metadata.
# On a GPU only: the reduction kernel (test_reduce); the NCCL transport and
# native NCCL collectives with one rank per GPU (test_nccl), and the
# generated collectives over NCCL at p = 1 (emitted_cuda_check, when NCCL is
# built in); then at p = 1, 2, 3, 4, 8 processes sharing the GPUs, tags off
# and on: the transport and the ring collectives (test_xchg, test_xchg_tags)
# and every generated GPU collective against a host reference
# (emitted_cuda_check, emitted_cuda_check_tags); bench_cuda on tiny jobs at
# p = 1 (NCCL and generated, every collective, all checked and timed: ok)
# and p = 2 (generated over IPC ok, NCCL skipped on one GPU, one generated
# schedule corrupted through CG_BENCH_CORRUPT: failed_check). Without a GPU
# these print
#   SKIP <test>: no GPU (cudaGetDeviceCount: <reason>)
#
# Prints PASS / FAIL / SKIP lines (tests/run_all.sh counts PASS and FAIL) and
# ends with "cuda: N passed, M failed, K skipped"; exit status 0 when nothing
# failed.
#
# Environment:
#   CG_CUDA_NPS         process counts for the transport tests (default "1 2 3 4 8")
#   CG_CUDA_SHAPES      p:ppn virtual node shapes for the topology schedules on a GPU
#                       (default "4:2 3:2"; CG_PPN, runtime/topo.c)
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
bc_dir=$(mktemp -d /tmp/cg_bench_cuda.XXXXXX) # bench_cuda's jobs and records
trap 'rm -f "$log"; rm -rf "$bc_dir"' EXIT

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

# ---- bench_cuda (the harness's GPU mode) helpers -----------------------------------

# bc_point, bc_job, bc_status: job files written by hand.
# shellcheck source=harness/gpu/job.sh
. harness/gpu/job.sh

# The tiny job's points at NP ranks: every collective, NCCL and generated;
# every datatype (float16 and bfloat16 too: allreduce by NCCL, and the
# generated reduce-scatter in place).
bc_points() {
    local r=$(($1 - 1))
    bc_point ar-native 0 allreduce native:default 1000 double sum 0 false
    bc_point ar-ring 1 allreduce generated:allreduce_ring 1000 double sum 0 false
    bc_point ar-rab-ip 2 allreduce generated:allreduce_rabenseifner 1001 int32 max 0 true
    bc_point ar-native-ip 3 allreduce native:default 1001 int32 max 0 true
    bc_point ag-native 4 allgather native:default 257 float - 0 false
    bc_point ag-ring 5 allgather generated:allgather_ring 257 float - 0 false
    bc_point rs-native-ip 6 reduce_scatter_block native:default 100 int64 sum 0 true
    bc_point rs-ring 7 reduce_scatter_block generated:reduce_scatter_block_ring 100 int64 prod 0 false
    bc_point bc-native 8 bcast native:default 1000 double - "$r" false
    bc_point bc-binomial 9 bcast generated:bcast_binomial_doubling 1000 double - "$r" false
    bc_point ar-native-f16 10 allreduce native:default 1000 float16 sum 0 false
    bc_point rs-rh-bf16-ip 11 reduce_scatter_block generated:reduce_scatter_block_recursive_halving 100 bfloat16 sum 0 true
    bc_point a2a-native 12 alltoall native:default 64 int32 - 0 false
    bc_point a2a-pairwise 13 alltoall generated:alltoall_pairwise 64 int32 - 0 false
}
bc_ids="ar-native ar-ring ar-rab-ip ar-native-ip ag-native ag-ring rs-native-ip rs-ring bc-native
    bc-binomial ar-native-f16 rs-rh-bf16-ip a2a-native a2a-pairwise"
# shellcheck disable=SC2086 # one word per id
bc_n=$(echo $bc_ids | wc -w)

# bc_launch NAME NP JOB [VAR=VALUE...]: bench_cuda under the launcher,
# limited as run() limits; its output in $log, its exit status in last_rc.
bc_launch() {
    local name=$1 np=$2 job=$3 limit=${CG_MPIRUN_TIMEOUT:-180}
    shift 3
    if [ -n "${CG_CUDA_DEADLINE:-}" ]; then
        local left=$((CG_CUDA_DEADLINE - $(date +%s)))
        if [ "$left" -lt 15 ]; then
            last_rc=124
            echo "not run: the time budget is spent" >"$log"
            return
        fi
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    local t0=$SECONDS
    env "$@" CG_MPIRUN_TIMEOUT="$limit" bash tests/mpirun.sh openmpi "$np" build/cuda/bench_cuda \
        "$job" >"$log" 2>&1
    last_rc=$?
    echo "# $name: $((SECONDS - t0)) s, exit status $last_rc"
}

# ---- always ---------------------------------------------------------------------

# The GPU backend's bodies are the MPI backend's (gen/emit_common.c writes
# both): from the first phase to the call tag's end, each emitted/cuda file,
# with runtime/cuda's names mapped back, must be its emitted/mpi twin. So the
# tags (ids, nesting, counts: what test_tags.c checks of the MPI backend
# against `collgen tags`) are the same too. An MPI receive that may land in
# out (cg_recv_to, two lines; the GPU backend has none: gen/README.md,
# "Receives that land in out") reads as the plain receive into tmp.
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
    body "$cu" | sed 's/CG_CU_TAG_/CG_TAG_/g; s/cg_cu_xchg_/cg_xchg_/g;
        s/cg_cu_send(/cg_send(/g; s/cg_cu_recv(/cg_recv(/g; s/cg_cu_reduce_blocks(/cg_reduce(/g;
        s/cg_cu_copy_blocks(/cg_copy(/g;
        s/cg_cu_send_strided(/cg_send_strided(/g; s/cg_cu_recv_strided(/cg_recv_strided(/g;
        s/cg_cu_reduce_blocks_strided(/cg_reduce_strided(/g; s/cg_cu_copy_blocks_strided(/cg_copy_strided(/g' >"$log.cu"
    if [ ! -f "$c" ] || [ ! -s "$log.cu" ] ||
        ! body "$c" | sed -E '/cg_recv_to\(/{N;s/cg_recv_to\((.*),\n +&out, .*\)\);$/cg_recv(\1));/}' |
        diff - "$log.cu" >"$log" 2>&1; then
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
    test_xchg_tags emitted_cuda_check emitted_cuda_check_tags test_nccl bench_reduce bench_ring \
    bench_cuda test_bench_cuda; do
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

# The GPU mode's parts that need no GPU: the NCCL debug parser, and records
# from synthetic outcomes (by position: ok, ok, failed_check, error, skipped;
# NCCL's tuning lines from a made-up log) for the tiny job's points at p = 4,
# read back here and by the report.
if [ -x build/cuda/test_bench_cuda ]; then
    d=$bc_dir/synth
    bc_points 4 | bc_job "$d/jobs/job-1.json" "$d" 1 4
    run "cuda test_bench_cuda" direct build/cuda/test_bench_cuda "$d/jobs/job-1.json"
    recs=$d/points.jsonl
    why=
    [ "$(wc -l <"$recs" 2>/dev/null)" = "$bc_n" ] || why="not $bc_n records"
    [ "$(grep -c '"backend":"cuda","library":"nccl"' "$recs")" = "$bc_n" ] || why="$why; backend/library"
    [ "$(bc_status "$recs" ar-native)" = ok ] || why="$why; ar-native not ok"
    [ "$(bc_status "$recs" ar-rab-ip)" = failed_check ] || why="$why; ar-rab-ip not failed_check"
    [ "$(bc_status "$recs" bc-binomial)" = skipped ] || why="$why; bc-binomial not skipped"
    grep -F '"point_id":"ar-native"' "$recs" | grep -q '"algorithm_source":"nccl_debug"' ||
        why="$why; ar-native: no nccl_debug source"
    grep -F '"point_id":"ar-native"' "$recs" |
        grep -q '"effective":{"algorithm":"ring/ll,tree/simple"' || why="$why; ar-native: effective"
    grep -F '"point_id":"a2a-native"' "$recs" | grep -q '"algorithm_source":"unobservable"' ||
        why="$why; a2a-native not unobservable"
    grep -F '"point_id":"ar-ring"' "$recs" |
        grep -q '"transport":"ipc".*"schedule_file":"schedules/allreduce/ring.json","schedule_hash":"[0-9a-f]\{16\}"' ||
        why="$why; ar-ring: transport or schedule"
    [ -f "$d/raw/ar-native.txt" ] || why="$why; no raw file"
    grep -F '"point_id":"ar-native-f16"' "$recs" |
        grep -q '"status":"ok".*"datatype":"float16".*"size_B":2000,' || why="$why; ar-native-f16: float16's size"
    grep -F '"point_id":"rs-rh-bf16-ip"' "$recs" |
        grep -q '"status":"ok".*"datatype":"bfloat16".*"size_B":800,' || why="$why; rs-rh-bf16-ip: bfloat16's size"
    if command -v python3 >/dev/null 2>&1 && ! python3 - "$recs" >"$log" 2>&1 <<'EOF'; then
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line)
    for k in ("schema_version", "campaign", "run_id", "point_id", "seq", "status", "reason",
              "collective", "backend", "library", "transport", "kind", "name", "schedule_file",
              "schedule_hash", "requested", "effective", "diff", "size_B", "timing", "bandwidth",
              "check", "tags", "raw"):
        assert k in r, "line %d: no %s" % (n, k)
    if r["status"] == "ok":
        assert r["timing"]["median_ns"] > 0 and r["timing"]["timer"] == "cuda_event", n
        assert r["check"]["reference"] == "formula" and r["check"]["verdict"] == "ok", n
        assert r["bandwidth"]["busbw_GBps"] > 0, n
        assert r["effective"]["algorithm_source"] in ("generated", "nccl_debug", "unobservable"), n
    # Per-phase tags: generated points only, the schedule's tags in id order
    # (its call tag first), each median as test_bench_cuda made it.
    if r["status"] == "ok" and r["kind"] == "generated":
        tags = r["tags"]
        assert isinstance(tags, list) and len(tags) >= 2, "line %d: tags %r" % (n, tags)
        assert tags[0]["name"] == r["name"] and tags[0]["kind"] == "call", n
        for k, t in enumerate(tags):
            assert k == 0 or t["name"].startswith(r["name"] + "/"), (n, t)
            assert t["kind"] in ("call", "phase", "round", "comm", "reduce", "copy"), (n, t)
            assert t["median_ns"] == 1000 * (k + 1) + 12, (n, t)
            # bench_cuda times its tags apart: shares are of the call tag's median.
            assert abs(t["share"] - t["median_ns"] / tags[0]["median_ns"]) < 1e-9, (n, t)
    else:
        assert r["tags"] is None, "line %d: %s %s has tags" % (n, r["kind"], r["status"])
EOF
        why="$why; $(tail -1 "$log")"
    fi
    if [ -z "$why" ]; then
        pass "cuda_bench_cuda_records_are_complete ($bc_n synthetic outcomes)"
    else
        fail "cuda_bench_cuda_records_are_complete:${why#;}"
    fi
    if [ -x build/collgen ]; then
        if build/collgen report "$d" >"$log" 2>&1 &&
            grep -q '^== allreduce / nccl / p=4 / double sum ==' "$log" &&
            grep -q '^== allreduce / nccl / p=4 / float16 sum ==' "$log" &&
            grep -q '^== reduce_scatter_block / nccl / p=4 / bfloat16 sum / in place ==' "$log" &&
            grep -q 'native default ran ring/ll,tree/simple (nccl_debug)' "$log"; then
            pass "cuda_bench_cuda_records_are_read_by_collgen_report"
        else
            fail "cuda_bench_cuda_records_are_read_by_collgen_report"
            tail -20 "$log"
        fi
    else
        skip "cuda_bench_cuda_records_are_read_by_collgen_report: no build/collgen (run ninja)"
    fi
fi

# The GPU test descriptor (tests/descriptors/gpu.json on platform gpu-node):
# it validates (generated schedules with a CUDA twin run for a nccl
# library); its native part runs through `collgen run` and bench_cuda
# (p = 1): every point recorded, skipped without a GPU, ok with one.
if [ -x build/collgen ] && [ -x build/cuda/bench_cuda ]; then
    build/collgen run tests/descriptors/gpu.json --platform gpu-node --dry-run >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '^plan: [1-9]' "$log"; then
        pass "cuda_gpu_test_descriptor_validates ($(grep '^plan: ' "$log" | cut -d';' -f1))"
    else
        fail "cuda_gpu_test_descriptor_validates (exit status $rc)"
        head -10 "$log"
    fi
    sed 's/, "generated:\*"//g; s/"ranks": \[1, 4\]/"ranks": [1]/; /"params":/d' tests/descriptors/gpu.json >"$bc_dir/gpu-native.json"
    build/collgen run "$bc_dir/gpu-native.json" --platform gpu-node --out "$bc_dir/camp" --quiet \
        --no-report >"$log" 2>&1
    rc=$?
    planned=$(grep -c . "$bc_dir/camp/points.jsonl" 2>/dev/null)
    planned=${planned:-0}
    case $(build/cuda/gpu_probe 2>&1) in
    "gpus "*) want=ok ;;
    *) want=skipped ;;
    esac
    n=$(grep -c "\"status\":\"$want\"" "$bc_dir/camp/points.jsonl" 2>/dev/null)
    n=${n:-0}
    if [ "$rc" -eq 0 ] && [ "$n" -eq 18 ] && [ "$planned" -eq 18 ]; then
        pass "cuda_gpu_campaign_runs_through_collgen_run (18 native points at p = 1, $want)"
    else
        fail "cuda_gpu_campaign_runs_through_collgen_run (exit status $rc, $n of $planned records $want, 18 planned)"
        tail -10 "$log"
    fi
else
    skip "cuda_gpu_test_descriptor_validates: no build/collgen (run ninja)"
fi

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
    # Topology schedules (the two-level GPU-era collectives) as virtual
    # nodes: 2 nodes x 2 ranks, and 3 ranks as 2 + 1, where their flat
    # fallbacks must run (runtime/topo.c, CG_PPN).
    for shape in ${CG_CUDA_SHAPES:-4:2 3:2}; do
        sp=${shape%%:*}
        sk=${shape##*:}
        if [ -n "$hung" ]; then
            fail "cuda emitted_cuda_check p=$sp ppn=$sk (not run: $hung timed out)"
            continue
        fi
        CG_PPN=$sk run "cuda emitted_cuda_check p=$sp ppn=$sk" "$sp" build/cuda/emitted_cuda_check
    done
    # The GPU mode: every point of the tiny job checked and timed. At p = 1
    # everything is ok; at p = 2 the generated points run over IPC (ok, but
    # allreduce_ring, corrupted by the test hook: failed_check) and NCCL's
    # are ok with two GPUs, skipped on one ("Duplicate GPU").
    for np in 1 2; do
        d=$bc_dir/gpu$np
        bc_points "$np" | bc_job "$d/jobs/job-$np.json" "$d" "$np" "$np"
        if [ "$np" = 1 ]; then
            bc_launch "bench_cuda p=1" 1 "$d/jobs/job-1.json" CG_BENCH_CORRUPT=
        else
            bc_launch "bench_cuda p=2" 2 "$d/jobs/job-2.json" CG_BENCH_CORRUPT=allreduce_ring
        fi
        why=
        [ "$last_rc" -eq 0 ] || why="exit status $last_rc"
        [ "$(wc -l <"$d/points.jsonl" 2>/dev/null)" = "$bc_n" ] || why="$why; not $bc_n records"
        for id in $bc_ids; do
            st=$(bc_status "$d/points.jsonl" "$id")
            want=ok
            [ "$np" = 2 ] && [ "$id" = ar-ring ] && want=failed_check
            case $np:$id:$st in
            *:*native*:skipped)
                # NCCL refuses two ranks on one GPU; a build without NCCL skips them all.
                [ "$np" = 2 ] || [ "$(sh runtime/cuda/flags.sh nccl)" = none ] ||
                    why="$why; $id: skipped (want ok)"
                grep -F "\"point_id\":\"$id\"" "$d/points.jsonl" |
                    grep -q 'Duplicate GPU\|built without NCCL' || why="$why; $id: skipped without the reason"
                ;;
            *:*:"$want") ;;
            *) why="$why; $id: ${st:-no record} (want $want)" ;;
            esac
        done
        grep -q '"pci_bus_id"' "$d/run-$np.json" 2>/dev/null || why="$why; run metadata"
        # Per-phase tags of the generated ok points (tagged repetitions of
        # their own): every tag lies inside the call tag, each repetition
        # (both the slowest rank's), so no median exceeds the call tag's, and
        # shares are of the call tag's.
        if ! python3 - "$d/points.jsonl" >"$log.tags" 2>&1 <<'EOF'; then
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    r = json.loads(line)
    if r["status"] != "ok" or r["kind"] != "generated":
        assert r["tags"] is None, "line %d: %s has tags" % (n, r["point_id"])
        continue
    t = r["tags"]
    assert t and t[0]["name"] == r["name"], "line %d: %s: tags %r" % (n, r["point_id"], t)
    assert t[0]["median_ns"] > 0 and t[0]["share"] == 1, (r["point_id"], t[0])
    assert all(0 <= x["median_ns"] <= t[0]["median_ns"] for x in t), (r["point_id"], t)
EOF
            why="$why; tags: $(tail -1 "$log.tags")"
        fi
        rm -f "$log.tags"
        if [ -z "$why" ]; then
            pass "cuda_bench_cuda_gpu_records_ok p=$np ($(grep -c '"status":"ok"' "$d/points.jsonl") ok)"
        else
            fail "cuda_bench_cuda_gpu_records_ok p=$np:${why#;}"
            grep -v '^POINT ok ' "$log" | tail -15
        fi
        grep '^POINT ' "$log" | sed 's/^/# /'
    done
    ;;
*)
    why=${probe#none: }
    for t in "test_reduce (kernel vs host reference, every dtype/op/count/alignment/order)" \
        "test_xchg (IPC transport and ring collectives, p = ${CG_CUDA_NPS:-1 2 3 4 8})" \
        "test_xchg_tags (the same with tags on)" \
        "test_nccl (NCCL transport and native NCCL collectives, p = 1)" \
        "emitted_cuda_check (every generated GPU collective vs a host reference, p = ${CG_CUDA_NPS:-1 2 3 4 8}, and p = 1 over NCCL)" \
        "emitted_cuda_check_tags (the same with tags on, shorter, and the tags)" \
        "cuda_bench_cuda_gpu_records_ok (bench_cuda on the tiny job, p = 1 and 2)"; do
        skip "$t: no GPU ($why)"
    done
    # bench_cuda without a GPU: exit status 5, every point recorded as
    # skipped with the reason, the run metadata written (no GPUs, the error).
    if [ -x build/cuda/bench_cuda ]; then
        d=$bc_dir/nogpu
        bc_points 2 | bc_job "$d/jobs/job-1.json" "$d" 1 2
        bc_launch "bench_cuda without a GPU, p=2" 2 "$d/jobs/job-1.json"
        why=
        [ "$last_rc" -eq 5 ] || why="exit status $last_rc, not 5"
        [ "$(wc -l <"$d/points.jsonl" 2>/dev/null)" = "$bc_n" ] || why="$why; not $bc_n records"
        [ "$(grep -c '"status":"skipped","reason":"no GPU on rank 0 (cudaGetDeviceCount: ' \
            "$d/points.jsonl")" = "$bc_n" ] || why="$why; not $bc_n skipped records with the reason"
        [ "$(grep -c '"backend":"cuda"' "$d/points.jsonl")" = "$bc_n" ] || why="$why; backend"
        { grep -q '"gpus":[[:space:]]*\[\]' "$d/run-1.json" &&
            grep -q '"gpu_error":[[:space:]]*"no GPU' "$d/run-1.json" &&
            grep -q '"program":[[:space:]]*"bench_cuda"' "$d/run-1.json"; } 2>/dev/null ||
            why="$why; run metadata"
        if command -v python3 >/dev/null 2>&1; then
            python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]; json.load(open(sys.argv[2]))' \
                "$d/points.jsonl" "$d/run-1.json" >/dev/null 2>&1 || why="$why; not valid JSON"
        fi
        grep -q 'bench_cuda: no GPU on rank 0 .*: every point of .* is recorded as skipped' "$log" ||
            why="$why; no message on stderr"
        if [ -z "$why" ]; then
            pass "cuda_bench_cuda_without_a_gpu_exits_5_and_records_every_point_skipped"
        else
            fail "cuda_bench_cuda_without_a_gpu_exits_5_and_records_every_point_skipped:${why#;}"
            tail -15 "$log"
        fi
    fi
    ;;
esac

echo "cuda: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
