#!/usr/bin/env bash
# tests/run_trace.sh - timelines (verbosity "trace"; harness/FORMATS.md,
# "Trace file"): the trace-event files bench writes and collgen report lists.
#
#   campaign     descriptors/tests/trace.json through build/collgen run (allreduce
#                ring, recursive doubling and the native default, p = 3, two sizes,
#                both libraries): one file per point, each checked by
#                tests/trace/check_trace.py (valid JSON, a track per rank,
#                regions inside their repetition's span, properly nested with the
#                tag table's parents, region names as `collgen tags` predicts per
#                rank and repetition)
#   report       table.txt and report.md list every trace file with its point
#   minimal      the same test at verbosity minimal writes no trace directory and
#                no trace_dir in its job files
#   unknown      an unknown verbosity is refused with file:line:col and the values
#   skew         one rank's clock 5 s and 0.1 % off (CG_BENCH_CLOCK_SKEW): its
#                regions still lie inside its repetitions and the repetitions of
#                the ranks start within a second of each other (the global clock);
#                in the same job a baseline, whose regions (collgen tag's, its
#                helper's call among them) are named from their table
#   full buffer  a buffer of 40 events (CG_BENCH_TRACE_EVENTS): dropped events
#                counted, regions whose end was dropped marked cut, what was kept
#                still nested and within the prediction
#   checker      the checker fails on broken copies of a good file (a region
#                outside its repetition, a wrong parent, a missing rank, a round
#                missing, not JSON)
#   symbols      the tags-off objects name no trace symbol, the tags-on ones do
#
# One line per case: "PASS trace <name>" or "FAIL trace <name> (why)";
# tests/run_all.sh counts them. No timed assertions. Exit status: 0 when
# nothing failed.
set -u
cd "$(dirname "$0")/.."

collgen=build/collgen
py=/usr/bin/python3
[ -x "$py" ] || py=python3
check=tests/trace/check_trace.py
reg=emitted/registry.json
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS trace $1"; }
fail() {
    echo "FAIL trace $1${2:+ ($2)}"
    failed=$((failed + 1))
}

if [ ! -x "$collgen" ] || [ ! -x build/openmpi/bench ] || [ ! -x build/mpich/bench ]; then
    fail everything_is_built "run ninja first"
    exit 1
fi

# ---- a campaign at verbosity trace ------------------------------------------------
camp=$tmp/camp
if "$collgen" run descriptors/tests/trace.json --out "$camp" --quiet >"$tmp/camp.log" 2>&1; then
    pass campaign_runs
else
    fail campaign_runs "exit $?: $(tail -3 "$tmp/camp.log" | tr '\n' ' ')"
fi
# 2 libraries x 3 implementations x 2 sizes.
"$py" "$check" "$camp" "$collgen" "$reg" --expect 12 >"$tmp/check.out" 2>&1
rc=$?
cat "$tmp/check.out"
if [ $rc -eq 0 ] && grep -q '^PASS trace file .*openmpi.*allreduce_ring' "$tmp/check.out" &&
    grep -q '^PASS trace file .*mpich.*recursive_doubling' "$tmp/check.out"; then
    pass campaign_traces_check
else
    fail campaign_traces_check "checker exit $rc"
fi
if grep -q '"trace_dir"' "$camp"/jobs/job-*.json && grep -q "\"verbosity\":[[:space:]]*\"trace\"" "$camp"/run-1.json; then
    pass campaign_job_and_run_metadata_say_trace
else
    fail campaign_job_and_run_metadata_say_trace
fi

