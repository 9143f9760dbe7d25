#!/usr/bin/env bash
# tests/run_emitted.sh [NAME]
#
# Runs build/FLAVOUR/emitted_check (tests/emitted_check.c) under both MPIs at
# p = 1 2 3 4 5 8 (NPS="1 2 3 4 5 7 8" adds 7), for every generated algorithm or only NAME, and passes
# its output through: one "PASS emitted NAME FLAVOUR p=P" or "FAIL ..." line
# per algorithm and run, which the test runner counts, plus a "  mismatch"
# line for each of the first wrong cases. A run that crashes, times out or
# exits nonzero without saying which algorithm failed gets its own line,
#   FAIL emitted emitted_check FLAVOUR p=P (exit status S ...)
# so that no failure is silent. Each run's whole output is kept in
# build/FLAVOUR/emitted_check.pP.log.
#
# Environment: FLAVOURS (default "openmpi mpich"), NPS (default
# "1 2 3 4 5 8"; p = 7 is left out to keep the suite within CI's 20 minutes), SHAPES (p:ppn pairs for the topology schedules, default
# "4:2 6:3 8:2 7:2": two and four nodes, an odd ppn, an irregular shape; the
# longer set "4:2 6:3 8:2 8:4 7:2 6:4" adds two, keeping the suite within
# CI's 20 minutes on 2 cores), PARAMS (schedule:param:value@p runs of ranged
# params), CG_BUILD_DIR (default build), and CG_MPIRUN_TIMEOUT,
# read by tests/mpirun.sh. From p = 5 the largest count is 2^15 + 3
# (CG_CHECK_LARGE_COUNT=32771, tests/emitted_check.c says why; LARGE=full
# keeps 2^18 + 3 at every p). Exits 1 when anything failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root" || exit 2

build=${CG_BUILD_DIR:-build}
flavours=${FLAVOURS:-openmpi mpich}
nps=${NPS:-1 2 3 4 5 8}
passed=0

# large P: the environment setting of emitted_check's largest count at p = P.
large() {
    if [ "$1" -ge 5 ] && [ "${LARGE:-}" != full ]; then
        echo CG_CHECK_LARGE_COUNT=32771
    else
        echo CG_CHECK_LARGE_COUNT=
    fi
}
failed=0

for flavour in $flavours; do
    prog=$build/$flavour/emitted_check
    if [ ! -x "$prog" ]; then
        echo "FAIL emitted emitted_check $flavour (not built: $prog)"
        failed=$((failed + 1))
        continue
    fi
    for p in $nps; do
        log=$build/$flavour/emitted_check.p$p.log
        start=$(date +%s)
        env "$(large "$p")" tests/mpirun.sh "$flavour" "$p" "$prog" "$@" >"$log" 2>&1
        status=$?
        seconds=$(($(date +%s) - start))
        grep -E '^(PASS|FAIL) |^  mismatch ' "$log"
        npass=$(grep -c '^PASS ' "$log")
        nfail=$(grep -c '^FAIL ' "$log")
        passed=$((passed + npass))
        failed=$((failed + nfail))
        if [ "$status" -ne 0 ] && [ "$nfail" -eq 0 ]; then
            case $status in
            124 | 137) why="timed out after ${CG_MPIRUN_TIMEOUT:-300} s" ;;
            *) why="crashed or refused to run" ;;
            esac
            # emitted_check prints "# start NAME" before each algorithm.
            name=$(awk '/^# start / { name = $3 }
                        /^(PASS|FAIL) emitted / { if ($3 == name) name = "" }
                        END { print name }' "$log")
            echo "FAIL emitted ${name:-emitted_check} $flavour p=$p" \
                "(exit status $status: $why; later algorithms did not run; log: $log)"
            tail -n 15 "$log" | sed 's/^/  | /'
            failed=$((failed + 1))
        fi
        echo "# emitted_check $flavour p=$p: ${seconds} s, exit status $status"
    done
done

# The topology schedules again as virtual nodes (CG_PPN, runtime/topo.c):
# p:ppn pairs, regular ones and two that are not (7 = 2+2+2+1, 6 = 4+2),
# where the fallbacks must run and be right.
shapes=${SHAPES:-4:2 6:3 8:2 7:2}
for flavour in $flavours; do
    prog=$build/$flavour/emitted_check
    [ -x "$prog" ] || continue
    for shape in $shapes; do
        p=${shape%%:*}
        k=${shape##*:}
        log=$build/$flavour/emitted_check.p$p.ppn$k.log
        start=$(date +%s)
        env "$(large "$p")" CG_PPN="$k" CG_CHECK_TOPOLOGY_ONLY=1 tests/mpirun.sh "$flavour" "$p" "$prog" "$@" \
            >"$log" 2>&1
        status=$?
        seconds=$(($(date +%s) - start))
        grep -E '^(PASS|FAIL) |^  mismatch ' "$log"
        npass=$(grep -c '^PASS ' "$log")
        nfail=$(grep -c '^FAIL ' "$log")
        passed=$((passed + npass))
        failed=$((failed + nfail))
        if [ "$status" -ne 0 ] && [ "$nfail" -eq 0 ]; then
            echo "FAIL emitted emitted_check $flavour p=$p ppn=$k (exit status $status; log: $log)"
            tail -n 15 "$log" | sed 's/^/  | /'
            failed=$((failed + 1))
        fi
        echo "# emitted_check $flavour p=$p ppn=$k: ${seconds} s, exit status $status"
    done
done

# Ranged params at values other than the default (CG_PARAM_<schedule>_<name>,
# runtime/param.c): schedule:param:value@p, including the range's ends.
params=${PARAMS:-bcast_knomial:radix:2@7 bcast_knomial:radix:3@8 bcast_knomial:radix:8@5 bcast_chain:segments:1@4 bcast_chain:segments:32@5 bcast_chain:segments:3@3 allreduce_ring:segments:16@4 bcast_circulant:n:1@5 bcast_circulant:n:6@7}
for flavour in $flavours; do
    prog=$build/$flavour/emitted_check
    [ -x "$prog" ] || continue
    for spec in $params; do
        name=${spec%%:*}
        rest=${spec#*:}
        param=${rest%%:*}
        value=${rest#*:}
        p=${value##*@}
        value=${value%@*}
        log=$build/$flavour/emitted_check.$name.$param$value.log
        env "$(large "$p")" "CG_PARAM_${name}_${param}=$value" tests/mpirun.sh "$flavour" "$p" "$prog" "$name" \
            >"$log" 2>&1
        status=$?
        grep -E '^(PASS|FAIL) |^  mismatch ' "$log" | sed "s/ p=$p / p=$p $param=$value /"
        npass=$(grep -c '^PASS ' "$log")
        nfail=$(grep -c '^FAIL ' "$log")
        passed=$((passed + npass))
        failed=$((failed + nfail))
        if [ "$status" -ne 0 ] && [ "$nfail" -eq 0 ]; then
            echo "FAIL emitted $name $flavour p=$p $param=$value (exit status $status; log: $log)"
            failed=$((failed + 1))
        fi
    done
done

echo "# run_emitted.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
