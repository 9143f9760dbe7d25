#!/usr/bin/env bash
# harness/device_check.sh [--dry] - the one prepared script for a machine
# with a GPU: builds the CUDA runtime, the generated GPU collectives
# (emitted/cuda/) and their tests for the GPU (sm_90 by default), runs
# tests/run_cuda.sh (kernel; NCCL at p = 1, native and the generated
# collectives; then at p = 1, 2, 3, 4, 8 processes on the GPU over IPC, tags
# off and on: the transport with the hand-written rings, and every generated
# collective against a host reference), a short benchmark (the reduction
# kernel against a device-to-device copy; the ring allreduce and allgather
# over IPC at 8 processes, 1 MiB to 1 GiB), the harness's GPU mode
# (build/cuda/bench_cuda, harness/gpu/: NCCL against the generated
# collectives at p = 1, the generated ones over IPC at p = 4, 64 KiB to
# 8 MiB, checked and timed, records as `collgen run` writes them), and
# writes $OUT/summary.txt, printed last. Meant to finish within 7 minutes:
# every stage has a time limit taken from one overall budget.
#
# Before: harness/pack_device.sh here (it fetches the Open MPI that travels
# in build/device/). Then the device run:
#   command: bash harness/device_check.sh      carry: ["build/device"]
#
# --dry (here, no GPU needed): copies the working tree as the device would
# get it (tracked and untracked-not-ignored files, plus build/device) into a
# temporary folder and runs this script there with the carried Open MPI:
# the build, the no-GPU tests, the SKIP lines and the summary, everything but
# the GPU work.
#
# Environment: OUT (results; default build/device-out), CG_CU_ARCH
# (default sm_90), CG_DEVICE_BUDGET (seconds, default 400: the stages' limits
# come out of it, so that the run ends within 7 minutes even when a stage hangs;
# build 150 s at most, tests 250 s, GPU mode 80 s, benchmark 40 + 100 s,
# whatever is left).
#
# Files in $OUT (at most 8 come back): summary.txt, env.txt, build.log,
# tests.log, bench.txt, gpu_bench.txt (bench_cuda's output), gpu_bench.tgz
# (the GPU mode's campaign directory: `tar xzf gpu_bench.tgz` here, then
# `build/collgen report device-gpu-bench`).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

if [ "${1:-}" = "--dry" ]; then
    [ -d build/device/openmpi ] || { echo "device_check --dry: run harness/pack_device.sh first" >&2; exit 2; }
    dry=$(mktemp -d /tmp/cg_device_dry.XXXXXX)
    git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
        [ -e "$f" ] || continue
        mkdir -p "$dry/$(dirname "$f")"
        cp -p "$f" "$dry/$f"
    done
    mkdir -p "$dry/build"
    cp -a build/device "$dry/build/device"
    echo "device_check --dry: running in $dry"
    out=$root/build/device-dry-out
    rm -rf "$out"
    CG_DEVICE_DRY=1 OUT=$out bash "$dry/harness/device_check.sh"
    rc=$?
    if [ -n "${CG_DEVICE_DRY_KEEP:-}" ]; then
        echo "device_check --dry: kept $dry"
    else
        rm -rf "$dry"
    fi
    exit "$rc"
fi

OUT=${OUT:-$root/build/device-out}
mkdir -p "$OUT"
summary=$OUT/summary.txt
budget=${CG_DEVICE_BUDGET:-400}
t_start=$(date +%s)
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
left() { echo $((budget - ($(date +%s) - t_start))); }
# limit CAP: a stage's time limit, CAP at most, leaving 20 s for the summary
limit() {
    local l
    l=$(($(left) - 20))
    [ "$l" -gt "$1" ] && l=$1
    [ "$l" -lt 1 ] && l=1
    echo "$l"
}

say "collgen device check: $(date -u '+%Y-%m-%d %H:%M:%S UTC')${CG_DEVICE_DRY:+ (dry run: no GPU work)}"

# ---- the environment ---------------------------------------------------------

