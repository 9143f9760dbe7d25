#!/usr/bin/env bash
# tests/run_all.sh - every test of the project, after `ninja` has built them.
#
# Each test program prints "PASS name" / "FAIL name" lines; this script runs
# them all, shows every line, counts them, and ends with "N passed, M failed".
# A program that fails without printing a FAIL line (a crash, a time-out, a
# launch error) counts as one failure under its own name, so nothing fails
# silently. Exit status: 0 when nothing failed.
set -u
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run NAME COMMAND...: runs the command, echoes its output, counts its lines.
run() {
    local name=$1
    shift
    local t0=$SECONDS rc
    "$@" >"$log" 2>&1
    rc=$?
    count "$name" "$rc" "$t0" "$log"
}

# start NAME COMMAND...: runs the command in the background (its output to a
# file); collect NAME waits for it and counts it as run would, in the order
# of the collect calls. Why: the real-Slurm test mostly waits (sbatch --wait
# polls every few seconds), and about a third of the suite's two cores was
# idle; the sanitizers' fast part (a niced build, then tests that do not time
# anything) fills that time.
declare -A bg_pid bg_t0 bg_log
start() {
    local name=$1
    shift
    bg_log[$name]=$(mktemp)
    bg_t0[$name]=$SECONDS
    "$@" >"${bg_log[$name]}" 2>&1 &
    bg_pid[$name]=$!
}
collect() {
    local name=$1 rc
    wait "${bg_pid[$name]}"
    rc=$?
    count "$name" "$rc" "${bg_t0[$name]}" "${bg_log[$name]}"
    rm -f "${bg_log[$name]}"
}

# count NAME STATUS T0 LOG: echoes LOG and counts its PASS and FAIL lines.
count() {
    local name=$1 rc=$2 t0=$3 log=$4
    cat "$log"
    local p f
    p=$(grep -c '^PASS ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -gt 0 ]; then
        failures+=("$name: $(grep '^FAIL ' "$log" | head -3 | tr '\n' ';')")
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $name (exit status $rc, no FAIL line printed)"
        failed=$((failed + 1))
        failures+=("$name: exit status $rc")
    fi
    if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ]; then
        echo "FAIL $name (printed no PASS line: ran no test)"
        failed=$((failed + 1))
        failures+=("$name: ran no test")
    fi
    echo "# $name: $p passed, $f failed, $((SECONDS - t0)) s"
}

# The tags-off objects must reference no tag symbol; the tags-on ones must
# (or this check could never fail).
tags_compiled_out() {
    local f
    for f in openmpi mpich; do
        if nm "build/$f/emitted.o" | grep -q 'cg_tag_'; then
            echo "FAIL tags_off_objects_reference_no_tag_symbol $f: $(nm "build/$f/emitted.o" | grep cg_tag_ | head -3 | tr '\n' ' ')"
        else
            echo "PASS tags_off_objects_reference_no_tag_symbol $f"
        fi
        if nm "build/$f/emitted_tags.o" | grep -q ' U cg_tag_accs'; then
            echo "PASS tags_on_objects_reference_the_tag_table $f"
        else
            echo "FAIL tags_on_objects_reference_the_tag_table $f"
        fi
    done
}

run "generator: expressions" build/tests/test_expr
[ -x build/tests/test_verify ] && run "generator: verifier units" build/tests/test_verify
run "util: JSON writer, sanitiser, getters" build/tests/test_jsonio
[ -x tests/run_gen.sh ] && run "generator: goldens" tests/run_gen.sh
[ -x tests/run_mutation.sh ] && run "generator: mutation testing" tests/run_mutation.sh
[ -x tests/run_scale.sh ] && run "generator: traffic, simulate, goal" tests/run_scale.sh
for f in openmpi mpich; do
    for np in 1 2 3 4; do
        run "runtime $f p=$np" tests/mpirun.sh $f $np build/$f/test_runtime
    done
done
run "tags compiled out" tags_compiled_out
for f in openmpi mpich; do
    for np in 1 3 4; do
        run "tags $f p=$np" tests/mpirun.sh $f $np build/$f/test_tags build/collgen
    done
    # Topology schedules as 2 nodes x 2 ranks, and on a communicator that is
    # not regular (p = 3 as 2 + 1: their fallbacks run).
    run "tags $f p=4 ppn=2" env CG_PPN=2 tests/mpirun.sh $f 4 build/$f/test_tags build/collgen
    run "tags $f p=3 ppn=2" env CG_PPN=2 tests/mpirun.sh $f 3 build/$f/test_tags build/collgen
done
[ -x tests/run_emitted.sh ] && run "emitted vs native" tests/run_emitted.sh
[ -x tests/run_tag.sh ] && run "collgen tag and the baselines" tests/run_tag.sh
[ -x tests/run_cgtune.sh ] && run "libcgtune.so, the PMPI tuning library (p = 1, 2, 3, 4, 8)" tests/run_cgtune.sh --quick
[ -x tests/run_report.sh ] && run "harness: report" tests/run_report.sh
[ -x tests/run_harness.sh ] && run "harness: runner" tests/run_harness.sh
[ -x tests/run_timing.sh ] && run "harness: timing" tests/run_timing.sh
[ -x tests/run_trace.sh ] && run "harness: timelines" tests/run_trace.sh
[ -x tests/run_tune.sh ] && run "harness: tune and its exports" tests/run_tune.sh
# The sanitizers' fast part runs beside real Slurm and the fuzzers (start,
# above); tests/run_sanitize.sh without --fast is the whole flavour, about
# half an hour.
[ -x tests/run_sanitize.sh ] && start "sanitizers (ASan + UBSan, fast part)" tests/run_sanitize.sh --fast
# Real Slurm (daemons started and stopped by the test), where it can run.
if [ -x tests/run_slurm.sh ]; then
    if why=$(tests/run_slurm.sh --why-not); then
        echo "SKIP slurm: $why"
    else
        run "harness: real slurm" tests/run_slurm.sh
    fi
fi
# The libFuzzer targets, 10 s each here (tests/fuzz/README.md has the long
# run).
if [ -x tests/run_fuzz.sh ]; then
    if why=$(tests/run_fuzz.sh --why-not); then
        echo "SKIP fuzz: $why"
    else
        run "fuzzing (10 s per target)" tests/run_fuzz.sh 10
    fi
fi
[ -x tests/run_sanitize.sh ] && collect "sanitizers (ASan + UBSan, fast part)"
if command -v nvcc >/dev/null 2>&1; then
    run "cuda" tests/run_cuda.sh
else
    echo "SKIP cuda: nvcc is not on the PATH, so the GPU part is neither built nor tested"
fi

if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "Failures:"
    printf '  %s\n' "${failures[@]}"
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
