#!/usr/bin/env bash
# tests/run_tag.sh - `collgen tag` and the baselines it tags (after `ninja`).
#
#   1. the fixtures (tests/tag/fixtures.c, ten styles and a function without
#      communication): the tagged copy, tags.h, tags.c and the notes equal
#      tests/tag/expected/*; the copy differs from the original only by
#      inserted tag lines (removing them gives the original back, byte for
#      byte); a second run writes the same bytes and leaves the files alone;
#   2. what cannot be tagged (tests/tag/bad/<case>.err.expected, with
#      <case>.c or <case>.args, the arguments): exit status 1, exactly
#      <case>.err.expected on stderr (clang's diagnostics, or why), nothing
#      written;
#   3. the baselines: emitted/baselines/ is what `collgen tag` makes of
#      harness/baselines/ now, and differs from it only by tag lines;
#   4. tags compiled out: the tags-off objects (fixtures, baselines) name no
#      tag symbol, the tags-on ones use the accumulators; the tagged copies
#      compile at -O0 too, tags on and off, warnings as errors;
#   5. build/<mpi>/test_ctag at p = 1..5 under both MPIs (the fixtures as
#      written, tagged with tags off and on: same results, native results,
#      the tags entered; tests/tag/test_ctag.c);
#   6. build/<mpi>/baseline_check (tests/emitted_check.c over the baselines)
#      at p = 1..5, 7, 8 under both MPIs (the largest count 2^15 + 3 from
#      p = 5, as in tests/run_emitted.sh), and the segmented ones with small
#      segments (BASELINE_SEGSIZE) so that they cut blocks;
#   7. the harness: tests/descriptors/baselines.json (baseline:* beside
#      native and generated code) runs, every record ok, the baselines'
#      records of kind "baseline" with their tags named from the tag table
#      and their phases, and the report's "Baselines, phase by phase".
#
# UPDATE=1 rewrites the goldens of 1 and 2 (review the diff). Environment:
# FLAVOURS (default "openmpi mpich"), CG_MPIRUN_TIMEOUT (tests/mpirun.sh).
set -u
cd "$(dirname "$0")/.." || exit 2

collgen=build/collgen
flavours=${FLAVOURS:-openmpi mpich}
update=${UPDATE:-0}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

npass=0
pass() {
    echo "PASS tag $1"
    npass=$((npass + 1))
}
fail() {
    echo "FAIL tag $1${2:+ ($2)}"
    failed=$((failed + 1))
}

golden() {
    local expected=$1 actual=$2
    if [ "$update" = 1 ]; then
        if ! cmp -s "$expected" "$actual"; then
            mkdir -p "$(dirname "$expected")"
            cp "$actual" "$expected"
            echo "# updated $expected"
        fi
        return 0
    fi
    [ -f "$expected" ] || return 2
    diff -u --label "$expected" --label "actual" "$expected" "$actual" | head -40
    cmp -s "$expected" "$actual"
}

# The lines collgen tag inserts: the macros of tags.h, alone or with an
# inserted brace, and the #include.
tag_line='^[[:space:]]*(\{ )?CG_CTAG_(FUNCTION|BEGIN|END|NEXT|UNWIND)\(CG_CTAG_[A-Z0-9_]+\);( \})?$|^[[:space:]]*[{}]$|^#include "tags\.h" /\* collgen tag: timing tags \(CG_TAGS\) \*/$'

# only_inserted ORIGINAL TAGGED: TAGGED is ORIGINAL with tag lines added,
# and nothing else changed (diff compares whole lines, line ends and the
# missing newline at the end of a file included).
only_inserted() {
    local orig=$1 tagged=$2 changes
    changes=$(diff --unchanged-line-format= --old-line-format='-%L' --new-line-format='+%L' \
        "$orig" "$tagged")
    if printf '%s\n' "$changes" | grep -q '^-'; then
        echo "lines of $orig changed or removed"
        return 1
    fi
    if printf '%s\n' "$changes" | sed -n 's/^+//p' | grep -Evq "$tag_line"; then
        echo "an inserted line is not a tag line: $(printf '%s\n' "$changes" | sed -n 's/^+//p' |
            grep -Ev "$tag_line" | head -1)"
        return 1
    fi
    if [ "$(printf '%s\n' "$changes" | grep -c '^+')" -lt 10 ]; then
        echo "fewer than 10 tag lines inserted"
        return 1
    fi
    return 0
}