# Carried tools first (the MPI names), carried fallbacks last; executable
# whatever the copy kept of their modes.
chmod +x build/device/bin/* build/device/openmpi/bin/* build/device/fallback/bin/* \
    tests/run_cuda.sh tests/mpirun.sh 2>/dev/null
export PATH="$root/build/device/bin:$PATH:/usr/local/cuda/bin:$root/build/device/fallback/bin"
if ! command -v nvcc >/dev/null 2>&1; then
    say "FAIL environment: no nvcc on the PATH"
    cat "$summary"
    exit 1
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
export CUDA_HOME
export CG_CU_ARCH=${CG_CU_ARCH:-sm_90}

# NCCL: the toolkit's, the system's, or the one a Python wheel brings; its
# header next to it or, failing that, the carried copy. flags.sh reads
# CG_NCCL_HOME, a folder with include/nccl.h and lib/libnccl.so.2.
nccl_lib=
for l in "$CUDA_HOME/lib64/libnccl.so.2" "$CUDA_HOME/lib/libnccl.so.2" \
    /usr/lib/x86_64-linux-gnu/libnccl.so.2 /usr/local/lib/libnccl.so.2; do
    [ -e "$l" ] && { nccl_lib=$l; break; }
done
if [ -z "$nccl_lib" ] && command -v python3 >/dev/null 2>&1; then
    d=$(timeout 30 python3 -c 'import nvidia.nccl as m, os; print(list(m.__path__)[0])' 2>/dev/null || true)
    [ -n "$d" ] && [ -e "$d/lib/libnccl.so.2" ] && nccl_lib=$d/lib/libnccl.so.2
fi
if [ -z "$nccl_lib" ]; then
    nccl_lib=$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 / { print $NF; exit }')
fi
if [ -z "$nccl_lib" ]; then
    nccl_lib=$(timeout 30 find / -xdev -name libnccl.so.2 -print -quit 2>/dev/null || true)
fi
nccl_inc=
if [ -n "$nccl_lib" ]; then
    for h in "$(dirname "$(dirname "$nccl_lib")")/include/nccl.h" "$CUDA_HOME/include/nccl.h" \
        /usr/include/nccl.h /usr/local/include/nccl.h "$root/build/device/fallback/include/nccl.h"; do
        [ -f "$h" ] && { nccl_inc=$h; break; }
    done
fi
if [ -n "$nccl_lib" ] && [ -n "$nccl_inc" ]; then
    nh=$root/build/nccl-links
    rm -rf "$nh"
    mkdir -p "$nh/include" "$nh/lib"
    ln -s "$(readlink -f "$nccl_inc")" "$nh/include/nccl.h"
    ln -s "$(readlink -f "$nccl_lib")" "$nh/lib/libnccl.so.2"
    export CG_NCCL_HOME=$nh
    nccl_desc="$nccl_lib (header $nccl_inc)"
else
    export CG_NCCL_HOME=none
    nccl_desc="not found: built without NCCL (CG_CUDA_NO_NCCL)"
fi

# cJSON, for bench_cuda (harness/gpu/): the carried copy (the dry run uses it
# too), else the system's. Without either, everything else is built.
cjson_desc="not found: build/cuda/bench_cuda not built (run harness/pack_device.sh)"
if [ -f build/device/fallback/include/cjson/cJSON.h ] && [ -e build/device/fallback/lib/libcjson.so.1 ]; then
    export CG_CJSON_HOME=$root/build/device/fallback
    cjson_desc="carried (build/device/fallback)"
elif [ -f /usr/include/cjson/cJSON.h ]; then
    cjson_desc="the system's"
fi

mpi_desc="not found"
if [ -x build/device/openmpi/bin/mpirun ]; then
    mpi_desc="carried Open MPI $(cat build/device/openmpi/.version 2>/dev/null) (build/device)"
elif command -v mpirun.openmpi >/dev/null 2>&1; then
    mpi_desc="this machine's $(command -v mpirun.openmpi)"
fi

{
    echo "# uname: $(uname -srm)"
    echo "# cores: $(nproc)"
    echo "# nvcc: $(nvcc --version | tail -1)"
    echo "# CUDA_HOME: $CUDA_HOME"
    echo "# NCCL: $nccl_desc"
    echo "# cJSON: $cjson_desc"
    echo "# MPI: $mpi_desc"
    echo "# gcc: $(gcc --version | head -1)"
    echo "# ninja: $(command -v ninja) $(ninja --version 2>/dev/null)"
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
            --format=csv,noheader 2>&1 | sed 's/^/# GPU: /'
    else
        echo "# GPU: no nvidia-smi"
    fi
} >"$OUT/env.txt"
tee -a "$summary" <"$OUT/env.txt"
if [ "$mpi_desc" = "not found" ]; then
    say "FAIL environment: no MPI (run harness/pack_device.sh here and carry build/device)"
    cat "$summary"
    exit 1
fi

# ---- build -------------------------------------------------------------------

t0=$(date +%s)
lim=$(limit 150)
targets=
case $cjson_desc in
"not found"*)
    # Every output but the GPU mode's (tests/run_cuda.sh then fails it).
    targets=$(ninja -f runtime/cuda.ninja -t targets all 2>/dev/null | sed -n 's/: .*//p' |
        grep -v '^build/cuda/all$\|bench_cuda\|^build/cuda/harness/' | tr '\n' ' ')
    ;;
