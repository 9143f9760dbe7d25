#!/usr/bin/env bash
# tests/run_report.sh - tests of `collgen report` on a hand-made campaign.
#
#   tests/report/campaign/      the fixture: points.jsonl (allreduce under Open
#                               MPI and MPICH at p = 2 and 4, allgather under
#                               Open MPI; native default, ring and
#                               recursive_doubling, generated schedules with
#                               phase tags; one failed_check, one error),
#                               raw/*.txt, campaign.json, run-<n>.json
#   tests/report/make_fixture.py  wrote it; its MEDIANS table holds the
#                               numbers the expected rows below come from
#   tests/report/guideline/     the guideline fixture: mock-ups against the
#                               native default (a violation, a slower one, one
#                               faster by < 10%, one with 3 noisy repetitions),
#                               schedule stubs with their summaries; written by
#                               tests/report/make_guideline_fixture.py, whose
#                               docstring has the expected violations and
#                               profile ranges
#   tests/report/micro/         node shapes and micro-benchmarks: allreduce at
#                               p = 4 under three node shapes (real, CG_PPN=2,
#                               the irregular CG_PPN=3), a parameter sweep,
#                               lane_pattern and multi_collective records;
#                               written by tests/report/make_micro_fixture.py,
#                               whose docstring has the expected findings
#
# Every case works on a copy of the fixture in a temporary directory, so the
# repository stays clean. One line per case, "PASS report <name>" or
# "FAIL report <name>", which tests/run_all.sh counts. Exit status: 0 when
# every case passed. About 10 s, most of it matplotlib.
set -u
cd "$(dirname "$0")/.."

collgen=build/collgen
fixture=tests/report/campaign
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() {
    echo "PASS report $1"
}

fail() {
    echo "FAIL report $1${2:+ ($2)}"
    failed=$((failed + 1))
}

check() { # check NAME CONDITION-COMMAND...: PASS when the command succeeds
    local name=$1
    shift
    if "$@"; then
        pass "$name"
    else
        fail "$name"
    fi
}

fresh() { # fresh NAME: a new copy of the fixture; prints its path
    rm -rf "${tmp:?}/$1"
    cp -r "$fixture" "$tmp/$1"
    echo "$tmp/$1"
}

# row FILE TITLE START: the rows under "== TITLE ==" that start with START
# (a size, or a size and a schedule for the pairs table), runs of spaces
# squeezed to one; the main table's row comes first.
row() {
    awk -v title="== $2 ==" -v size="$3" '
        $0 == title { on = 1; next }
        on && /^== / { exit }
        on && /^Records not measured/ { exit }
        on { line = $0; sub(/^ +/, "", line); gsub(/ +/, " ", line)
             if (index(line, size " ") == 1) print line }
    ' "$1"
}