if [ ! -x "$collgen" ]; then
    fail build "$collgen is not built: run ninja"
    echo "# run_tag.sh: 0 passed, 1 failed"
    exit 1
fi

# ---- 1. the fixtures -----------------------------------------------------------

out=$tmp/fixtures
"$collgen" tag tests/tag/fixtures.c --out "$out" 2>"$tmp/notes.txt"
rc=$?
[ "$rc" -eq 0 ] && pass fixtures_tag_exit_0 || fail fixtures_tag_exit_0 "exit status $rc"
for f in fixtures.c tags.h tags.c; do
    if golden "tests/tag/expected/$f" "$out/$f" >"$tmp/diff" 2>&1; then
        pass "fixtures_golden_$f"
    else
        fail "fixtures_golden_$f" "differs from tests/tag/expected/$f: $(head -c 300 "$tmp/diff")"
    fi
done
if golden tests/tag/expected/notes.txt "$tmp/notes.txt" >"$tmp/diff" 2>&1; then
    pass fixtures_golden_notes
else
    fail fixtures_golden_notes "$(head -c 300 "$tmp/diff")"
fi
why=$(only_inserted tests/tag/fixtures.c "$out/fixtures.c") &&
    pass fixtures_only_tag_lines_inserted || fail fixtures_only_tag_lines_inserted "$why"
