#!/usr/bin/env bash
# tests/run_asan.sh - the generator's test runs under AddressSanitizer and
# LeakSanitizer: builds build/asan/collgen (the sources of build/collgen,
# compiled with -fsanitize=address) and runs tests/run_gen.sh and
# tests/run_mutation.sh with it (CG_COLLGEN). A memory error or a leak makes
# collgen exit with a status of its own and write a report on stderr, which
# fails the case that ran it (its exit status or its diagnostics differ).
# Prints their PASS/FAIL lines and "PASS asan_build" or "FAIL asan_build".
set -u
cd "$(dirname "$0")/.." || exit 2

out=build/asan
mkdir -p "$out"
# The program's sources, as build.ninja links them: gen/, the table of
# collectives, the harness's commands.
srcs=(gen/*.c runtime/colls.c harness/collgen.c harness/run.c harness/run_*.c
    harness/descriptor.c harness/report.c harness/report_*.c)
if ! gcc -std=c11 -Wall -Wextra -Werror -O2 -g -fsanitize=address -fno-omit-frame-pointer \
    -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Igen -o "$out/collgen" "${srcs[@]}" \
    -lcjson -lm >"$out/build.log" 2>&1; then
    cat "$out/build.log"
    echo "FAIL asan_build"
    exit 1
fi
echo "PASS asan_build"
export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export LSAN_OPTIONS=exitcode=98
rc=0
CG_COLLGEN=$out/collgen tests/run_gen.sh || rc=1
CG_COLLGEN=$out/collgen tests/run_mutation.sh || rc=1
exit $rc