# ---- the report lists every file with its point ---------------------------------
missing=""
n=0
for f in "$camp"/trace/*.json; do
    b=$(basename "$f")
    n=$((n + 1))
    id=${b%.json}
    lib=$(echo "$id" | cut -d- -f2)
    grep -q "trace/$b  *allreduce  *$lib  *3  " "$camp/table.txt" || missing="$missing table.txt:$b"
    grep -q "| trace/$b | allreduce | $lib | 3 |" "$camp/report.md" || missing="$missing report.md:$b"
done
if [ "$n" -eq 12 ] && [ -z "$missing" ] && grep -q '^## Timelines (trace/)' "$camp/report.md" &&
    grep -q 'ui.perfetto.dev' "$camp/report.md"; then
    pass report_lists_every_trace_file
else
    fail report_lists_every_trace_file "$n files; missing:$missing"
fi

# ---- verbosity minimal: no trace -------------------------------------------------
sed -e 's/"verbosity": "trace"/"verbosity": "minimal"/' \
    -e 's/"libraries": \["openmpi", "mpich"\]/"libraries": ["openmpi"]/' \
    descriptors/tests/trace.json >"$tmp/minimal.json"
if "$collgen" run "$tmp/minimal.json" --out "$tmp/min" --quiet >"$tmp/min.log" 2>&1 &&
    [ -s "$tmp/min/points.jsonl" ] && [ ! -e "$tmp/min/trace" ] &&
    ! grep -q trace_dir "$tmp/min"/jobs/job-*.json && ! grep -q 'Timelines' "$tmp/min/report.md"; then
    pass minimal_writes_no_trace
else
    fail minimal_writes_no_trace "$(ls "$tmp/min" 2>&1 | tr '\n' ' ')"
fi

# ---- an unknown verbosity: a located error ---------------------------------------
sed 's/"verbosity": "trace"/"verbosity": "traces"/' descriptors/tests/trace.json >"$tmp/bad.json"
line=$(grep -n '"verbosity"' "$tmp/bad.json" | cut -d: -f1)
"$collgen" run "$tmp/bad.json" --dry-run >"$tmp/bad.out" 2>&1
rc=$?
if [ $rc -eq 2 ] &&
    grep -q "bad.json:$line:[0-9]*: .*unknown verbosity 'traces'; expected one of: minimal, full, trace" "$tmp/bad.out"; then
    pass unknown_verbosity_located_error
else
    fail unknown_verbosity_located_error "exit $rc: $(head -2 "$tmp/bad.out" | tr '\n' ' ')"
fi

# job FILE LIB POINTS: a bench job file at verbosity trace, out under $tmp/FILE.d
job() {
    local d=$tmp/$1.d
    mkdir -p "$d"
    cat >"$tmp/$1.json" <<EOF
{ "schema_version": 1, "campaign": "$1", "run_id": 1, "library": "$2", "ranks": 3,
  "knobs": null, "timing": { "sync": "barrier", "warmup": 1, "min_reps": 4, "max_reps": 4 },
  "verbosity": "trace", "points": $3,
  "out": { "points": "$d/points.jsonl", "raw_dir": "$d/raw", "run_meta": "$d/run-1.json",
           "trace_dir": "$d/trace" } }
EOF
}
ring='[{ "id": "ring", "seq": 1, "collective": "allreduce", "impl": "generated:allreduce_ring",
         "count": 96, "datatype": "double", "op": "sum" }]'

# ---- a skewed clock (and a baseline: collgen tag's tags, its helper's call nested) --
job skew openmpi "${ring%]}, { \"id\": \"baseline\", \"seq\": 2, \"collective\": \"allreduce\",
    \"impl\": \"baseline:allreduce_ring\", \"count\": 96, \"datatype\": \"double\", \"op\": \"sum\" }]"
CG_BENCH_CLOCK_SKEW=2:5000000000:0.001 tests/mpirun.sh openmpi 3 build/openmpi/bench \
    "$tmp/skew.json" >"$tmp/skew.log" 2>&1
rc=$?
"$py" "$check" "$tmp/skew.d" "$collgen" "$reg" --expect 2 >"$tmp/skew.out" 2>&1
crc=$?
spread=$("$py" - "$tmp/skew.d/trace/ring.json" <<'EOF' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
worst = 0.0
for k in range(d["otherData"]["reps_traced"]):
    ts = [e["ts"] for e in d["traceEvents"] if e.get("cat") == "repetition" and e["args"]["rep"] == k]
    worst = max(worst, max(ts) - min(ts))
print(f"{worst:.0f}")
EOF
)
if [ $rc -eq 0 ] && [ $crc -eq 0 ] && [ -n "$spread" ] && [ "$spread" -lt 1000000 ] 2>/dev/null; then
    pass skewed_clock_regions_on_the_global_clock
else
    fail skewed_clock_regions_on_the_global_clock "bench $rc, checker $crc, start spread $spread us: $(grep FAIL "$tmp/skew.out" | head -1)"
fi
# The baseline's helper (collgen tag's "start") is named from its table, not "tag <id>".
if "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); n={e["name"] for e in d["traceEvents"] if e.get("ph")=="X"}
sys.exit(0 if "allreduce_ring/rs_step/round" in n and "start/memcpy" in n and not any(x.startswith("tag ") for x in n) else 1)' \
    "$tmp/skew.d/trace/baseline.json" 2>/dev/null; then
    pass baseline_regions_named_from_collgen_tags_table
else
    fail baseline_regions_named_from_collgen_tags_table "$(ls "$tmp/skew.d/trace" 2>&1 | tr '\n' ' ')"
fi

# ---- a full buffer ---------------------------------------------------------------
job full mpich "$ring"
CG_BENCH_TRACE_EVENTS=40 tests/mpirun.sh mpich 3 build/mpich/bench "$tmp/full.json" \
    >"$tmp/full.log" 2>&1
rc=$?
"$py" "$check" "$tmp/full.d" "$collgen" "$reg" --expect 1 >"$tmp/full.out" 2>&1
crc=$?
# dropped_events, and the regions whose end was dropped: drawn to the
# repetition's end, marked cut.
dropped=$("$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["otherData"]["dropped_events"], sum(1 for e in d["traceEvents"] if e.get("args", {}).get("cut")))' \
    "$tmp/full.d/trace/ring.json" 2>&1)
if [ $rc -eq 0 ] && [ $crc -eq 0 ] && [ "${dropped% *}" -gt 0 ] 2>/dev/null &&
    [ "${dropped#* }" -gt 0 ] 2>/dev/null; then
    pass full_buffer_drops_and_counts
else
    fail full_buffer_drops_and_counts "bench $rc, checker $crc, dropped and cut $dropped: $(grep FAIL "$tmp/full.out" | head -1)"
fi

# ---- the checker can fail --------------------------------------------------------
good=$(ls "$camp"/trace/*openmpi*allreduce_ring*64B.json 2>/dev/null | head -1)
for m in outside parent rank round notjson; do
    d=$tmp/mut-$m
    mkdir -p "$d/trace"
    cp "$camp/points.jsonl" "$d/"
    if [ -z "$good" ] || ! "$py" - "$good" "$d/trace/$(basename "$good")" "$m" <<'EOF'; then
import json, sys
src, dst, m = sys.argv[1:]
if m == "notjson":
    open(dst, "w").write(open(src).read()[:-40])
    sys.exit(0)
d = json.load(open(src))
ev = d["traceEvents"]
x = [e for e in ev if e.get("ph") == "X" and e["cat"] != "repetition"]
if m == "outside":    # a step after its repetition's end
    e = next(e for e in x if e["cat"] == "comm" and e["tid"] == 1)
    e["ts"] += 1e6
elif m == "parent":   # an allgather exchange inside a reduce_scatter round
    e = next(e for e in x if e["name"].endswith("allgather/round/exchange") and e["tid"] == 0)
    r = next(r for r in x if r["name"].endswith("reduce_scatter/round") and r["tid"] == 0)
    e["ts"], e["dur"] = r["ts"] + r["dur"] / 4, r["dur"] / 4
elif m == "rank":     # rank 2's track gone
    d["traceEvents"] = [e for e in ev if e.get("tid") != 2]
elif m == "round":    # one round and its steps gone on rank 1, repetition 0
    r = next(r for r in x if r["cat"] == "round" and r["tid"] == 1 and r["args"]["rep"] == 0)
    lo, hi = r["ts"], r["ts"] + r["dur"]
    d["traceEvents"] = [e for e in ev if not (e.get("ph") == "X" and e["tid"] == 1 and
                        e["cat"] != "repetition" and lo <= e["ts"] and e["ts"] + e["dur"] <= hi)]
json.dump(d, open(dst, "w"))
EOF
        fail "checker_fails_on_$m" "could not make the broken copy"
        continue
    fi
    if "$py" "$check" "$d" "$collgen" "$reg" >"$tmp/mut-$m.out" 2>&1; then
        fail "checker_fails_on_$m" "the checker passed it"
    else
        pass "checker_fails_on_$m ($(grep -m1 '^FAIL' "$tmp/mut-$m.out" | cut -d' ' -f3))"
    fi
done

# ---- symbols ---------------------------------------------------------------------
for f in openmpi mpich; do
    if nm "build/$f/emitted.o" | grep -q 'cg_tag_trac'; then
        fail "tags_off_objects_name_no_trace_symbol $f"
    elif nm "build/$f/emitted_tags.o" | grep -q ' U cg_tag_tracing' &&
        nm "build/$f/emitted_tags.o" | grep -q ' U cg_tag_trace_event'; then
        pass "tags_off_objects_name_no_trace_symbol_tags_on_do $f"
    else
        fail "tags_off_objects_name_no_trace_symbol_tags_on_do $f" "tags-on objects do not reference the trace mode"
    fi
done

[ $failed -eq 0 ]
