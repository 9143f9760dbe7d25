#!/usr/bin/env bash
# tests/run_gen.sh - golden tests of the generator (STYLE.md items 16 and 17).
#
#   tests/gen/bad/<check>.json   one broken schedule per check, named after it;
#   tests/gen/bad/<check>.err.expected
#                                the exact stderr of
#                                `build/collgen verify --p 1..8 tests/gen/bad/<check>.json`,
#                                which must exit 1
#   tests/gen/ok/<name>.json     a small good schedule;
#   tests/gen/ok/<name>.c.expected       the C file `collgen emit` writes for it
#                                        (which must compile, mpicc -Werror)
#   tests/gen/ok/<name>.cu.expected      the CUDA file it writes, where the GPU
#                                        backend has the collective
#   tests/gen/ok/<name>.explain.expected `collgen explain <name>.json --p 4`
#
# Then: emitted/ is what `collgen emit` writes today (emitted_up_to_date), two
# emits into empty directories are byte-identical (emit_deterministic),
# adding schedules in a scratch copy only adds lines to emitted/
# (adding_a_schedule_only_adds_lines), and every schedule under schedules/
# verifies over the default range (verify_library, timed).
#
# One line per case, "PASS gen <name>" or "FAIL gen <name>", which
# tests/run_all.sh counts; a missing .expected file prints "MISSING <file>"
# and fails its case. `UPDATE=1 tests/run_gen.sh` rewrites the .expected
# files instead of comparing them; it is the only way to rewrite goldens, and
# the rewritten files are reviewed like code (and committed on their own).
#
# Paths appear in diagnostics, so everything runs from the repository root
# with relative paths. Exit status: 0 when every case passed.
set -u
cd "$(dirname "$0")/.."

collgen=${CG_COLLGEN:-build/collgen} # CG_COLLGEN: another build to test (tests/run_sanitize.sh runs it on the sanitized tree)
update=${UPDATE:-0}
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() {
    echo "PASS gen $1"
}

fail() {
    echo "FAIL gen $1${2:+ ($2)}"
    failed=$((failed + 1))
}

now() {
    date +%s.%N
}

# golden EXPECTED ACTUAL: compares (or, with UPDATE=1, rewrites) one golden.
# Returns 0 when they match or the golden was rewritten.
golden() {
    local expected=$1 actual=$2
    if [ "$update" = 1 ]; then
        if ! cmp -s "$expected" "$actual"; then
            cp "$actual" "$expected"
            echo "# updated $expected"
        fi
        return 0
    fi
    if [ ! -f "$expected" ]; then
        echo "MISSING $expected"
        return 2
    fi
    diff -u --label "$expected" --label "actual" "$expected" "$actual"
}

# Time limits are for a quiet machine; CG_TIMEOUT_SCALE=k multiplies them
# (tests/run_sanitize.sh sets 5: ASan and UBSan slow the generator down).
scale=${CG_TIMEOUT_SCALE:-1}

if [ ! -x "$collgen" ]; then
    fail collgen_is_built "$collgen is missing: run ninja build/collgen"
    exit 1
fi

# ---- bad schedules: exit status 1 and the exact diagnostics ----------------

