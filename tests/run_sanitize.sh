#!/usr/bin/env bash
# tests/run_sanitize.sh [--fast] - the sanitizer flavour: everything built
# with AddressSanitizer and UndefinedBehaviorSanitizer (gcc
# -fsanitize=address,undefined, every UB report fatal), then the generator's
# tests and the runtime's tests run on that build.
#
# The flavour is a copy of this tree in build/asan/tree/ (sources only; its
# own build/ is kept, so a second run rebuilds what changed) whose
# build.ninja gets the sanitizer flags on every compile and link line; its
# `ninja` already runs the sanitized generator over all of schedules/
# (`collgen emit`: verify every schedule, write emitted/).
#
#   --fast   what CI runs (tests/run_all.sh): the generator, its unit tests
#            and the runtime tests built, the unit tests, the goldens of
#            tests/gen/bad and tests/gen/ok, mutation testing (every
#            mutant loaded, resolved and freed under LeakSanitizer), and the runtime tests at
#            p = 1..4 under both libraries
#   (none)   all of tests/run_gen.sh (the library verified, emitted/ up to
#            date), tests/run_mutation.sh, the tags tests and
#            tests/run_emitted.sh (every generated collective against the
#            native one): about half an hour here
#
# Lines are those of the parts, "PASS asan ..." / "FAIL asan ...". Leak
# checking is on for the generator (tests/lsan.supp lists the known leaks
# not fixed yet) and off for MPI programs (the MPI libraries' own
# allocations at exit are not this project's).
set -u
cd "$(dirname "$0")/.."

fast=0
[ "${1:-}" = "--fast" ] && fast=1
tree=build/asan/tree
failed=0

mkdir -p "$tree"
# Sources only, with their times (so that ninja in the copy rebuilds what
# changed); the copy's build/ stays.
tar -c --exclude=./build --exclude=./results --exclude=./.git --exclude=./.device . |
    tar -x -C "$tree" || { echo "FAIL asan copy_tree"; exit 1; }
san='-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer'
# Why -Wno-alloc-size-larger-than: with the instrumentation gcc 12 proves
# nothing about an int count passed to calloc and warns (gen/main.c).
sed -i -e "1i san = $san" -e "1i san_warn = -Wno-alloc-size-larger-than" \
    -e 's/^cflags = \(.*\)$/cflags = \1 $san $san_warn/' \
    -e 's/command = gcc -o \$out/command = gcc $san -o $out/' \
    -e 's/command = \$mpicc -o \$out/command = $mpicc $san -o $out/' \
    "$tree/build.ninja"
if ! grep -q '^cflags = .*\$san' "$tree/build.ninja"; then
    echo "FAIL asan flags_applied (build.ninja's cflags line changed; update tests/run_sanitize.sh)"
    exit 1
fi

cd "$tree"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1
export CG_TIMEOUT_SCALE=5 # tests/run_gen.sh: the sanitizers slow the generator down
t0=$SECONDS
# --fast builds what its parts run; the full flavour everything, which runs
# the sanitized generator over the library (`collgen emit`).
targets=()
[ "$fast" = 1 ] && targets=(build/collgen build/tests/test_expr build/tests/test_verify \
    build/openmpi/test_runtime build/mpich/test_runtime)
if nice -n 10 ninja "${targets[@]}" >build.log 2>&1; then
    if [ "$fast" = 1 ]; then
        echo "PASS asan build ($((SECONDS - t0)) s)"
    else
        echo "PASS asan build_and_emit_the_library ($((SECONDS - t0)) s: every schedule verified by the sanitized collgen)"
    fi
else
    grep -E -m 5 'error|ERROR|runtime error' build.log
    echo "FAIL asan build_and_emit_the_library (see $tree/build.log)"
    exit 1
fi

# part NAME COMMAND...: runs a part, its PASS/FAIL lines prefixed with asan.
part() {
    local name=$1 rc
    shift
    "$@" >part.log 2>&1
    rc=$?
    sed -n -e 's/^PASS /PASS asan /p' -e 's/^FAIL /FAIL asan /p' -e '/runtime error\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer/p' part.log
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' part.log; then
        tail -5 part.log
        echo "FAIL asan $name (exit status $rc)"
    fi
    grep -q '^FAIL \|runtime error\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer' part.log && failed=$((failed + 1))
    return 0
}

part test_expr build/tests/test_expr
part test_verify build/tests/test_verify
if [ "$fast" = 1 ]; then
    # The goldens alone: tests/run_gen.sh's first two loops.
    sed -n '1,/^# ---- emitted\/ is a golden too/p' tests/run_gen.sh >tests/.gen_goldens.sh
    echo '[ "$failed" -eq 0 ]' >>tests/.gen_goldens.sh
    part goldens bash tests/.gen_goldens.sh
    # Every mutant of every schedule loaded, resolved and freed: the
    # generator's leaks show here (the loader owns callees, gen/load.c).
    part mutation tests/run_mutation.sh
else
    part gen tests/run_gen.sh
    part mutation tests/run_mutation.sh
fi
for f in openmpi mpich; do
    for np in 1 2 3 4; do
        ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 part "runtime $f p=$np" \
            tests/mpirun.sh $f $np build/$f/test_runtime
    done
    if [ "$fast" = 0 ]; then
        for np in 1 3 4; do
            ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 part "tags $f p=$np" \
                tests/mpirun.sh $f $np build/$f/test_tags build/collgen
        done
    fi
done
if [ "$fast" = 0 ]; then
    ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 part emitted tests/run_emitted.sh
fi
[ "$failed" -eq 0 ]