touch -d '2000-01-01' "$out"/*
"$collgen" tag -q tests/tag/fixtures.c --out "$out" 2>/dev/null
if [ -z "$(find "$out" -newermt '2000-01-02' -type f)" ]; then
    pass fixtures_second_run_rewrites_nothing
else
    fail fixtures_second_run_rewrites_nothing "$(find "$out" -newermt '2000-01-02' -type f)"
fi
"$collgen" tag -q --function fix_helpers tests/tag/fixtures.c --out "$tmp/one" 2>/dev/null
if grep -q 'CG_CTAG_FIX_HELPERS ' "$tmp/one/tags.h" && grep -q 'CG_CTAG_EXCHANGE ' "$tmp/one/tags.h" &&
    grep -q 'CG_CTAG_SENDRECV_INTS ' "$tmp/one/tags.h" && ! grep -q 'FIX_FOR_RING' "$tmp/one/tags.h"; then
    pass function_option_tags_it_and_its_helpers_only
else
    fail function_option_tags_it_and_its_helpers_only "$(grep -c CG_CTAG_ "$tmp/one/tags.h") ids"
fi

# ---- 2. what cannot be tagged -------------------------------------------------

nbad=0
for expected in tests/tag/bad/*.err.expected; do
    name=$(basename "$expected" .err.expected)
    base=tests/tag/bad/$name
    nbad=$((nbad + 1))
    if [ -f "$base.args" ]; then
        read -r -a args <"$base.args"
    else
        args=("$base.c")
    fi
    "$collgen" tag "${args[@]}" --out "$tmp/bad_$name" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    why=
    golden "$base.err.expected" "$tmp/$name.err" >"$tmp/diff" 2>&1 ||
        why="stderr differs from $base.err.expected: $(head -c 300 "$tmp/diff")"
    [ "$rc" -eq 1 ] || why="exit status $rc, expected 1"
    [ -e "$tmp/bad_$name" ] && why="wrote $(ls "$tmp/bad_$name" | head -3 | tr '\n' ' ')"
    [ -z "$why" ] && pass "bad_$name" || fail "bad_$name" "$why"
done
[ "$nbad" -ge 6 ] && pass "bad_cases_at_least_6 ($nbad)" || fail bad_cases_at_least_6 "$nbad"
cp tests/tag/fixtures.c "$tmp/tags.c"
"$collgen" tag "$tmp/tags.c" --out "$tmp/bad_named" 2>"$tmp/named.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "a file may not be called tags.c" "$tmp/named.err" &&
    [ ! -e "$tmp/bad_named" ]; then
    pass bad_input_named_tags_c
else
    fail bad_input_named_tags_c "exit status $rc: $(head -c 200 "$tmp/named.err")"
fi
"$collgen" tag tests/tag/no_such_file.c --out "$tmp/bad_missing" 2>"$tmp/missing.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "cannot read tests/tag/no_such_file.c" "$tmp/missing.err"; then
    pass bad_missing_file
else
    fail bad_missing_file "exit status $rc: $(head -c 200 "$tmp/missing.err")"
fi

# ---- 3. the baselines ------------------------------------------------------------

bl="harness/baselines/allreduce.c harness/baselines/bcast.c harness/baselines/allgather.c"
# shellcheck disable=SC2086 # the same command as build.ninja's ctag rule
"$collgen" tag -q --out "$tmp/baselines" $bl -- -std=c11
if diff -r "$tmp/baselines" emitted/baselines >"$tmp/diff" 2>&1; then
    pass baselines_emitted_up_to_date
else
    fail baselines_emitted_up_to_date "emitted/baselines/ is stale (run ninja): $(head -c 300 "$tmp/diff")"
fi
for f in $bl; do
    why=$(only_inserted "$f" "emitted/baselines/$(basename "$f")") &&
        pass "baselines_only_tag_lines_inserted $(basename "$f")" ||
        fail "baselines_only_tag_lines_inserted $(basename "$f")" "$why"
done

# ---- 4. tags compiled out ----------------------------------------------------------

for f in $flavours; do
    objs="build/$f/tests/tag/off.o build/$f/baselines_off/allreduce.o build/$f/baselines_off/bcast.o build/$f/baselines_off/allgather.o"
    # shellcheck disable=SC2086
    if nm $objs 2>/dev/null | grep -q 'cg_tag\|cg_ctag'; then
        fail "tags_off_objects_name_no_tag_symbol $f" "$(nm $objs | grep 'cg_tag\|cg_ctag' | head -2 | tr '\n' ' ')"
    elif ! nm $objs >/dev/null 2>&1; then
        fail "tags_off_objects_name_no_tag_symbol $f" "not built: $objs"
    else
        pass "tags_off_objects_name_no_tag_symbol $f"
    fi
    if nm "build/$f/tests/tag/on.o" "build/$f/baselines/allreduce.o" 2>/dev/null |
        grep -q ' U cg_tag_accs'; then
        pass "tags_on_objects_use_the_accumulators $f"
    else
        fail "tags_on_objects_use_the_accumulators $f"
    fi
done

# The build compiles at -O2; at -O0 GCC's flow analysis differs (a tag line
# after a final return would read as falling off the end of the function).
for f in $flavours; do
    why=
    for defs in "" "-DCG_TAGS"; do
        for src in "$out/fixtures.c" emitted/baselines/allreduce.c emitted/baselines/bcast.c \
            emitted/baselines/allgather.c; do
            # shellcheck disable=SC2086
            "mpicc.$f" -std=c11 -Wall -Wextra -Werror -O0 -Iruntime -Itests/tag \
                -Iharness/baselines $defs -c "$src" -o "$tmp/o0.o" >"$tmp/o0.err" 2>&1 ||
                why="$src ${defs:-(tags off)}: $(head -3 "$tmp/o0.err" | tr '\n' ' ')"
        done
    done
    [ -z "$why" ] && pass "tagged_copies_compile_at_O0 $f" || fail "tagged_copies_compile_at_O0 $f" "$why"
done

# ---- 5, 6. runs under both MPIs -------------------------------------------------------

# run_prog LABEL COMMAND...: passes the program's PASS/FAIL lines on; a run
# that fails without a FAIL line is one.
run_prog() {
    local label=$1 log=$tmp/run.log rc n
    shift
    "$@" >"$log" 2>&1
    rc=$?
    grep -E '^(PASS|FAIL) |^  mismatch ' "$log"
    n=$(grep -c '^FAIL ' "$log")
    failed=$((failed + n))
    if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
        fail "$label" "exit status $rc, no FAIL line: $(tail -3 "$log" | tr '\n' ' ')"
    fi
}
for f in $flavours; do
    for np in 1 2 3 4 5; do
        run_prog "test_ctag $f p=$np" tests/mpirun.sh "$f" "$np" "build/$f/test_ctag"
    done
    # From p = 5 the largest count is 2^15 + 3, as in tests/run_emitted.sh
    # (tests/emitted_check.c says why).
    for np in 1 2 3 4 5 7 8; do
        large=
        [ "$np" -ge 5 ] && large=32771
        CG_CHECK_LARGE_COUNT=$large run_prog "baseline_check $f p=$np" \
            tests/mpirun.sh "$f" "$np" "build/$f/baseline_check"
    done
    for np in 3 8; do
        large=
        [ "$np" -ge 5 ] && large=32771
        for name in allreduce_segmented_ring bcast_pipeline; do
            CG_CHECK_LARGE_COUNT=$large BASELINE_SEGSIZE=1000 \
                run_prog "baseline_check $name $f p=$np segsize=1000" \
                tests/mpirun.sh "$f" "$np" "build/$f/baseline_check" "$name"
        done
    done
done

# ---- 7. the harness --------------------------------------------------------------------

camp=$tmp/campaign
if "$collgen" run tests/descriptors/baselines.json --out "$camp" --quiet --no-report \
    >"$tmp/run.out" 2>&1; then
    pass harness_campaign_with_baselines_runs
else
    fail harness_campaign_with_baselines_runs "$(tail -3 "$tmp/run.out" | tr '\n' ' ')"
fi
if "$py" - "$camp/points.jsonl" emitted/baselines/tags.c >"$tmp/check.out" 2>&1 <<'EOF'; then
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
table = re.findall(r'\{ "([^"]+)", CG_TAG_KIND_([A-Z]+),', open(sys.argv[2]).read())
kinds = {name: kind.lower() for name, kind in table}
bad = [r["point_id"] for r in recs if r["status"] != "ok"]
assert not bad, "not ok: %s" % bad[:3]
base = [r for r in recs if r["kind"] == "baseline"]
assert len(base) == 88, "%d baseline records, expected 88" % len(base)
for r in base:
    assert r["check"]["reference"] == "native" and r["check"]["verdict"] == "ok", r["point_id"]
    assert r["effective"]["algorithm_source"] == "baseline", r["point_id"]
    names = [t["name"] for t in r["tags"]]
    want = [n for n in kinds if n == r["name"] or n.startswith(r["name"] + "/")]
    assert names == want, "%s: tags %s, table %s" % (r["point_id"], names, want)
    for t in r["tags"]:
        assert kinds[t["name"]] == t["kind"], (r["point_id"], t)
    assert any(t["kind"] == "phase" for t in r["tags"]), r["point_id"]
    assert r["tags"][0]["kind"] == "call" and r["tags"][0]["median_ns"] > 0, r["point_id"]
print("ok")
EOF
    pass harness_baseline_records_carry_their_tags
else
    fail harness_baseline_records_carry_their_tags "$(tail -3 "$tmp/check.out" | tr '\n' ' ')"
fi
if "$collgen" report "$camp" --no-plots >"$tmp/report.txt" 2>&1 &&
    grep -q '^Baselines, phase by phase' "$tmp/report.txt" &&
    grep -Eq '^ +[0-9]+ B +b:ring +[0-9.]+ +[0-9.-]+ +start ' "$tmp/report.txt" &&
    grep -Eq '^ {20,}rs_step +[0-9.]+ +[0-9.]+$' "$tmp/report.txt" &&
    grep -Eq '^ +g:ring +[0-9.]+ +[0-9.-]+ +reduce_scatter +[0-9.]+ +[0-9.]+$' "$tmp/report.txt" &&
    grep -Eq 'baseline:allreduce_ring +ring ' "$tmp/report.txt"; then
    pass report_shows_baselines_phase_by_phase
else
    fail report_shows_baselines_phase_by_phase "$(grep -A6 'phase by phase' "$tmp/report.txt" | head -8 | tr '\n' '|')"
fi

echo "# run_tag.sh: $npass passed here (and the programs' PASS lines above), $failed failed"
[ "$failed" -eq 0 ]