is_png() { # is_png FILE: non-empty and starts with the PNG signature
    [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

if [ ! -x "$collgen" ]; then
    fail collgen_is_built "$collgen is missing: run ninja build/collgen"
    exit 1
fi

# ---- the full report on the fixture ------------------------------------------

d=$(fresh full)
"$collgen" report "$d" >"$tmp/full.out" 2>"$tmp/full.err"
rc=$?
check report_exits_0_on_the_fixture [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/full.err"
check report_writes_table_report_and_csv [ -s "$d/table.txt" -a -s "$d/report.md" -a -s "$d/points.csv" ]
check report_prints_the_table grep -q '^== allreduce / openmpi / p=4 / double sum ==$' "$tmp/full.out"
check report_leaves_no_temporary_files \
    test -z "$(find "$d" -maxdepth 1 \( -name '*.tmp' -o -name plots.tmp -o -name plots.old \))"

missing=
for stem in allgather_openmpi_p2 allgather_openmpi_p4 allreduce_mpich_p2 allreduce_mpich_p4 \
    allreduce_openmpi_p2 allreduce_openmpi_p4; do
    for kind in latency busbw box phases; do
        is_png "$d/plots/${kind}_$stem.png" || missing="$missing ${kind}_$stem"
    done
done
for stem in allgather_openmpi allreduce_mpich allreduce_openmpi; do
    for kind in heatmap scaling; do
        is_png "$d/plots/${kind}_$stem.png" || missing="$missing ${kind}_$stem"
    done
done
if [ -z "$missing" ]; then
    pass every_expected_plot_is_a_png
else
    fail every_expected_plot_is_a_png "missing or not PNG:$missing"
fi
check report_md_shows_every_plot \
    test "$(grep -c '^!\[.*\](plots/.*\.png)$' "$d/report.md")" = "$(ls "$d/plots" | wc -l)"

# Hand-checked cells (medians from make_fixture.py, in us):
# openmpi p=4 1 MiB: default 800, ring 520, g:ring 455: 520/800 = 0.650,
#   455/800 = 0.569, winner g:ring; algbw 1048576 B / 455000 ns = 2.305 GB/s,
#   busbw * 2(4-1)/4 = 3.457.
t=$d/table.txt
got=$(row "$t" "allreduce / openmpi / p=4 / double sum" "1 MiB" | head -1)
want="1 MiB 800.0 ring 520.0 0.650 ring 455.0 0.569 0.569 g:ring 2.305 3.457"
check table_openmpi_p4_1MiB_generated_ring_wins_at_0.569 [ "$got" = "$want" ]
[ "$got" = "$want" ] || echo "# got:  $got"$'\n'"# want: $want"
# mpich p=2 8 B: default 3.0, recursive_doubling 2.7 (0.900), generated
#   recursive_doubling 3.3 (1.100); winner the native recursive_doubling;
#   busbw factor 2(2-1)/2 = 1, so algbw = busbw = 8 / 2700 = 0.00296.
got=$(row "$t" "allreduce / mpich / p=2 / double sum" "8 B" | head -1)
want="8 B 3.000 recursive_doubling 2.700 0.900 recursive_doubling 3.300 1.100 0.900 recursive_doubling 0.00296 0.00296"
check table_mpich_p2_8B_native_recursive_doubling_wins_at_0.900 [ "$got" = "$want" ]
[ "$got" = "$want" ] || echo "# got:  $got"$'\n'"# want: $want"
# openmpi p=2 1 KiB: default 5.0 beats ring 6.0, recursive_doubling 5.6 and
#   the generated 7.0 and 5.5: PICO's ratio 5.5/5.0 = 1.100, winner default.
got=$(row "$t" "allreduce / openmpi / p=2 / double sum" "1 KiB" | head -1 | cut -d' ' -f10,11)
check table_openmpi_p2_1KiB_default_wins_with_ratio_1.100 [ "$got" = "1.100 default" ]
check table_marks_the_fallback_of_open_mpi_ring \
    grep -q 'allreduce / openmpi / p=4 / 8 B: native ring ran recursive_doubling (known_fallback)' "$t"

# Mann-Whitney: at openmpi p=4 1 MiB the generated ring (455 us) and the
# native ring (520 us) hardly overlap (U = 47 of 625; scipy: p = 2.72e-07):
# significant, unmarked. At mpich p=4 64 KiB the generated and native
# recursive_doubling have the same repetitions: p = 1, marked "~".
got=$(row "$t" "allreduce / openmpi / p=4 / double sum" "1 MiB allreduce_ring")
check mann_whitney_marks_different_distributions_significant \
    [ "$got" = "1 MiB allreduce_ring ring 455.0 520.0 0.875 2.7e-07" ]
[ "$got" = "1 MiB allreduce_ring ring 455.0 520.0 0.875 2.7e-07" ] || echo "# got: $got"
got=$(row "$t" "allreduce / mpich / p=4 / double sum" "64 KiB allreduce_recursive_doubling")
check mann_whitney_leaves_identical_distributions_not_significant \
    [ "$got" = "64 KiB allreduce_recursive_doubling recursive_doubling 70.00 70.00 1.000~ 1.000" ]
[ "$got" = "64 KiB allreduce_recursive_doubling recursive_doubling 70.00 70.00 1.000~ 1.000" ] ||
    echo "# got: $got"
check footer_and_report_name_the_test \
    grep -q 'two-sided Mann-Whitney U test on the raw repetitions' "$t" "$d/report.md"

check failed_check_record_is_listed_with_its_reason \
    grep -Eq '^ +97 +failed_check +allreduce +mpich +4 +64 KiB +generated:allreduce_rabenseifner +12 of 8192 elements differ' "$t"
check error_record_is_listed_with_its_reason \
    grep -Eq '^ +98 +error +allreduce +openmpi +2 +1 KiB +native:rabenseifner +MPI_Allreduce returned MPI_ERR_ARG' "$t"
check report_md_lists_the_records_not_measured \
    grep -q '| 97 | failed_check | allreduce | mpich | 4 | 64 KiB | generated:allreduce_rabenseifner |' "$d/report.md"
check report_md_has_context_and_command_line \
    grep -q 'build/collgen run descriptors/tests/fixture.json --platform local' "$d/report.md"
check report_md_shows_library_versions grep -q '| library_version | MPICH Version: 4.0.2' "$d/report.md"

# ---- the CSV ---------------------------------------------------------------

csv=$d/points.csv
check csv_has_a_header_and_one_row_per_record \
    [ "$(wc -l <"$csv")" = "$(($(grep -c . "$fixture/points.jsonl") + 1))" ]
check csv_flattens_with_dots \
    grep -q '^schema_version,.*,requested.count,.*,timing.median_ns,.*,tags,' "$csv"
check csv_lines_end_in_crlf [ "$(grep -c $'\r$' "$csv")" = "$(wc -l <"$csv")" ]
if [ -x /usr/bin/python3 ]; then
    check csv_parses_as_rfc4180_with_every_field /usr/bin/python3 - "$csv" <<'EOF'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
head = rows[0]
assert all(len(r) == len(head) for r in rows), "ragged rows"
rec = dict(zip(head, next(r for r in rows if r[head.index("point_id")] ==
    "allreduce-openmpi-p4-generated_allreduce_ring-double-sum-r0-ip0-1048576B")))
assert rec["timing.median_ns"] == "455000", rec["timing.median_ns"]
assert rec["requested.count"] == "131072"
assert [t["name"] for t in json.loads(rec["tags"])][1] == "allreduce_ring/reduce_scatter"
bad = next(r for r in rows if r[head.index("status")] == "error")
assert bad[head.index("timing.median_ns")] == ""
EOF
fi

# ---- determinism -------------------------------------------------------------

cp "$d/table.txt" "$tmp/table.1"
cp "$d/points.csv" "$tmp/csv.1"
"$collgen" report "$d" --quiet --no-plots >/dev/null 2>&1
check report_is_deterministic cmp -s "$tmp/table.1" "$d/table.txt"
check csv_is_deterministic cmp -s "$tmp/csv.1" "$d/points.csv"
check quiet_prints_nothing test -z "$("$collgen" report "$d" --quiet --no-plots 2>&1)"

# ---- malformed and missing input ---------------------------------------------

d=$(fresh malformed)
sed -i '5s/.*/{"schema_version": 1, "status": "ok", oops}/' "$d/points.jsonl"
"$collgen" report "$d" --no-plots >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
check malformed_line_exits_2 [ "$rc" = 2 ]
check malformed_line_is_named_with_its_line grep -q "^$d/points.jsonl:5:[0-9]*: error: not valid JSON" "$tmp/bad.err"
check malformed_line_writes_nothing \
    test -z "$(find "$d" -maxdepth 1 \( -name 'table.txt*' -o -name 'report.md*' -o -name 'points.csv*' -o -name 'plots*' -o -name 'guidelines.txt*' -o -name 'profile.json*' \))"

d=$(fresh field)
"$collgen" report "$d" --no-plots --quiet
cp "$d/table.txt" "$tmp/table.before"
sed -i '7s/"median_ns": [0-9.]*, //' "$d/points.jsonl"
"$collgen" report "$d" --no-plots 2>"$tmp/field.err" >/dev/null
rc=$?
check missing_field_exits_2_with_line_and_field \
    [ "$rc" = 2 -a "$(cat "$tmp/field.err")" = "$d/points.jsonl:7: error: the record has no 'timing.median_ns' (a number >= 0); a record with status ok needs it" ]
check failed_report_keeps_the_previous_outputs cmp -s "$tmp/table.before" "$d/table.txt"

d=$(fresh rawbad)
echo "12x" >>"$d/raw/allreduce-mpich-p2-native_default-double-sum-r0-ip0-8B.txt"
"$collgen" report "$d" --no-plots 2>"$tmp/raw.err" >/dev/null
rc=$?
check malformed_raw_file_exits_2_with_its_line \
    [ "$rc" = 2 -a "$(cat "$tmp/raw.err")" = "$d/raw/allreduce-mpich-p2-native_default-double-sum-r0-ip0-8B.txt:26: error: expected a time in ns (a number >= 0), found '12x'" ]

"$collgen" report "$tmp/no_such_dir" 2>"$tmp/nodir.err" >/dev/null
rc=$?
check missing_directory_exits_2 [ "$rc" = 2 ]
check missing_directory_is_named grep -q 'no_such_dir: error: cannot open the campaign directory' "$tmp/nodir.err"
mkdir -p "$tmp/empty"
"$collgen" report "$tmp/empty" 2>"$tmp/empty.err" >/dev/null
rc=$?
check directory_without_points_jsonl_exits_2 [ "$rc" = 2 ]
check directory_without_points_jsonl_is_named grep -q "$tmp/empty/points.jsonl: error: cannot read" "$tmp/empty.err"

d=$(fresh noraw)
rm "$d/raw/allreduce-openmpi-p4-native_ring-double-sum-r0-ip0-1048576B.txt"
"$collgen" report "$d" --no-plots --quiet
got=$(row "$d/table.txt" "allreduce / openmpi / p=4 / double sum" "1 MiB" | head -1 | cut -d' ' -f6)
check missing_raw_file_marks_the_ratio_untested [ "$got" = "0.650?" ]

# A size with no native default whose every other record is below the
# latency floor has nothing to choose: the profile skips it (this crashed
# the report once, leaving table.txt.tmp and points.csv.tmp behind).
if [ -x /usr/bin/python3 ]; then
    d=$(fresh nochoice)
    /usr/bin/python3 - "$d/points.jsonl" <<'EOF'
import json, sys
path = sys.argv[1]
out = []
for line in open(path):
    r = json.loads(line)
    cell = (r["collective"], r["library"], r["requested"]["ranks"], r["size_B"]) == ("allgather", "openmpi", 2, 64)
    if cell and r["name"] == "default":
        continue
    if cell:
        r["validity"] = {"below_latency_floor": True, "oversubscribed": False, "latency_floor_ns": 1e6}
    out.append(json.dumps(r))
open(path, "w").write("\n".join(out) + "\n")
EOF
    check no_choice_fixture_has_the_cell [ "$(grep -c below_latency_floor "$d/points.jsonl")" = 3 ]
    "$collgen" report "$d" --no-plots --quiet >/dev/null 2>&1
    rc=$?
    check no_choice_at_a_size_is_no_crash [ "$rc" = 0 ]
    check no_choice_at_a_size_writes_every_output \
        test -s "$d/profile.json" -a -s "$d/table.txt" -a ! -e "$d/table.txt.tmp" -a ! -e "$d/points.csv.tmp"
fi

# ---- plots unavailable: the tables are still written -------------------------

d=$(fresh nopython)
CG_PYTHON=$tmp/no/python3 "$collgen" report "$d" --quiet 2>"$tmp/nopy.err"
rc=$?
check missing_python_still_writes_tables [ "$rc" = 0 -a -s "$d/table.txt" -a -s "$d/points.csv" ]
check missing_python_is_said_clearly grep -q 'plots not made: .*no/python3 is not there' "$tmp/nopy.err"
check missing_python_is_said_in_report_md grep -q '^Not made: .*python3 is not there' "$d/report.md"

if [ -x /usr/bin/python3 ]; then
    d=$(fresh nomatplotlib)
    mkdir -p "$tmp/shadow/matplotlib"
    echo 'raise ImportError("no matplotlib here (test)")' >"$tmp/shadow/matplotlib/__init__.py"
    PYTHONPATH=$tmp/shadow "$collgen" report "$d" --quiet 2>"$tmp/nompl.err"
    rc=$?
    check missing_matplotlib_still_writes_tables [ "$rc" = 0 -a -s "$d/table.txt" -a ! -e "$d/plots" ]
    check missing_matplotlib_is_said_clearly grep -q 'plots not made: .*no matplotlib or numpy' "$tmp/nompl.err"
fi

# ---- the guideline report and the profile -------------------------------------

# gfresh NAME: a copy of the guideline fixture whose campaign ran "in" the
# copy (its schedules/ holds the mock-ups' summaries); prints its path.
gfixture=tests/report/guideline
gfresh() {
    rm -rf "${tmp:?}/$1"
    cp -r "$gfixture" "$tmp/$1"
    sed -i "s|@CWD@|$tmp/$1|" "$tmp/$1/campaign.json"
    echo "$tmp/$1"
}

# section FILE HEADING: the table rows of a level-2 section of a text
# report (indented lines up to the next section), runs of spaces squeezed.
section() {
    awk -v head="$2" '
        $0 == head { on = 1; getline; next }
        on && /^-+$/ { exit }
        on && /^  / { line = $0; sub(/^ +/, "", line); gsub(/ +/, " ", line); print line }
    ' "$1"
}

# The full fixture has generated schedules but no mock-up: an empty guideline
# report, and a profile all the same.
d=$tmp/full
check guidelines_txt_and_profile_json_are_written [ -s "$d/guidelines.txt" -a -s "$d/profile.json" ]
check fixture_without_mockups_has_no_violation \
    grep -q '^None: no generated schedule of this campaign has a summary starting with "Mock-up: ".$' "$d/guidelines.txt"
if [ -x /usr/bin/python3 ]; then
    check profile_of_the_full_fixture_is_json_with_schema_1 /usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["schema_version"] == 1 and len(p["profiles"]) == 6, p.get("profiles")
assert len(p["not_measured"]) == 2
' "$d/profile.json"
fi

d=$(gfresh guideline)
"$collgen" report "$d" --no-plots >"$tmp/gl.out" 2>"$tmp/gl.err"
rc=$?
check guideline_report_exits_0 [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/gl.err"
g=$d/guidelines.txt
check guideline_report_prints_the_violation_count \
    grep -q "^collgen report: 3 guideline violations ($d/guidelines.txt)$" "$tmp/gl.out"

# Exactly the three violations of make_guideline_fixture.py, in this order.
got=$(section "$g" "Guideline violations")
want="collective library p size guideline mock-up native us mock us mock/native p (U test)
allgather mpich 4 64 KiB Allgather <= Gather + Bcast allgather_gather_bcast 100.0 85.00 0.850 2.7e-07
allreduce openmpi 4 1 MiB Allreduce <= Reduce + Bcast allreduce_reduce_bcast 800.0 500.0 0.625 2.1e-08
allreduce openmpi 4 4 MiB Allreduce <= Reduce + Bcast allreduce_reduce_bcast 3200 2000 0.625 2.1e-08"
check guidelines_list_exactly_the_expected_violations [ "$got" = "$want" ]
[ "$got" = "$want" ] || { echo "# got:"; echo "$got" | sed 's/^/#   /'; }

# The other verdicts: slower (holds), faster by < 10% but significant
# (holds), 0.75 with 3 noisy repetitions each (not significant, p = 0.663),
# 0.988 (holds); with the best forced native for information.
t="allreduce / openmpi / p=4 / double sum"
got=$(row "$g" "$t" "8 B allreduce_reduce_bcast")
check slower_mockup_holds \
    [ "$got" = "8 B allreduce_reduce_bcast Allreduce <= Reduce + Bcast 4.500 9.000 2.000 1.4e-09 holds ring 7.000 1.286" ]
got=$(row "$g" "$t" "1 KiB allreduce_reduce_bcast")
check mockup_faster_by_less_than_10_percent_holds \
    [ "$got" = "1 KiB allreduce_reduce_bcast Allreduce <= Reduce + Bcast 5.000 4.750 0.950 2.7e-07 holds ring 6.000 0.792" ]
got=$(row "$g" "$t" "64 KiB allreduce_reduce_bcast")
want="64 KiB allreduce_reduce_bcast Allreduce <= Reduce + Bcast 60.00 45.00 0.750~ 0.663 not significant ring 70.00 0.643~"
check few_noisy_repetitions_are_not_significant [ "$got" = "$want" ]
[ "$got" = "$want" ] || echo "# got: $got"
got=$(row "$g" "$t" "1 MiB allreduce_rsb_allgather")
check second_mockup_of_a_point_has_its_own_row \
    [ "$got" = "1 MiB allreduce_rsb_allgather Allreduce <= Reduce_scatter_block + Allgather 800.0 790.0 0.988 4.3e-06 holds ring 450.0 1.756" ]
check non_mockup_schedule_is_not_compared test -z "$(grep 'allreduce_ring ' "$g")"
check schedule_without_file_is_noted \
    grep -q "^  - generated:allgather_mystery: no schedule file (tried $d/schedules/allgather/mystery.json, .*): cannot tell whether it is a mock-up" "$g"
check mockups_found_are_verified_by_hash \
    grep -qF "  - allreduce_reduce_bcast: Allreduce <= Reduce + Bcast ($d/schedules/allreduce/reduce_bcast.json: the bytes the campaign ran (schedule_hash matches))" "$g"
check guideline_lists_records_not_ok_with_their_reason \
    grep -Eq '^ +26 +failed_check +allgather +mpich +4 +2 KiB +generated:allgather_gather_bcast +3 of 256 elements differ' "$g"
check guideline_lists_native_errors_with_their_reason \
    grep -Eq '^ +27 +error +allgather +mpich +4 +2 KiB +native:ring +the job exited with status 11' "$g"
check report_md_has_the_guideline_section \
    grep -qF '| allgather | mpich | 4 | 64 KiB | Allgather \<= Gather + Bcast | allgather_gather_bcast | 100.0 | 85.00 | 0.850 | 2.7e-07 |' "$d/report.md"
check report_md_guideline_headings grep -q '^## Guideline violations$' "$d/report.md"

# profile.json: the ranges of make_guideline_fixture.py's docstring.
if [ -x /usr/bin/python3 ]; then
    check profile_has_the_expected_ranges /usr/bin/python3 - "$d/profile.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["schema_version"] == 1 and p["alpha"] == 0.05
got = {(e["library"], e["collective"], e["ranks"], e["datatype"], e["op"]):
       [(r["lo_B"], r["hi_B"], r["use"]) for r in e["ranges"]] for e in p["profiles"]}
want = {
    ("mpich", "allgather", 4, "double", None): [
        (0, 11585, "native:default"), (11586, None, "generated:allgather_gather_bcast")],
    ("openmpi", "allreduce", 4, "double", "sum"): [
        (0, 90, "native:default"), (91, 8192, "generated:allreduce_reduce_bcast"),
        (8193, 262144, "native:default"), (262145, None, "native:ring")],
}
assert got == want, got
ar = p["profiles"][1]["ranges"]
assert ar[1]["guideline"] == "Allreduce <= Reduce + Bcast"
assert [m["size_B"] for m in ar[3]["measured"]] == [1048576, 4194304]
assert ar[2]["measured"][0]["fastest_other"] == "generated:allreduce_reduce_bcast"
assert ar[2]["measured"][0]["p_value"] > 0.05
assert sorted(r["status"] for r in p["not_measured"]) == ["error", "failed_check"]
EOF
fi
check profile_ranges_are_one_line_each \
    grep -q '^       {"lo_B": 262145, "hi_B": null, "use": "native:ring", "measured": \[{"size_B": 1048576,' "$d/profile.json"

cp "$g" "$tmp/gl.1"
cp "$d/profile.json" "$tmp/prof.1"
"$collgen" report "$d" --quiet --no-plots
check guideline_report_is_deterministic cmp -s "$tmp/gl.1" "$g"
check profile_is_deterministic cmp -s "$tmp/prof.1" "$d/profile.json"

# A schedule edited since the campaign: still a mock-up, and said so.
d=$(gfresh changed)
echo " " >>"$d/schedules/allreduce/reduce_bcast.json"
"$collgen" report "$d" --quiet --no-plots
check changed_schedule_is_noted \
    grep -q "^  - generated:allreduce_reduce_bcast: $d/schedules/allreduce/reduce_bcast.json has FNV-1a 64 [0-9a-f]*, the records say [0-9a-f]*: the schedule changed since the campaign" "$d/guidelines.txt"
check changed_schedule_keeps_its_violations [ "$(section "$d/guidelines.txt" "Guideline violations" | wc -l)" = 4 ]

# The directory the campaign ran in is gone: the summaries come from this
# repository's schedules/ (the real mock-ups of the same names).
d=$(gfresh nocwd)
sed -i "s|\"cwd\": \"[^\"]*\"|\"cwd\": \"$tmp/gone\"|" "$d/campaign.json"
"$collgen" report "$d" --quiet --no-plots
check mockups_are_found_in_the_repository_when_cwd_is_gone \
    [ "$(section "$d/guidelines.txt" "Guideline violations" | wc -l)" = 4 ]

# Bad input: nothing written, the previous guideline report and profile kept.
d=$(gfresh gbad)
"$collgen" report "$d" --quiet --no-plots
cp "$d/guidelines.txt" "$tmp/gbad.gl"
cp "$d/profile.json" "$tmp/gbad.prof"
sed -i '3s/.*/{"schema_version": 1, oops}/' "$d/points.jsonl"
"$collgen" report "$d" --quiet --no-plots 2>/dev/null
rc=$?
bad_input_kept() {
    [ "$rc" = 2 ] && cmp -s "$tmp/gbad.gl" "$d/guidelines.txt" &&
        cmp -s "$tmp/gbad.prof" "$d/profile.json" && test -z "$(find "$d" -maxdepth 1 -name '*.tmp')"
}
check bad_input_keeps_guidelines_and_profile bad_input_kept

# ---- node shapes and micro-benchmarks -----------------------------------------

mfixture=tests/report/micro
mfresh() { # mfresh NAME: a copy of the micro fixture; prints its path
    rm -rf "${tmp:?}/$1"
    cp -r "$mfixture" "$tmp/$1"
    echo "$tmp/$1"
}

d=$(mfresh micro)
"$collgen" report "$d" >"$tmp/micro.out" 2>"$tmp/micro.err"
rc=$?
check micro_and_shapes_report_exits_0 [ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/micro.err"
t=$d/table.txt

# The native:default of allreduce/openmpi/p=4 at 1 KiB was measured under
# three node shapes (5, 9 and 6 us): three tables, one row each.
got=$(for s in "real: 1 node x 4" "CG_PPN=2: 2 nodes x 2" "CG_PPN=3: irregular"; do
    row "$t" "allreduce / openmpi / p=4 / double sum / $s" "1 KiB" | head -1 | cut -d' ' -f1-3
done)
want="1 KiB 5.000
1 KiB 9.000
1 KiB 6.000"
check default_rows_of_two_shapes_land_in_separate_tables [ "$got" = "$want" ]
[ "$got" = "$want" ] || { echo "# got:"; echo "$got" | sed 's/^/#   /'; }
check shape_tables_are_not_also_merged [ "$(grep -c '^== allreduce / openmpi / p=4 / double sum' "$t")" = 3 ]
check irregular_shape_is_noted grep -qF "  - p=4 / CG_PPN=3 is an irregular node shape (p = 4 is not a multiple of CG_PPN = 3 (the last node holds 1 ranks)): the topology schedules (hierarchical, full-lane) ran their declared fallback there; 2 records, from line" "$t"
got=$(row "$t" "bcast / openmpi / p=4 / double / real: 1 node x 4" "1 KiB" | head -1)
want="1 KiB 5.000 - - - knomial(radix=4) 4.000 0.800 0.800 g:knomial(radix=4) 0.256 0.256"
check parameter_sweep_shows_its_value_in_the_table [ "$got" = "$want" ]
[ "$got" = "$want" ] || echo "# got: $got"

# The micro-benchmarks: their own section, per shape, each k against k=1.
check micro_section_follows_the_tables grep -q '^Micro-benchmarks$' "$t"
got=$(row "$t" "lane_pattern / openmpi / p=4 / double / CG_PPN=2: 2 nodes x 2" "64 KiB"
    row "$t" "lane_pattern / openmpi / p=4 / double / CG_PPN=2: 2 nodes x 2" "1 MiB")
want="64 KiB 1 100.0 - - 1.00 1.00 0.655 0.655 reference
64 KiB 2 52.00 0.520 1.4e-09 1.92 0.96 1.260 1.260 scales
1 MiB 1 1000 - - 1.00 1.00 1.049 1.049 reference
1 MiB 2 800.0 0.800 2.5e-07 1.25 0.62 1.311 1.311 partial"
check micro_lane_pattern_rows_have_k_ratio_and_bandwidth [ "$got" = "$want" ]
[ "$got" = "$want" ] || { echo "# got:"; echo "$got" | sed 's/^/#   /'; }
got=$(row "$t" "multi_collective: allreduce / openmpi / p=8 / double sum / CG_PPN=4: 2 nodes x 4" "8 B")
want="8 B 1 10.00 - - 1.00 1.00 0.00080 0.00080 reference
8 B 2 10.50 1.050 2.7e-07 1.90 0.95 0.00076 0.00076 as one
8 B 3 10.80 1.080 2.7e-07 2.78 0.93 0.00074 0.00074 as one
8 B 4 15.00 1.500 2.1e-08 2.67 0.67 0.00053 0.00053 costs more"
check micro_multi_collective_rows_have_k_ratio_and_bandwidth [ "$got" = "$want" ]
[ "$got" = "$want" ] || { echo "# got:"; echo "$got" | sed 's/^/#   /'; }
check micro_says_whether_k_lanes_give_k_times_the_bandwidth grep -qxF \
    "  - 64 KiB: k lanes give k times the bandwidth of one (within 10%) up to k=2; the most bandwidth at k=2, 1.92x k=1's" "$t"
check micro_says_when_lanes_do_not_scale grep -qxF \
    "  - 1 MiB: more lanes do not give proportionally more bandwidth: k=2 gives 1.25x the bandwidth of k=1 (ideal 2x); the most bandwidth at k=2, 1.25x k=1's" "$t"
check micro_says_how_many_concurrent_collectives_cost_as_one grep -qxF \
    "  - 8 B: up to 3 concurrent allreduce cost no more than one (within 10% of k=1's median); 4 take 1.50x its time" "$t"
check micro_says_when_two_already_cost_more grep -qxF \
    "  - 8 B: only one allreduce costs as one: 2 concurrent ones take 2.00x its time" "$t"
# p=8 has micro-benchmarks only: no main table; lane_pattern one micro table.
check micro_records_are_not_in_the_main_tables \
    [ "$(grep -c '^== allreduce / openmpi / p=8\|^== lane_pattern / ' "$t")" = 1 ]
check micro_failed_check_is_listed_with_its_reason \
    grep -Eq '^ +26 +failed_check +lane_pattern +openmpi +4, CG_PPN=2: 2 nodes x 2 +1 KiB +micro:lane_pattern\(k=2\) +2 of 128 elements differ' "$t"
check report_md_has_the_micro_section grep -q '^## Micro-benchmarks$' "$d/report.md"

# The guideline report and the profile: shapes apart, micro-benchmarks out.
g=$d/guidelines.txt
got=$(section "$g" "Guideline violations")
want="collective library p variant size guideline mock-up native us mock us mock/native p (U test)
allreduce openmpi 4 double sum / CG_PPN=2: 2 nodes x 2 1 MiB Allreduce <= Reduce + Bcast allreduce_reduce_bcast 1200 900.0 0.750 2.1e-08"
check guideline_violation_names_its_node_shape [ "$got" = "$want" ]
[ "$got" = "$want" ] || { echo "# got:"; echo "$got" | sed 's/^/#   /'; }
check guideline_tables_are_per_node_shape \
    [ "$(grep -c '^== allreduce / openmpi / p=4 / double sum / \(real: 1 node x 4\|CG_PPN=2: 2 nodes x 2\) ==$' "$g")" = 2 ]
check guideline_report_has_no_micro_benchmark [ "$(grep -c 'lane_pattern\|multi_collective' "$g")" = 0 ]
if [ -x /usr/bin/python3 ]; then
    check profile_keys_include_the_node_shape_and_leave_micro_out /usr/bin/python3 - "$d/profile.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
got = {(e["collective"], e["ranks"], e["node_shape"], e["ranks_per_node"], e["regular"]):
       [(r["lo_B"], r["hi_B"], r["use"]) for r in e["ranges"]] for e in p["profiles"]}
want = {
    ("allreduce", 4, "real", 4, True): [(0, 32768, "native:default"),
                                        (32769, None, "generated:allreduce_ring")],
    ("allreduce", 4, "virtual (CG_PPN)", 2, True): [(0, None, "generated:allreduce_lane")],
    ("allreduce", 4, "virtual (CG_PPN)", 3, False): [(0, None, "native:default")],
    ("bcast", 4, "real", 4, True): [(0, None, "generated:bcast_knomial(radix=4)")],
}
assert got == want, got
assert p["profiles"][3]["ranges"][0]["params"] == {"radix": 4}
assert p["not_measured"] == [], p["not_measured"]
EOF
    check csv_keeps_micro_records_as_rows /usr/bin/python3 - "$d/points.csv" "$mfixture/points.jsonl" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == sum(1 for l in open(sys.argv[2]) if l.strip())
micro = [r for r in rows if r["kind"] == "micro"]
assert len(micro) == 11, len(micro)
assert {r["requested.params.k"] for r in micro} == {"1", "2", "3", "4"}
assert {r["requested.node_shape"] for r in rows} == {"real", "virtual (CG_PPN)"}
EOF
    missing=
    for f in micro_lane_pattern_openmpi_p4_vppn2 micro_multi_collective_allreduce_openmpi_p4_vppn2 \
        micro_multi_collective_allreduce_openmpi_p8_vppn4 latency_allreduce_openmpi_real_p4 \
        latency_allreduce_openmpi_vppn2_p4 latency_allreduce_openmpi_vppn3_p4; do
        is_png "$d/plots/$f.png" || missing="$missing $f"
    done
    if [ -z "$missing" ]; then
        pass plots_of_micro_benchmarks_and_of_each_shape_are_pngs
    else
        fail plots_of_micro_benchmarks_and_of_each_shape_are_pngs "missing or not PNG:$missing"
    fi
fi

cp "$t" "$tmp/micro.1"
"$collgen" report "$d" --quiet --no-plots
check micro_report_is_deterministic cmp -s "$tmp/micro.1" "$t"

# A malformed micro-benchmark record is still an error, with its line.
d=$(mfresh microbad)
n=$(grep -n '"name": "lane_pattern(k=2)"' "$d/points.jsonl" | head -1 | cut -d: -f1)
sed -i "${n}s/\"name\": \"lane_pattern(k=2)\"/\"name\": \"lane_pattern(k=two)\"/" "$d/points.jsonl"
"$collgen" report "$d" --no-plots 2>"$tmp/microbad.err" >/dev/null
rc=$?
want="$d/points.jsonl:$n: error: a micro-benchmark's name must be lane_pattern(k=<lanes>) or multi_collective(k=<lanes>) with lanes a whole number >= 1, not 'lane_pattern(k=two)'"
check malformed_micro_record_exits_2_with_its_line [ "$rc" = 2 -a "$(cat "$tmp/microbad.err")" = "$want" ]
[ "$rc" = 2 ] || sed 's/^/# /' "$tmp/microbad.err"
check malformed_micro_record_writes_nothing \
    test -z "$(find "$d" -maxdepth 1 \( -name 'table.txt*' -o -name 'report.md*' -o -name 'points.csv*' -o -name 'plots*' -o -name 'guidelines.txt*' -o -name 'profile.json*' \))"

# Repeated records (a point recorded twice): resolved, the first wins, and
# said on stderr, not only in report.md.
d=$(fresh repeated)
"$collgen" report "$d" --no-plots >/dev/null 2>&1
cp "$d/table.txt" "$tmp/repeated.table"
head -n 2 "$d/points.jsonl" >>"$d/points.jsonl"
n=$(wc -l <"$d/points.jsonl")
"$collgen" report "$d" --no-plots >/dev/null 2>"$tmp/repeated.err"
rc=$?
check repeated_records_exit_0 [ "$rc" = 0 ]
check repeated_records_are_said_on_stderr grep -q "^collgen: report: warning: $d/points.jsonl has 2 repeated records (point ids recorded more than once, first: line $((n - 1)) repeats line 1); the tables use the first record of each point" "$tmp/repeated.err"
# The tables are those without the repeats; the summary counts points.
check repeated_records_leave_the_tables_unchanged cmp -s <(grep -v -e '^Campaign ' -e ' repeats point ' "$tmp/repeated.table") \
    <(grep -v -e '^Campaign ' -e ' repeats point ' "$d/table.txt")
check repeated_records_are_counted_once_in_the_summary grep -q "^Campaign .*: $n records in points.jsonl, 2 of them repeating an earlier one, for $((n - 2)) points ($(grep -o '(.*)' <(grep '^Campaign ' "$tmp/repeated.table") | tr -d '()'))." "$d/table.txt"
check repeated_records_are_listed_in_report_md grep -q "^- line $n repeats point .* of line 2; the tables use line 2" "$d/report.md"

# ---- command lines: every main's options (getopt_long, cg_cli_bad_option) -----
# An unknown option or one without its value: exit 2 and exactly one line on
# stderr naming it, nothing on stdout; --help: exit 0 and the usage on
# stdout. bench and bench_cuda run without a launcher (a singleton MPI
# process, ~0.4 s each, four of them; skipped when not built).
# usage_case NAME WANT-STDERR COMMAND...
usage_case() {
    local name=$1 want=$2
    shift 2
    "$@" >"$tmp/usage.out" 2>"$tmp/usage.err"
    local rc=$?
    if [ "$rc" = 2 ] && [ "$(cat "$tmp/usage.err")" = "$want" ] && [ ! -s "$tmp/usage.out" ]; then
        pass "$name"
    else
        fail "$name" "exit $rc, stderr: $(head -c 300 "$tmp/usage.err" | tr '\n' '|')"
    fi
}
help_case() { # help_case NAME USAGE-START COMMAND...
    local name=$1 want=$2
    shift 2
    "$@" >"$tmp/help.out" 2>"$tmp/help.err"
    local rc=$?
    if [ "$rc" = 0 ] && [ "$(head -n 1 "$tmp/help.out")" = "$want" ]; then
        pass "$name"
    else
        fail "$name" "exit $rc, stdout: $(head -n 1 "$tmp/help.out")"
    fi
}
usage_case report_unknown_option_exits_2 \
    "collgen report: error: unknown option '--plots' (collgen report --help)" \
    "$collgen" report --plots "$tmp"
usage_case report_unknown_short_option_exits_2 \
    "collgen report: error: unknown option '-x' (collgen report --help)" "$collgen" report -x "$tmp"
usage_case report_without_a_directory_exits_2 \
    "collgen report: error: which campaign directory? (collgen report --help)" "$collgen" report --quiet
usage_case report_with_two_directories_and_no_out_exits_2 \
    "collgen report: error: 2 campaign directories pool into one report: say where it goes (--out OUT)" \
    "$collgen" report a b
usage_case report_out_without_its_value_exits_2 \
    "collgen report: error: option '--out' needs a value (collgen report --help)" \
    "$collgen" report a --out
help_case report_help_prints_the_usage "usage: collgen report DIR [--out OUT] [--no-plots] [--quiet]" \
    "$collgen" report --help
usage_case compare_threshold_without_its_value_exits_2 \
    "collgen compare: error: option '--threshold' needs a value (collgen compare --help)" \
    "$collgen" compare a b --threshold
usage_case compare_out_without_its_value_exits_2 \
    "collgen compare: error: option '--out' needs a value (collgen compare --help)" \
    "$collgen" compare a b --out
usage_case compare_unknown_option_exits_2 \
    "collgen compare: error: unknown option '--treshold=5' (collgen compare --help)" \
    "$collgen" compare --treshold=5 a b
usage_case compare_three_campaigns_exit_2 \
    "collgen compare: error: more than two campaigns ('c')" "$collgen" compare a b c
help_case compare_help_prints_the_usage \
    "usage: collgen compare BASE NEW [--threshold PCT] [--out DIR] [--no-plots] [--quiet]" \
    "$collgen" compare -h
usage_case tag_out_without_its_value_exits_2 \
    "collgen tag: error: option '--out' needs a value (collgen tag --help)" "$collgen" tag x.c --out
usage_case tag_unknown_option_before_dashes_exits_2 \
    "collgen tag: error: unknown option '--std=c11' (collgen tag --help)" \
    "$collgen" tag --std=c11 x.c -- -I.
usage_case tag_without_a_file_exits_2 "collgen tag: error: no FILE.c given (collgen tag --help)" \
    "$collgen" tag -q -- -DX
usage_case tune_unknown_option_exits_2 \
    "collgen tune: error: unknown option '--depth' (collgen tune --help)" "$collgen" tune --depth 3 "$tmp"
usage_case verify_p_without_its_value_exits_2 \
    "collgen: error: option '--p' needs a value (collgen --help)" "$collgen" verify --p
for prog in build/openmpi/bench build/cuda/bench_cuda; do
    name=$(basename "$prog")
    if [ ! -x "$prog" ]; then
        echo "SKIP report ${name}_options ($prog is not built)"
        continue
    fi
    usage_case "${name}_unknown_option_exits_2" \
        "$name: error: unknown option '--job' ($name --help)" "$prog" --job x.json
    # Why only bench for the rest: bench_cuda's read_args is the same code.
    [ "$name" = bench ] || continue
    usage_case "${name}_without_a_job_file_exits_2" \
        "$name: error: give one JOBFILE ($name --help)" "$prog"
    help_case "${name}_help_prints_the_usage" "usage: $name JOBFILE" "$prog" --help
done


# ---- pooled campaigns (collgen report DIR DIR... --out OUT) ------------------------
# Two copies of the fixture as two runs of one descriptor; in the second, the
# generated ring of Open MPI p = 4 1 MiB (455 us) made 3 times slower. Pooled,
# every point has 2 launches (the first's, then the second's), so that
# point's median is the median of 455 and 1365 us, 910; the sources are only
# read; the report says where its launches came from and how to remake it.
a=$(fresh pool_a)
b=$(fresh pool_b)
/usr/bin/python3 tests/report/slow_down.py "$b" allreduce_ring openmpi 1048576 4 3
before=$(cd "$tmp" && find pool_a pool_b -type f | sort | xargs md5sum | md5sum)
"$collgen" report "$a" "$b" --out "$tmp/pooled" --quiet >"$tmp/pool.out" 2>"$tmp/pool.err"
rc=$?
check pooled_report_exits_0_and_writes_into_out \
    [ "$rc" = 0 -a -s "$tmp/pooled/table.txt" -a -s "$tmp/pooled/report.md" -a -s "$tmp/pooled/points.csv" ]
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/pool.err"
check pooled_report_only_reads_its_sources \
    [ "$(cd "$tmp" && find pool_a pool_b -type f | sort | xargs md5sum | md5sum)" = "$before" ]
if /usr/bin/python3 - "$tmp/pooled/points.csv" "$fixture/points.jsonl" <<'EOF2'; then
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n = sum(1 for l in open(sys.argv[2]) if l.strip())
ids = [r["point_id"] for r in rows]
ok = (len(rows) == 2 * n and all(r["launch.of"] == "2" for r in rows) and
      sum(i.endswith("-L1") for i in ids) == n and sum(i.endswith("-L2") for i in ids) == n and
      len(set(ids)) == 2 * n)
if not ok:
    print("rows", len(rows), "want", 2 * n, "of", sorted(set(r["launch.of"] for r in rows)))
sys.exit(0 if ok else 1)
EOF2
    pass pooled_points_are_two_launches_each_with_ids_of_their_own
else
    fail pooled_points_are_two_launches_each_with_ids_of_their_own
fi
got=$(row "$tmp/pooled/table.txt" "allreduce / openmpi / p=4 / double sum" "1 MiB" | head -1)
check pooled_median_is_the_median_of_the_launch_medians grep -q ' 910\.0 ' <<<"$got"
grep -q ' 910\.0 ' <<<"$got" || echo "# got: $got"
check pooled_report_names_its_sources_and_their_launches \
    grep -q "Pooled from 2 campaigns of one descriptor (2 launches a point): \`$a\` (launch 1), \`$b\` (launch 2)" \
    "$tmp/pooled/report.md"
check pooled_report_says_how_to_remake_it \
    grep -qx "build/collgen report $a $b --out $tmp/pooled" "$tmp/pooled/report.md"
check pooled_report_has_no_plots grep -q '^Not made: a pooled report has no plots' "$tmp/pooled/report.md"

# Each launch measures its own roofline: pooled, a point's limit is the
# median of its launches' (1000 and 3000 ns: 2.000 us), not its first's.
for side in a:1000 b:3000; do
    /usr/bin/python3 - "$(fresh "roof_${side%%:*}")/points.jsonl" "${side##*:}" <<'EOF2'
import json, sys
path, lim = sys.argv[1], float(sys.argv[2])
recs = [json.loads(l) for l in open(path)]
for r in recs:
    r["schema_version"] = 3
    r["roofline"] = {"recv_B": r["size_B"], "reduce_B": 0, "copy_B": 0, "p2p_ns": lim,
                     "p2p_GBps": 1.0, "reduce_ns": 0, "reduce_GBps": None, "copy_ns": 0,
                     "copy_GBps": None, "limit_ns": lim, "overlap_limit_ns": lim}
with open(path, "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
EOF2
done
"$collgen" report "$tmp/roof_a" "$tmp/roof_b" --out "$tmp/roof_pooled" --quiet >/dev/null 2>&1
limits=$(awk '/^Against the roofline/ { on = 1 } on && $4 == "1" && $5 == "MiB" { print $6 }' \
    "$tmp/roof_pooled/table.txt" | sort -u | tr '\n' ' ')
check pooled_roofline_is_the_median_of_the_launches_limits [ "$limits" = "2.000 " ]
[ "$limits" = "2.000 " ] || echo "# limits: $limits"

# Campaigns of two descriptors do not pool: exit 2, both named, nothing written.
c=$(fresh pool_other)
/usr/bin/python3 - "$c/campaign.json" <<'EOF2'
import json, sys
j = json.load(open(sys.argv[1]))
j["test"]["name"] = "another"
json.dump(j, open(sys.argv[1], "w"))
EOF2
"$collgen" report "$a" "$c" --out "$tmp/pooled_other" --quiet >/dev/null 2>"$tmp/pool_other.err"
rc=$?
check pooling_two_descriptors_exits_2_naming_both \
    [ "$rc" = 2 -a ! -e "$tmp/pooled_other/table.txt" ]
check pooling_two_descriptors_says_which \
    grep -q "^$c: error: it ran descriptor 'another', $a ran 'fixture': campaigns pool only when they ran one descriptor" \
    "$tmp/pool_other.err"
"$collgen" report "$a" "$b" --out "$b" --quiet >/dev/null 2>"$tmp/pool_self.err"
rc=$?
check pooling_into_a_source_exits_2 [ "$rc" = 2 -a ! -e "$b/table.txt" ]
check pooling_into_a_source_says_so grep -q "error: --out is the campaign directory $b" "$tmp/pool_self.err"
# One campaign with --out: its report goes there, not into the campaign.
"$collgen" report "$a" --out "$tmp/elsewhere" --quiet >/dev/null 2>&1
rc=$?
check report_with_out_writes_there_only \
    [ "$rc" = 0 -a -s "$tmp/elsewhere/table.txt" -a ! -e "$a/table.txt" ]
check report_with_out_says_how_to_remake_it \
    grep -qx "build/collgen report $a --out $tmp/elsewhere" "$tmp/elsewhere/report.md"

# ---- the Speed section (schema 3) ------------------------------------------------
# The fixture's records made schema 3 with a roofline: the summary pairs
# every generated record with the native of the same algorithm at its point,
# and leaves out a native that ran another algorithm (the ring forced at 8 B,
# which Open MPI 4.1 runs as recursive_doubling). The counts and geomeans
# are computed here from the records, independently of the report.
d=$(fresh speed)
/usr/bin/python3 - "$d/points.jsonl" <<'EOF2'
import json, sys
path = sys.argv[1]
recs = [json.loads(l) for l in open(path)]
for r in recs:
    r["schema_version"] = 3
    r["roofline"] = {"recv_B": r["size_B"], "reduce_B": 0, "copy_B": 0, "p2p_ns": 1000.0,
                     "p2p_GBps": 1.0, "reduce_ns": 0, "reduce_GBps": None, "copy_ns": 0,
                     "copy_GBps": None, "limit_ns": 1000.0, "overlap_limit_ns": 1000.0}
with open(path, "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
EOF2
CG_PYTHON=$tmp/no/python3 "$collgen" report "$d" --quiet >/dev/null 2>"$tmp/speed.err"
if /usr/bin/python3 - "$d/points.jsonl" "$d/table.txt" <<'EOF2'; then
import json, math, re, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
twin = {"allreduce_ring": "ring", "allreduce_recursive_doubling": "recursive_doubling",
        "allreduce_rabenseifner": "rabenseifner", "allgather_ring": "ring",
        "allgather_bruck": "bruck"}
key = lambda r: (r["library"], r["collective"], r["requested"]["ranks"], r["size_B"])
want = {}
fallbacks = 0
for g in recs:
    if g["kind"] != "generated" or g["status"] != "ok" or g["name"] not in twin:
        continue
    peers = [n for n in recs if n["kind"] == "native" and n["name"] == twin[g["name"]] and
             key(n) == key(g) and n["status"] == "ok"]
    fallbacks += any("algorithm" in n["diff"] for n in peers)
    peers = [n for n in peers if "algorithm" not in n["diff"]]
    if peers:
        best = min(n["timing"]["median_ns"] for n in peers)
        w = want.setdefault((g["library"], g["collective"]), [0, 0.0])
        w[0] += 1
        w[1] += math.log(g["timing"]["median_ns"] / best)
text = open(sys.argv[2]).read()
sec = text[text.index("\nSpeed\n"):]
sec = sec[:sec.index("Against the roofline")]
got = {}
for m in re.finditer(r"^  (openmpi|mpich)\s+(\S+)\s+(\d+)\s+([\d.]+)\s", sec, re.M):
    got[(m.group(1), m.group(2))] = (int(m.group(3)), float(m.group(4)))
ok = fallbacks > 0 and len(got) == len(want) > 0
for k, (n, s) in want.items():
    ok = ok and k in got and got[k][0] == n and abs(got[k][1] - math.exp(s / n)) < 0.0015
if not ok:
    print("want", {k: (n, round(math.exp(s / n), 3)) for k, (n, s) in want.items()}, "got", got, "fallbacks", fallbacks)
sys.exit(0 if ok else 1)
EOF2
    pass speed_summary_pairs_same_algorithms_and_leaves_out_fallbacks
else
    cat "$tmp/speed.err"
    fail speed_summary_pairs_same_algorithms_and_leaves_out_fallbacks
fi

# The summary's second count holds the false discovery rate over all pairs
# (Benjamini-Hochberg at 5 %): one generated record made twice as slow (its
# repetitions and median doubled) must be counted there, and every count
# must be what the procedure gives on the pairs tables' ratios and p-values,
# computed here.
d=$(fresh speed_fdr)
/usr/bin/python3 - "$d" <<'EOF2'
import json, os, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(os.path.join(d, "points.jsonl"))]
for r in recs:
    r["schema_version"] = 3
    r["roofline"] = {"recv_B": r["size_B"], "reduce_B": 0, "copy_B": 0, "p2p_ns": 1000.0,
                     "p2p_GBps": 1.0, "reduce_ns": 0, "reduce_GBps": None, "copy_ns": 0,
                     "copy_GBps": None, "limit_ns": 1000.0, "overlap_limit_ns": 1000.0}
with open(os.path.join(d, "points.jsonl"), "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
EOF2
/usr/bin/python3 tests/report/slow_down.py "$d" allgather_ring openmpi 64 2 2
CG_PYTHON=$tmp/no/python3 "$collgen" report "$d" --quiet >/dev/null 2>"$tmp/speed_fdr.err"
if /usr/bin/python3 - "$d/table.txt" <<'EOF2'; then
import re, sys
text = open(sys.argv[1]).read()
pairs = []  # (library, collective, ratio, p)
sec = None
gen = False
for line in text.split("\n"):
    m = re.match(r"== (\S+) / (\S+) / p=(\d+)", line)
    if m:
        sec, gen = (m.group(2), m.group(1)), False
        continue
    if line.startswith("Generated schedules"):
        gen = True
        continue
    if line.startswith("Speed"):
        break
    t = line.split()
    if gen and sec and len(t) >= 8 and t[0][0].isdigit() and not t[3].endswith("!"):
        try:
            pairs.append((sec[0], sec[1], float(t[-2].rstrip("~")), float(t[-1])))
        except ValueError:
            pass
ps = sorted(p for _, _, _, p in pairs)
n = len(ps)
thr = -1.0
for k in range(n, 0, -1):
    if ps[k - 1] <= 0.05 * k / n:
        thr = ps[k - 1]
        break
want = {}
for lib, coll, ratio, p in pairs:
    want[(lib, coll)] = want.get((lib, coll), 0) + (ratio > 1.10 and p <= thr)
sec = text[text.index("\nSpeed\n"):]
sec = sec[:sec.index("Against the roofline")]
got = {}
for m in re.finditer(r"^  (openmpi|mpich)\s+(\S+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s", sec, re.M):
    got[(m.group(1), m.group(2))] = int(m.group(6))
ok = got == want and sum(got.values()) >= 1 and got.get(("openmpi", "allgather"), 0) >= 1
if not ok:
    print("want", want, "got", got, "threshold", thr, "pairs", n)
sys.exit(0 if ok else 1)
EOF2
    pass speed_summary_counts_worse_pairs_at_a_false_discovery_rate
else
    cat "$tmp/speed_fdr.err"
    fail speed_summary_counts_worse_pairs_at_a_false_discovery_rate
fi

exit $((failed > 0))