for json in tests/gen/bad/*.json; do
    [ -e "$json" ] || continue
    name=$(basename "$json" .json)
    err=$tmp/$name.err
    timeout $((60 * scale)) "$collgen" verify --p 1..8 "$json" >/dev/null 2>"$err"
    rc=$?
    ok=1
    why=
    golden "tests/gen/bad/$name.err.expected" "$err"
    case $? in
    0) ;;
    2) ok=0; why="no .err.expected" ;;
    *) ok=0; why="diagnostics differ" ;;
    esac
    if [ "$rc" -ne 1 ]; then
        ok=0
        why="exit status $rc, expected 1"
    fi
    if [ "$ok" = 1 ]; then
        pass "$name"
    else
        fail "$name" "$why"
    fi
done

# ---- good schedules: the emitted C file and the explain output -------------

for json in tests/gen/ok/*.json; do
    [ -e "$json" ] || continue
    name=$(basename "$json" .json)
    out=$tmp/ok_$name
    ok=1
    why=
    schedule=$(timeout $((60 * scale)) "$collgen" list "$json" 2>/dev/null | awk 'NR == 1 { print $1 }')
    if [ -z "$schedule" ]; then
        ok=0
        why="collgen list names no schedule"
    fi
    # p = 1..16: the emitted text does not depend on the range (see
    # emit_deterministic); the default range took 13 s over these files, 60
    # under the sanitizers.
    timeout $((120 * scale)) "$collgen" emit -q --p 1..16 --out "$out" "$json" >"$tmp/$name.stdout" 2>"$tmp/$name.stderr"
    rc=$?
    if [ "$rc" -ne 0 ] || [ -s "$tmp/$name.stderr" ]; then
        ok=0
        why="emit exit status $rc"
        cat "$tmp/$name.stderr"
    fi
    if [ -n "$schedule" ] && [ -f "$out/mpi/$schedule.c" ]; then
        golden "tests/gen/ok/$name.c.expected" "$out/mpi/$schedule.c"
        case $? in
        0) ;;
        2) ok=0; why=${why:-"no .c.expected"} ;;
        *) ok=0; why=${why:-"emitted C differs"} ;;
        esac
    else
        ok=0
        why=${why:-"emit wrote no $out/mpi/$schedule.c"}
    fi
    # It compiles as the build compiles emitted/ (-Wcomment too: schedule
    # comments reach it, sanitised).
    if [ -f "$out/mpi/$schedule.c" ] && command -v mpicc.openmpi >/dev/null 2>&1 &&
        ! mpicc.openmpi -std=c11 -Wall -Wextra -Werror -Iruntime -I"$out/mpi" -fsyntax-only \
            "$out/mpi/$schedule.c" >"$tmp/$name.cc" 2>&1; then
        head -20 "$tmp/$name.cc"
        ok=0
        why=${why:-"emitted C does not compile"}
    fi
    # The GPU backend's file, for the collectives it has; a golden without it
    # would never be checked.
    if [ -n "$schedule" ] && [ -f "$out/cuda/$schedule.cu" ]; then
        golden "tests/gen/ok/$name.cu.expected" "$out/cuda/$schedule.cu"
        case $? in
        0) ;;
        2) ok=0; why=${why:-"no .cu.expected"} ;;
        *) ok=0; why=${why:-"emitted CUDA differs"} ;;
        esac
    elif [ -f "tests/gen/ok/$name.cu.expected" ]; then
        ok=0
        why=${why:-"emit wrote no $out/cuda/$schedule.cu for $name.cu.expected"}
    fi
    timeout $((60 * scale)) "$collgen" explain "$json" --p 4 >"$tmp/$name.explain" 2>"$tmp/$name.explain.err"
    rc=$?
    if [ "$rc" -ne 0 ] || [ -s "$tmp/$name.explain.err" ]; then
        ok=0
        why=${why:-"explain exit status $rc"}
        cat "$tmp/$name.explain.err"
    fi
    golden "tests/gen/ok/$name.explain.expected" "$tmp/$name.explain"
    case $? in
    0) ;;
    2) ok=0; why=${why:-"no .explain.expected"} ;;
    *) ok=0; why=${why:-"explain output differs"} ;;
    esac
    if [ "$ok" = 1 ]; then
        pass "$name"
    else
        fail "$name" "$why"
    fi
done

# A golden whose schedule is gone would never be checked again.
for expected in tests/gen/bad/*.err.expected tests/gen/ok/*.c.expected tests/gen/ok/*.cu.expected \
    tests/gen/ok/*.explain.expected; do
    [ -e "$expected" ] || continue
    base=${expected%.expected}
    base=${base%.err}
    base=${base%.c}
    base=${base%.cu}
    base=${base%.explain}
    if [ ! -f "$base.json" ]; then
        fail "orphan_$(basename "$base")" "$expected has no $base.json"
    fi
done

# ---- emitted/ is a golden too ----------------------------------------------

# emitted/ must be what collgen writes today: emit into a copy of it (so that
# hand-written files such as emitted/README.md are there too) and compare.
# The emitted text does not depend on the verified p range (emit_deterministic
# below emits at two ranges), so a short one keeps this cheap: the default
# range, a minute of simulation, is verify_library's, at the end.
cp -r emitted "$tmp/emitted"
timeout $((600 * scale)) "$collgen" emit -q --p 1..16 --out "$tmp/emitted" >"$tmp/emitted.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$tmp/emitted.log"
    fail emitted_up_to_date "collgen emit exit status $rc"
elif diff -r emitted "$tmp/emitted" >"$tmp/emitted.diff"; then
    pass emitted_up_to_date
else
    head -n 60 "$tmp/emitted.diff"
    lines=$(wc -l <"$tmp/emitted.diff")
    [ "$lines" -gt 60 ] && echo "# ... $((lines - 60)) more lines of diff -r emitted/ <fresh emit>"
    fail emitted_up_to_date "emitted/ is stale: run ninja and commit emitted/ on its own"
fi

# Two emits into empty directories must agree byte for byte. (Into copies of
# emitted/ they could not disagree: collgen leaves a file alone when its text
# is unchanged.) They are made at two p ranges, which must not matter either:
# emitted_up_to_date relies on it.
rc=0
for k in 1 2; do
    range=1..16
    [ "$k" = 2 ] && range=1..9,12
    timeout $((600 * scale)) "$collgen" emit -q --p "$range" --out "$tmp/fresh$k" >"$tmp/fresh$k.log" 2>&1 || rc=$?
done
if [ "$rc" -ne 0 ]; then
    cat "$tmp/fresh1.log" "$tmp/fresh2.log"
    fail emit_deterministic "collgen emit exit status $rc"
elif diff -r "$tmp/fresh1" "$tmp/fresh2" >"$tmp/fresh.diff"; then
    pass emit_deterministic
else
    head -n 60 "$tmp/fresh.diff"
    fail emit_deterministic "two emits differ"
fi

# Adding a schedule changes no other schedule's emitted file, and only adds
# lines to the shared ones (collgen.h, registry.c, tags.c, all.c, all.cu,
# collgen_cuda.h, registry.json): in a scratch copy, three temporary
# schedules (copies of allgather/ring, allreduce/ring and scatter/linear,
# sorted first, among the others and last) are added and emitted/
# regenerated; `diff` must show no removed or changed line and no file gone,
# and the new files must be there.
scratch=$tmp/add_schedule
mkdir -p "$scratch"
cp -r schedules emitted "$scratch"/
cp -r emitted "$scratch/emitted.before"
for copy in allgather/ring:aaa allreduce/ring:mmm scatter/linear:zzz; do
    src=${copy%%:*}
    coll=${src%%/*}
    new=${copy#*:}
    sed "s/\"schedule\": \"[a-z_]*\"/\"schedule\": \"${coll}_$new\"/" "schedules/$src.json" \
        >"$scratch/schedules/$coll/$new.json"
done
collgen_abs=$(cd "$(dirname "$collgen")" && pwd)/$(basename "$collgen")
(cd "$scratch" && timeout $((600 * scale)) "$collgen_abs" emit -q --p 1..4 >emit.log 2>&1)
rc=$?
diff -r "$scratch/emitted.before" "$scratch/emitted" >"$tmp/add.diff"
removed=$(grep -c '^<' "$tmp/add.diff")
added=$(grep -c '^>' "$tmp/add.diff")
gone=$(grep -c '^Only in .*emitted.before' "$tmp/add.diff")
changed_files=$(grep '^diff ' "$tmp/add.diff" | awk '{ print $NF }' | sed "s|$scratch/emitted/||" | tr '\n' ' ')
new_files=$(grep -c '^Only in .*/emitted[/:]' "$tmp/add.diff")
if [ "$rc" -ne 0 ]; then
    cat "$scratch/emit.log"
    fail adding_a_schedule_only_adds_lines "collgen emit exit status $rc"