esac
# shellcheck disable=SC2086 # targets: several words, or none (everything)
if timeout -k 5 "$lim" ninja -f runtime/cuda.ninja -j "$(nproc)" $targets >"$OUT/build.log" 2>&1; then
    say "PASS build ($(($(date +%s) - t0)) s, -arch=$CG_CU_ARCH)"
else
    say "FAIL build ($(($(date +%s) - t0)) s, limit $lim s): last lines of build.log:"
    grep -v '^\[' "$OUT/build.log" | tail -15 | tee -a "$summary"
    cat "$summary"
    exit 1
fi
probe=$(build/cuda/gpu_probe 2>&1 || true)
say "# gpu_probe: $probe"

# ---- tests -------------------------------------------------------------------

t0=$(date +%s)
lim=$(limit 250)
CG_CUDA_SKIP_BUILD=1 CG_CUDA_DEADLINE=$(($(date +%s) + lim)) CG_MPIRUN_TIMEOUT=90 \
    timeout -k 10 $((lim + 15)) bash tests/run_cuda.sh >"$OUT/tests.log" 2>&1
trc=$?
np=$(grep -c '^PASS ' "$OUT/tests.log")
nf=$(grep -c '^FAIL ' "$OUT/tests.log")
ns=$(grep -c '^SKIP ' "$OUT/tests.log")
say "$([ "$trc" -eq 0 ] && [ "$nf" -eq 0 ] && echo PASS || echo FAIL) tests: $np passed, $nf failed, $ns skipped ($(($(date +%s) - t0)) s, exit $trc)"
grep '^FAIL \|^SKIP \|^# cuda \|^# emitted_cuda_check' "$OUT/tests.log" | head -60 | sed 's/^/  /' |
    tee -a "$summary"
grep -A3 '^  .*check failed' "$OUT/tests.log" | head -20 | sed 's/^/  /' | tee -a "$summary"
# emitted_cuda_check's failures: "  rank R: SCHEDULE: CASE: what differs"
grep '^  rank [0-9]*: [a-z0-9_]*: ' "$OUT/tests.log" | head -20 | sed 's/^/  /' | tee -a "$summary"

# ---- the harness's GPU mode: bench_cuda ----------------------------------------
#
# Job files as `collgen run` would write them (harness/gpu/job.sh), started
# as the runner would: NCCL (native:default) against every generated
# allreduce and allgather at p = 1 (NCCL refuses two ranks on one GPU), then
# every generated schedule of the five collectives over the CUDA runtime's
# IPC transport at p = 4 processes sharing the GPU (NCCL's default too:
# recorded skipped on one GPU), at 64 KiB, 1 MiB and 8 MiB: one point per
# implementation and size (36 and 87 with the schedules of this writing,
# bcast_knomial also at radix 2 and 8).
# Each point is checked against the formula before it is timed (CUDA
# events, the slowest rank per repetition, bench's stopping rule: 10 to 100
# repetitions, 0.1 s).

