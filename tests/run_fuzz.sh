#!/usr/bin/env bash
# tests/run_fuzz.sh [SECONDS] - the libFuzzer targets of tests/fuzz/, under
# AddressSanitizer and UndefinedBehaviorSanitizer (clang-14):
#
#   build/fuzz/fuzz_schedule     a schedule through parse, check, verify
#                                (p = 1..6), analyse and emit
#   build/fuzz/fuzz_descriptor   a platform and a test descriptor through
#                                validation, planning and rendering
#
# Each runs SECONDS (default 45: the short run of the test suite; the long
# run is `tests/run_fuzz.sh 3600`, tests/fuzz/README.md) from its corpus,
# build/fuzz/corpus/<target>/, which keeps what it finds between runs and is
# seeded from schedules/, the goldens, descriptors/ and tests/fuzz/seeds/
# (inputs of past findings). A crash, a sanitizer
# report, an internal error (exit 70) or an input slower than 10 s is a
# FAIL, with the input saved as build/fuzz/crash-* (or slow-unit-*, ...);
# `build/fuzz/fuzz_schedule FILE` replays it.
#
# The targets are rebuilt when a source under gen/, harness/ or tests/fuzz/
# is newer (clang, not ninja: the compiler flags of every object differ).
# One line per target, "PASS fuzz <target> (...)" or "FAIL fuzz <target>
# (why)"; without clang-14's libFuzzer one "SKIP fuzz all (why)", and
# `tests/run_fuzz.sh --why-not` prints why and exits 0 (1: it can run).
set -u
cd "$(dirname "$0")/.."

cc=${CG_FUZZ_CC:-clang-14}
out=build/fuzz
failed=0
pass() { echo "PASS fuzz $1"; }
fail() {
    echo "FAIL fuzz $1${2:+ ($2)}"
    failed=$((failed + 1))
}

# why_not: prints why the targets cannot be built here and returns 0, or
# returns 1 when they can.
why_not() {
    mkdir -p "$out"
    if ! command -v "$cc" >/dev/null 2>&1 ||
        ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
        "$cc" -fsanitize=fuzzer,address,undefined -x c - -o "$out/probe" 2>"$out/probe.err"; then
        echo "$cc with libFuzzer is not installed (harness/setup.sh installs clang-14 and libclang-rt-14-dev): $(head -1 "$out/probe.err" 2>/dev/null)"
        return 0
    fi
    return 1
}
if [ "${1:-}" = "--why-not" ]; then
    why_not && exit 0
    exit 1
fi
secs=${1:-45}
if reason=$(why_not); then
    echo "SKIP fuzz all ($reason)"
    exit 0
fi

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=c11 -Wall -Wextra -Werror -O1 -g $san -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Igen -Iruntime/util -Iruntime"
# The generator's passes (all of gen/ but main.c and collgen tag's ctag*.c,
# which read C with libclang, not schedules), the table of collectives they
# read and what they share with the harness (runtime/util/).
util_src="$(ls runtime/util/*.c) runtime/colls.c"
gen_src="$(ls gen/*.c | grep -v -e '^gen/main\.c$' -e '^gen/ctag') $util_src"
# The runner's files but run.c (the command itself: campaign directories,
# jobs), what the runner plans and renders with; no generator: the harness
# reads emitted/registry.json.
harness_src="harness/descriptor.c $(ls harness/run_*.c)"

# build TARGET SOURCES...: rebuilds $out/TARGET when a source or header is newer.
build() {
    local target=$1 stale=0 f
    shift
    if [ ! -x "$out/$target" ]; then
        stale=1
    else
        for f in "$@" gen/*.h harness/*.h runtime/util/*.h runtime/cg_colls.h; do
            [ "$f" -nt "$out/$target" ] && stale=1
        done
    fi
    [ "$stale" = 0 ] && return 0
    mkdir -p "$out/obj/$target"
    local objs=() pids=() src o
    for src in "$@"; do
        o=$out/obj/$target/$(echo "$src" | tr / _).o
        objs+=("$o")
        # The target itself links libFuzzer's main; the rest is instrumented for it.
        "$cc" $cflags -fsanitize=fuzzer-no-link -c "$src" -o "$o" &
        pids+=($!)
        if [ ${#pids[@]} -ge 2 ]; then
            wait "${pids[0]}" || return 1
            pids=("${pids[@]:1}")
        fi
    done
    for f in "${pids[@]}"; do
        wait "$f" || return 1
    done
    "$cc" $san -fsanitize=fuzzer -o "$out/$target" "${objs[@]}" -lcjson -lm
}

if ! build fuzz_schedule tests/fuzz/fuzz_schedule.c $gen_src; then
    fail schedule_pipeline "does not build"
    exit 1
fi
if ! build fuzz_descriptor tests/fuzz/fuzz_descriptor.c $util_src $harness_src; then
    fail descriptor_validation "does not build"
    exit 1
fi

# Seeds: every schedule and golden; descriptors as "platform NUL test".
seed=$out/seed
rm -rf "$seed"
mkdir -p "$seed/schedule" "$seed/descriptor" "$out/corpus/schedule" "$out/corpus/descriptor"
n=0
for f in $(find schedules tests/gen tests/descriptors/schedules tests/fuzz/seeds -name '*.json' | sort); do
    n=$((n + 1))
    cp "$f" "$seed/schedule/$n.json"
done
n=0
for f in descriptors/tests/*.json tests/descriptors/*.json $(ls tests/descriptors/bad/*.json | grep -v '/platform_'); do
    n=$((n + 1))
    { printf '\0'; cat "$f"; } >"$seed/descriptor/t$n"
done
for f in descriptors/platforms/*.json tests/descriptors/bad/platform_*.json; do
    n=$((n + 1))
    { cat "$f"; printf '\0'; } >"$seed/descriptor/p$n"
    { cat "$f"; printf '\0'; cat tests/descriptors/slurm.json; } >"$seed/descriptor/s$n"
done

# start TARGET DICT: fuzzes for $secs seconds from corpus + seeds, in the
# background (the targets are single-threaded: both run at once, one a core).
start() {
    local target=$1 dict=$2 log=$out/$1.log
    (
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
            "$out/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
            -dict="$dict" -print_final_stats=1 -artifact_prefix="$out/" \
            "$out/corpus/${target#fuzz_}" "$seed/${target#fuzz_}" >"$log" 2>&1
        echo $? >"$out/$target.rc"
    ) &
}

# report TARGET NAME: its PASS or FAIL line, once it has ended.
report() {
    local target=$1 name=$2 log=$out/$1.log rc
    rc=$(cat "$out/$target.rc" 2>/dev/null || echo "none")
    local runs corpus
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    corpus=$(ls "$out/corpus/${target#fuzz_}" | wc -l)
    if [ "$rc" = 0 ]; then
        pass "$name (${runs:-?} inputs in ${secs} s, corpus $corpus)"
    else
        grep -E -m 3 'ERROR: |SUMMARY: |runtime error|internal error|Test unit written to' "$log"
        fail "$name" "exit status $rc after ${runs:-?} inputs; input and log: $(grep -o 'Test unit written to [^ ]*' "$log" | tail -1 | sed 's/Test unit written to //'), $log"
    fi
}

rm -f "$out"/fuzz_*.rc
start fuzz_schedule tests/fuzz/schedule.dict
start fuzz_descriptor tests/fuzz/descriptor.dict
wait
report fuzz_schedule schedule_pipeline
report fuzz_descriptor descriptor_validation
[ "$failed" -eq 0 ]