elif [ "$removed" -ne 0 ] || [ "$gone" -ne 0 ] || [ "$new_files" -lt 3 ]; then
    grep '^<' "$tmp/add.diff" | head -20
    fail adding_a_schedule_only_adds_lines "$removed lines removed or changed, $gone files gone, $new_files new"
else
    echo "# adding 3 schedules: $added lines added to $changed_files; $new_files new files; 0 lines changed"
    pass adding_a_schedule_only_adds_lines
fi

# ---- verification over workers (--jobs, gen/fanout.c) -----------------------

# The same files verified by 1 and by 3 workers print the same lines, in the
# same order on both streams together (timings aside), with the same exit
# status; and a worker killed mid-schedule fails that schedule by name, the
# others still verified.
jobs_files="tests/gen/ok/bits_allgather.json tests/gen/bad/block_out_of_range.json
    tests/gen/ok/call_allreduce.json tests/gen/bad/bit_reverse_domain.json
    tests/gen/ok/segments_ring.json tests/gen/bad/call_overlap.json"
for j in 1 3; do
    # shellcheck disable=SC2086 # the list is split on purpose
    timeout $((60 * scale)) "$collgen" verify --p 1..8 --jobs $j $jobs_files >"$tmp/jobs$j.log" 2>&1
    echo "exit $?" >>"$tmp/jobs$j.log"
    sed -i -E 's/\([0-9]+ runs, [0-9.]+ s\)/(runs)/; s/ in [0-9.]+ s$//' "$tmp/jobs$j.log"