gb=$root/build/device-gpu-bench
gb_timing='{ "sync": "barrier", "warmup": 3, "min_reps": 10, "max_reps": 100, "rse_target": 0.02, "budget_s": 0.1 }'
rm -rf "$gb"
: >"$OUT/gpu_bench.txt"
# shellcheck source=harness/gpu/job.sh
. harness/gpu/job.sh
gb_points() { # NP COLLECTIVE...: native:default and every generated schedule of each
    local np=$1 seq=0 coll dt op es impls impl bytes
    shift
    for coll in "$@"; do
        case $coll in
        allreduce | reduce_scatter_block) dt=double op=sum es=8 ;;
        *) dt=float op=- es=4 ;;
        esac
        impls="native:default $(sed -n 's/^ *"\([a-z_]*\)", \/\* name \*\/$/\1/p' emitted/cuda/all.cu |
            grep "^${coll}_" | sed 's/^/generated:/')"
        # A run-time parameter of the GPU code at both ends of its range.
        [ "$coll" = bcast ] && impls="$impls generated:bcast_knomial(radix=2) generated:bcast_knomial(radix=8)"
        for bytes in 65536 1048576 8388608; do
            for impl in $impls; do
                bc_point "$(bc_id "$coll" "$np" "$impl" "$dt" "$op" 0 false "$bytes")" "$seq" "$coll" \
                    "$impl" $((bytes / es)) "$dt" "$op" 0 false
                seq=$((seq + 1))
            done
        done
    done
}
# gb_check NP: PASS/FAIL line of the job at NP ranks from its records and exit status.
gb_check() {
    local np=$1 rc=$2 planned recs n_ok n_bad n_skip
    planned=$(grep -c '"id":' "$gb/jobs/job-$np.json")
    recs=$(grep -c "\"run_id\":$np," "$gb/points.jsonl" 2>/dev/null)
    recs=${recs:-0}
    n_ok=$(grep "\"run_id\":$np," "$gb/points.jsonl" 2>/dev/null | grep -c '"status":"ok"')
    n_skip=$(grep "\"run_id\":$np," "$gb/points.jsonl" 2>/dev/null | grep -c '"status":"skipped"')
    n_bad=$((recs - n_ok - n_skip))
    if [ "$rc" -eq 0 ] && [ "$recs" -eq "$planned" ] && [ "$n_bad" -eq 0 ]; then
        say "PASS gpu bench p=$np: $recs points ($n_ok ok, $n_skip skipped)"
    else
        say "FAIL gpu bench p=$np: exit $rc, $recs of $planned points recorded ($n_ok ok, $n_skip skipped, $n_bad error or failed_check)"
    fi
}
t0=$(date +%s)
case $probe in
"gpus "*)
    lim=$(limit 80)
    if [ ! -x build/cuda/bench_cuda ]; then
        say "FAIL gpu bench: build/cuda/bench_cuda was not built (cJSON: $cjson_desc)"
    elif [ "$lim" -lt 30 ]; then
        say "SKIP gpu bench: only $lim s left"
    else
        gb_points 1 allreduce allgather | bc_job "$gb/jobs/job-1.json" "$gb" 1 1 device-gpu-bench "$gb_timing"
        gb_points 4 allreduce allgather reduce_scatter_block bcast alltoall |
            bc_job "$gb/jobs/job-4.json" "$gb" 4 4 device-gpu-bench "$gb_timing"
        for np in 1 4; do
            # What is left of the stage (p = 1: 30 s at most), within the budget.
            l=$((lim - ($(date +%s) - t0)))
            [ "$np" = 1 ] && [ "$l" -gt 30 ] && l=30
            l=$(limit "$l")
            if [ "$l" -lt 10 ]; then
                say "SKIP gpu bench p=$np: only $l s left"
                continue
            fi
            echo "== bench_cuda p=$np (limit $l s)" >>"$OUT/gpu_bench.txt"
            CG_MPIRUN_TIMEOUT=$l bash tests/mpirun.sh openmpi "$np" build/cuda/bench_cuda \
                "$gb/jobs/job-$np.json" >>"$OUT/gpu_bench.txt" 2>&1
            gb_check "$np" $?
        done
    fi
    say "# gpu bench: $(($(date +%s) - t0)) s (gpu_bench.txt, gpu_bench.tgz)"
    {
        # One line per process count, collective and size from bench_cuda's
        # POINT lines (every point is in gpu_bench.txt and gpu_bench.tgz).
        echo "GPU mode (bench_cuda): GPU time in us, median of the slowest rank per repetition:"
        awk '/^POINT / {
            st = $2; split($3, f, "-"); np = substr(f[3], 2); impl = f[4]; b = f[9]; sub(/B$/, "", b)
            med = ""; bw = ""
            for (i = 4; i <= NF; i++) {
                if ($i ~ /^median_us=/) med = substr($i, 11)
                if ($i ~ /^busbw_GBps=/) bw = substr($i, 12)
            }
            k = np " " f[1] " " b
            if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
            if (st != "ok") next
            if (impl == "native_default") nccl[k] = med
            else if (impl ~ /^generated_/ && (!(k in best) || med + 0 < best[k] + 0)) {
                best[k] = med; bestn[k] = substr(impl, 11); bestbw[k] = bw
            }
        }
        END {
            printf "  %2s  %-21s %8s  %9s  %-38s %9s  %8s  %9s\n", "p", "collective", "size",
                "NCCL us", "best generated", "gen us", "gen/NCCL", "gen busbw"
            for (i = 1; i <= nk; i++) {
                split(order[i], a, " "); k = order[i]; sz = a[3] + 0
                size = (sz >= 1048576) ? sprintf("%d MiB", sz / 1048576) : sprintf("%d KiB", sz / 1024)
                ratio = ((k in nccl) && (k in best) && nccl[k] > 0) ? sprintf("%.3f", best[k] / nccl[k]) : "-"
                printf "  %2s  %-21s %8s  %9s  %-38s %9s  %8s  %9s\n", a[1], a[2], size,
                    (k in nccl) ? nccl[k] : "-", (k in best) ? bestn[k] : "-",
                    (k in best) ? best[k] : "-", ratio, (k in best) ? bestbw[k] : "-"
            }
        }' "$OUT/gpu_bench.txt"
        grep '^POINT \(error\|failed_check\|skipped\) ' "$OUT/gpu_bench.txt" | grep -v 'Duplicate GPU' |
            head -20 | cut -c1-200 | sed 's/^/  /'
        # Per-phase tags (CUDA events) of one record: the ring allreduce at
        # p = 4, 8 MiB; and what the parameterised points read.
        echo "Tags of allreduce_ring, p = 4, 8 MiB (name, kind, median ns, share of the call):"
        grep '"run_id":4,' "$gb/points.jsonl" 2>/dev/null | grep '"name":"allreduce_ring"' |
            grep '"size_B":8388608,' | head -1 | grep -o '"tags":\[[^]]*\]' |
            grep -o '{"name":"[^"]*","kind":"[a-z]*","median_ns":[0-9.e+]*,"share":[0-9.e+-]*}' |
            sed 's/{"name":"\([^"]*\)","kind":"\([a-z]*\)","median_ns":\([^,]*\),"share":\(.*\)}/  \1 \2 \3 \4/' |
            head -12
        echo "Parameterised points (effective params as the code read them):"
        grep '"run_id":4,' "$gb/points.jsonl" 2>/dev/null | grep '"name":"bcast_knomial(radix=' |
            sed -n 's/.*"point_id":"\([^"]*\)","seq":[0-9]*,"status":"\([a-z_]*\)".*"effective":{.*"params":\({[^}]*}\).*/  \1 \2 effective.params \3/p' |
            head -6
    } | tee -a "$summary"
    ;;
