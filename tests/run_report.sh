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
    test -z "$(find "$d" -maxdepth 1 \( -name 'table.txt*' -o -name 'report.md*' -o -name 'points.csv*' -o -name 'plots*' \))"

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

exit $((failed > 0))