done
if ! grep -q '^exit 1$' "$tmp/jobs1.log" || [ "$(grep -c 'FAILED verification' "$tmp/jobs1.log")" -ne 3 ]; then
    cat "$tmp/jobs1.log"
    fail verify_output_is_the_same_for_any_number_of_workers "--jobs 1 did not fail 3 schedules"
elif diff "$tmp/jobs1.log" "$tmp/jobs3.log" >"$tmp/jobs.diff"; then
    pass verify_output_is_the_same_for_any_number_of_workers
else
    cat "$tmp/jobs.diff"
    fail verify_output_is_the_same_for_any_number_of_workers "--jobs 3 printed otherwise"
fi
# shellcheck disable=SC2086
CG_FANOUT_KILL=2 timeout $((60 * scale)) "$collgen" verify --p 1..8 --jobs 2 $jobs_files \
    >"$tmp/kill.log" 2>&1
rc=$?
if [ "$rc" -eq 1 ] &&
    grep -q '^tests/gen/ok/call_allreduce.json: verification died (signal 9)$' "$tmp/kill.log" &&
    grep -q '^tests/gen/ok/call_allreduce.json: FAILED verification$' "$tmp/kill.log" &&
    grep -q '^tests/gen/ok/segments_ring.json: ok: ' "$tmp/kill.log" &&
    grep -q '^2 of 6 schedules verified' "$tmp/kill.log"; then
    pass verify_worker_killed_fails_its_schedule_by_name
else
    cat "$tmp/kill.log"
    fail verify_worker_killed_fails_its_schedule_by_name "exit $rc"
fi

# ---- the library verifies over the default range ---------------------------

t0=$(now)
timeout $((600 * scale)) "$collgen" verify -q
rc=$?
t1=$(now)
seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "# verify_library: collgen verify took $seconds s"
if [ "$rc" -eq 0 ]; then
    pass verify_library
else
    fail verify_library "collgen verify exit status $rc"
fi

[ "$failed" -eq 0 ]