*)
    # No GPU (the dry run): bench_cuda must say so, exit 5 and record every
    # point as skipped.
    if [ -x build/cuda/bench_cuda ]; then
        gb_points 1 allreduce allgather | bc_job "$gb/jobs/job-1.json" "$gb" 1 1 device-gpu-bench "$gb_timing"
        CG_MPIRUN_TIMEOUT=$(limit 30) bash tests/mpirun.sh openmpi 1 build/cuda/bench_cuda \
            "$gb/jobs/job-1.json" >>"$OUT/gpu_bench.txt" 2>&1
        rc=$?
        n=$(grep -c '"status":"skipped","reason":"no GPU' "$gb/points.jsonl" 2>/dev/null)
        n=${n:-0}
        if [ "$rc" -eq 5 ] && [ "$n" -eq "$(grep -c '"id":' "$gb/jobs/job-1.json")" ]; then
            say "SKIP gpu bench: no GPU (${probe#none: }); bench_cuda exited 5 and recorded all $n points as skipped"
        else
            say "FAIL gpu bench without a GPU: bench_cuda exit $rc (want 5), $n points recorded skipped"
        fi
    else
        say "FAIL gpu bench: build/cuda/bench_cuda was not built (cJSON: $cjson_desc)"
    fi
    ;;
esac
[ -d "$gb" ] && tar -C "$root/build" -czf "$OUT/gpu_bench.tgz" device-gpu-bench 2>/dev/null

# ---- benchmark ---------------------------------------------------------------

: >"$OUT/bench.txt"
case $probe in
"gpus "*)
    t0=$(date +%s)
    lim=$(limit 40)
    timeout -k 5 "$lim" build/cuda/bench_reduce 1024 >>"$OUT/bench.txt" 2>&1 ||
        say "FAIL bench_reduce (exit $?, limit $lim s)"
    lim=$(limit 100)
    if grep -q '^FAIL cuda test_xchg.*\(exit status 12[4]\|exit status 137\|timed out\)' "$OUT/tests.log"; then
        say "SKIP bench_ring: the IPC transport tests timed out"
    elif [ "$lim" -gt 30 ]; then
        CG_MPIRUN_TIMEOUT=$lim bash tests/mpirun.sh openmpi 8 build/cuda/bench_ring 1024 $((lim - 40)) \
            >>"$OUT/bench.txt" 2>&1 || say "FAIL bench_ring (exit $?, limit $lim s)"
    else
        say "SKIP bench_ring: only $lim s left"
    fi
    say "# benchmark: $(($(date +%s) - t0)) s (bench.txt)"
    {
        echo "Reduction kernel (1 GiB buffers; traffic = bytes read + written; median of 10):"
        grep '^# \|^BENCH copy\|^BENCH reduce' "$OUT/bench.txt" | grep -v '^# bench_ring' |
            sed 's/^BENCH //; s/^/  /'
        echo "Ring over the runtime's transport, 8 processes on the GPU (busbw as NCCL counts it):"
        grep '^BENCH ring\|^# bench_ring\|copy_GBps' "$OUT/bench.txt" | sed 's/^BENCH //; s/^/  /'
        grep '^FAIL\|^SKIP' "$OUT/bench.txt" | sed 's/^/  /'
    } | tee -a "$summary"
    ;;
*)
    say "SKIP benchmark: no GPU (${probe#none: })"
    build/cuda/bench_reduce >>"$OUT/bench.txt" 2>&1 || true
    ;;
esac

total=$(($(date +%s) - t_start))
failed=$(grep -c '^FAIL' "$summary")
say "# total: ${total} s; $( [ "$failed" -eq 0 ] && echo "no failure" || echo "$failed FAIL line(s)" )"
echo
echo "================ summary ($summary) ================"
cat "$summary"
[ "$failed" -eq 0 ]
