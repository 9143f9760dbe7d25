#!/usr/bin/env bash
# tests/run_tune.sh - tests of `collgen tune` and its exports, each proven by
# the library that reads it (harness/README.md, "collgen tune").
#
#   synthetic   tests/tune/make_synth.py writes a campaign with a known best
#               per cell and faster records that must never win (failed
#               check, below the latency floor, ran another algorithm, ran
#               in a launch with a 4x faster transport than the default's);
#               tests/tune/check_tune.py checks every held-out cell, every
#               score recomputed, the default's known 2x regret, the exact
#               tree, the totals of the seed, the selection files (format,
#               hash, ranges that cover every call once and agree with the
#               tree), the split (same seed same split, another seed another);
#               --switchable-only (no forced native algorithm, no export);
#               collgen compare lists a point whose launches' transport
#               differed (launch_skewed)
#   profile     profile.json is collgen report's, byte for byte
#   schema 1    collgen report's fixture (records of schema 1): the selections
#   Open MPI    the rules file's algorithm numbers are ompi_info's; a run of
#               tests/tune/probe.c under the file with the spy
#               build/openmpi/tune_spy.so at 5792 and 5800 B (the two sides
#               of the boundary) logs recursivedoubling and ring, and without
#               the file recursivedoubling at both (the file made the change);
#               bcast, reduce, alltoall and barrier (make_synth.py --exports):
#               the file's algorithm on both sides of each of its boundaries
#               on every rank (tests/tune/spy_plan.py), another without it
#   MPICH       the CSEL file under MPICH 4.0.2: a commutative user op counts
#               its calls per rank, the fingerprint of the algorithm:
#               recursive_doubling (2,2,2,2) at 5792 B, smp (2,0,1,0) at
#               5800 B; without the file 2,2,2,2 at both; a non-commutative
#               op above the boundary still exact (the guards)
#   NCCL        build/nccl/libcgtune_nccl.so loaded as NCCL 2.28 loads a
#               tuner (tests/tune/nccl_tuner_load.c): the CSV's algorithm on
#               both sides of its boundary, NCCL's own choice where no row
#               applies, bad CSV and no CSV refused with a message
#   real        a campaign measured here (tests/descriptors/tune-real.json,
#               about 2 min on 2 busy cores): each held-out cell's best
#               recomputed from points.jsonl, the scores recomputed
#   bad input   not a directory, no points.jsonl, an empty one, one without
#               a valid record, a malformed line: an error, no output
#
# One line per case, "PASS tune <name>" / "FAIL tune <name>". Exit 0 when
# every case passed. Needs `ninja` (build/collgen, the probes, the spy and
# the plugin). CG_TUNE_REAL=0 skips the measured campaign.
set -u
cd "$(dirname "$0")/.."

collgen=build/collgen
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS tune $1"; }
fail() {
    echo "FAIL tune $1${2:+ ($2)}"
    failed=$((failed + 1))
}
check() { # check NAME COMMAND...
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}
pyrun() { # pyrun ARGS...: check_tune.py, its lines counted here
    local out rc
    out=$(/usr/bin/python3 tests/tune/check_tune.py "$@" 2>&1)
    rc=$?
    echo "$out"
    failed=$((failed + $(grep -c '^FAIL ' <<<"$out")))
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then
        fail "check_tune_$1" "exit $rc"
    fi
}

for f in "$collgen" build/openmpi/tune_probe build/mpich/tune_probe build/openmpi/tune_spy.so \
    build/nccl/libcgtune_nccl.so build/tests/nccl_tuner_load; do
    [ -x "$f" ] || [ -f "$f" ] || {
        fail "built" "$f missing: run ninja"
        exit 1
    }
done

# ---- the synthetic campaign -------------------------------------------------
syn=$tmp/tune-synth
/usr/bin/python3 tests/tune/make_synth.py "$syn"
if "$collgen" tune -q "$syn" >"$tmp/syn.out" 2>"$tmp/syn.err"; then
    pass "synth_runs"
else
    fail "synth_runs" "$(head -3 "$tmp/syn.err")"
fi
pyrun synth "$syn" "$syn/tune"
pyrun selection "$syn" "$syn/tune"
"$collgen" tune -q "$syn" --out "$tmp/again" 2>/dev/null
check "synth_split_deterministic" cmp -s "$syn/tune/dispatcher.json" "$tmp/again/dispatcher.json"
"$collgen" tune -q "$syn" --seed 7 --out "$tmp/seed7" 2>/dev/null
held() { /usr/bin/python3 -c 'import json,sys; print([[(c["p"],c["bytes"]) for c in g["held_out"]] for g in json.load(open(sys.argv[1]))["groups"]])' "$1"; }
if [ -f "$tmp/seed7/dispatcher.json" ] && [ "$(held "$syn/tune/dispatcher.json")" != "$(held "$tmp/seed7/dispatcher.json")" ]; then
    pass "synth_other_seed_other_split"
else
    fail "synth_other_seed_other_split"
fi
check "synth_dispatcher_readable" grep -q "if bytes <= 5792:" "$syn/tune/dispatcher.txt"
# The launch-skew check: native:segmented_ring is 0.03 of the default in
# every openmpi allreduce cell (54), measured in a launch whose transport was
# 4x faster; it never counts, and counts (wins everywhere) without the check.
check "synth_launch_skew_never_wins" grep -q "54 ran in a launch whose transport" "$syn/tune/dispatcher.txt"
"$collgen" tune -q "$syn" --max-launch-skew 0 --out "$tmp/noskew" 2>/dev/null
ar_rules() { /usr/bin/python3 -c 'import json,sys; print(sorted({r["implementation"] for r in json.load(open(sys.argv[1]))["rules"] if r["collective"] == "allreduce"}))' "$1"; }
if [ "$(ar_rules "$tmp/noskew/selection-openmpi.json")" = "['native:segmented_ring']" ] &&
    ! grep -q segmented_ring "$syn/tune/selection-openmpi.json"; then
    pass "synth_launch_skew_check_off_it_wins"
else
    fail "synth_launch_skew_check_off_it_wins" "$(ar_rules "$tmp/noskew/selection-openmpi.json")"
fi
# --switchable-only: what libcgtune can run per call, so no forced native
# algorithm in the selection and no library export.
"$collgen" tune -q "$syn" --switchable-only --out "$tmp/sw" 2>/dev/null
impls() { /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted({r["implementation"] for f in sys.argv[1:] for r in json.load(open(f))["rules"]})))' "$@"; }
sw=$(impls "$tmp"/sw/selection-*.json 2>&1)
if [ -n "$sw" ] && [ -z "$(tr ' ' '\n' <<<"$sw" | grep '^native:' | grep -vx 'native:default')" ] && [ ! -e "$tmp/sw/openmpi-coll_tuned.rules" ] &&
    grep -q "generated:allreduce_reduce_bcast" <<<"$sw"; then
    pass "synth_switchable_only"
else
    fail "synth_switchable_only" "$sw"
fi
# collgen compare lists a point whose two launches' transport differed by
# more than 1.5x (the same campaign, one record's roofline.p2p_ns made 4x
# smaller in NEW), and no other.
cp -r "$syn" "$tmp/cmpa" && rm -rf "$tmp/cmpa/tune" && cp -r "$tmp/cmpa" "$tmp/cmpb"
/usr/bin/python3 - "$tmp/cmpb/points.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
for r in lines:
    if r["point_id"] == "allreduce-openmpi-p4-q4-native_ring-double-sum-r0-ip0-65536B":
        r["roofline"]["p2p_ns"] /= 4
open(sys.argv[1], "w").write("".join(json.dumps(r, sort_keys=True) + "\n" for r in lines))
EOF
"$collgen" compare "$tmp/cmpa" "$tmp/cmpb" --no-plots --quiet --out "$tmp/cmpout" >/dev/null 2>&1
skew=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(p["point_id"] for p in json.load(open(sys.argv[1]))["points"] if p["launch_skewed"]))' "$tmp/cmpout/compare.json" 2>&1)
if [ "$skew" = "allreduce-openmpi-p4-q4-native_ring-double-sum-r0-ip0-65536B" ] &&
    grep -q "^Points whose launches' transport differed" "$tmp/cmpout/compare.txt"; then
    pass "compare_lists_launch_skewed_points"
else
    fail "compare_lists_launch_skewed_points" "$skew"
fi
check "synth_dispatcher_md_table" grep -q "| dispatcher (tree) " "$syn/tune/dispatcher.md"

# The profile is the report's own.
cp -r "$syn" "$tmp/rep"
rm -rf "$tmp/rep/tune"
"$collgen" report --no-plots --quiet "$tmp/rep" >/dev/null 2>&1
check "profile_is_the_reports" cmp -s "$syn/tune/profile.json" "$tmp/rep/profile.json"

# Records of schema 1 (tests/report/campaign, collgen report's fixture).
cp -r tests/report/campaign "$tmp/schema1"
if "$collgen" tune -q "$tmp/schema1" 2>"$tmp/s1.err"; then
    pass "schema1_runs"
    pyrun selection "$tmp/schema1" "$tmp/schema1/tune"
else
    fail "schema1_runs" "$(head -2 "$tmp/s1.err")"
fi

# ---- Open MPI: the rules file -------------------------------------------------
rules=$syn/tune/openmpi-coll_tuned.rules
ompi_info --param coll tuned --level 9 >"$tmp/ompi_info" 2>&1
if /usr/bin/python3 - "$rules" "$tmp/ompi_info" <<'EOF'; then
import re, sys
rules, info = open(sys.argv[1]).read(), open(sys.argv[2]).read()
coll, bad, n = None, [], 0
for line in rules.splitlines():
    m = re.match(r"^\d+\s+#\s+(\w+)$", line)
    if m and m.group(1) not in ("collectives", "communicator", "message"):
        coll = m.group(1)
    m = re.match(r"^\d+ (\d+) 0 0\s+# from \d+ bytes: (\w+)$", line)
    if m and m.group(1) != "0":
        n += 1
        p = re.search(r'"coll_tuned_%s_algorithm".*?Valid values: ([^\n]*)' % coll, info, re.S)
        if p is None or ('%s:"%s"' % (m.group(1), m.group(2))) not in p.group(1):
            bad.append("%s %s=%s" % (coll, m.group(1), m.group(2)))
print("\n".join(bad))
sys.exit(0 if n >= 3 and not bad else 1)
EOF
    pass "ompi_rules_numbers_are_ompi_infos"
else
    fail "ompi_rules_numbers_are_ompi_infos"
fi
spy() { # spy LOG [ENV...]: the probe at 5792 and 5800 B under the spy
    local log=$1
    shift
    rm -f "$log"
    env "$@" CG_SPY_LOG="$log" LD_PRELOAD="$PWD/build/openmpi/tune_spy.so" \
        nice tests/mpirun.sh openmpi 4 build/openmpi/tune_probe sum 724 725 >"$log.out" 2>&1
}
spy "$tmp/spy1" OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename="$rules"
sort "$tmp/spy1" | uniq -c | sed 's/^ */    /'
if [ "$(grep -c '^allreduce recursivedoubling count=724$' "$tmp/spy1")" = 4 ] &&
    [ "$(grep -c '^allreduce ring count=725$' "$tmp/spy1")" = 4 ] &&
    [ "$(grep -c '^allreduce ' "$tmp/spy1")" = 8 ] && [ "$(grep -c ' exact$' "$tmp/spy1.out")" = 2 ]; then
    pass "ompi_rules_both_sides_of_the_boundary"
else
    fail "ompi_rules_both_sides_of_the_boundary" "$(tr '\n' ' ' <"$tmp/spy1.out" | head -c 300)"
fi
spy "$tmp/spy0"
if [ "$(grep -c '^allreduce recursivedoubling count=72[45]$' "$tmp/spy0")" = 8 ]; then
    pass "ompi_without_rules_no_ring"
else
    fail "ompi_without_rules_no_ring" "$(sort "$tmp/spy0" | uniq -c | tr '\n' ' ')"
fi

# Every other collective the rules file can name (bcast, reduce, alltoall,
# barrier; harness/tune_export.c): tests/tune/make_synth.py --exports, and
# the probe on both sides of each boundary of the file (spy_plan.py), all in
# one launch at 4 ranks and one at 2 (barrier's rule is by ranks).
synx=$tmp/tune-synx
/usr/bin/python3 tests/tune/make_synth.py --exports "$synx"
"$collgen" tune -q "$synx" 2>"$tmp/synx.err" || fail "exports_synth_runs" "$(head -2 "$tmp/synx.err")"
xrules=$synx/tune/openmpi-coll_tuned.rules
spyx() { # spyx NP LOG PLAN [ENV...]: the plan's calls under the spy
    local np=$1 log=$2 plan=$3
    shift 3
    rm -f "$log"
    env "$@" CG_SPY_LOG="$log" LD_PRELOAD="$PWD/build/openmpi/tune_spy.so" \
        nice tests/mpirun.sh openmpi "$np" build/openmpi/tune_probe sum \
        $(awk '{ print $1 ":" ($2 > 0 ? $2 : 1) }' "$plan") >"$log.out" 2>&1
}
for np in 4 2; do
    /usr/bin/python3 tests/tune/spy_plan.py "$xrules" "$np" >"$tmp/plan$np"
    [ "$np" = 2 ] && grep '^barrier ' "$tmp/plan2" >"$tmp/plan2b" && mv "$tmp/plan2b" "$tmp/plan2"
    spyx "$np" "$tmp/spyx$np" "$tmp/plan$np" OMPI_MCA_coll_tuned_use_dynamic_rules=1 \
        OMPI_MCA_coll_tuned_dynamic_rules_filename="$xrules"
    # Without the file: at 4 ranks only (at 2, coll_tuned's own barrier is
    # recursivedoubling, not tree; a launch saved).
    [ "$np" = 4 ] && spyx "$np" "$tmp/spyx0$np" "$tmp/plan$np"
    sed "s/^/    p=$np: /" "$tmp/plan$np"
    missing="" unchanged=""
    while read -r coll count alg; do
        line="$coll $alg count=$count"
        # Every rank runs the algorithm the file names; without the file
        # coll_tuned's own decision runs something else.
        [ "$(grep -cx "$line" "$tmp/spyx$np")" = "$np" ] || missing="$missing; $line"
        [ "$np" != 4 ] || ! grep -qx "$line" "$tmp/spyx0$np" || unchanged="$unchanged; $line"
    done <"$tmp/plan$np"
    ncalls=$(wc -l <"$tmp/plan$np")
    if [ -z "$missing" ] && [ "$(grep -c ' exact$' "$tmp/spyx$np.out")" = "$ncalls" ] &&
        [ "$(cut -d' ' -f1 "$tmp/plan$np" | sort -u | wc -l)" -ge $([ "$np" = 4 ] && echo 4 || echo 1) ]; then
        pass "ompi_rules_every_collective_p$np"
    else
        fail "ompi_rules_every_collective_p$np" "missing${missing:- none}; $(tr '\n' ' ' <"$tmp/spyx$np.out" | head -c 200)"
    fi
    if [ "$np" = 4 ] && [ -z "$unchanged" ]; then
        pass "ompi_without_rules_other_algorithms_p$np"
    elif [ "$np" = 4 ]; then
        fail "ompi_without_rules_other_algorithms_p$np" "$unchanged"
    fi
done

# ---- MPICH: the CSEL JSON -------------------------------------------------------
csel=$syn/tune/mpich-csel.json
mp() { # mp OUT MODE COUNTS [ENV...]
    local out=$1 mode=$2 counts=$3
    shift 3
    # Why DEVICE_COLLECTIVE=0: the MPIR-level selection decides only when
    # ch4 passes the call on (harness/README.md, "collgen tune").
    env "$@" MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE=0 \
        nice tests/mpirun.sh mpich 4 build/mpich/tune_probe "$mode" $counts >"$out" 2>&1
}
mp "$tmp/mp1" opcalls "724 725" MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$csel"
sed 's/^/    /' "$tmp/mp1"
if grep -q '^opcalls count=724 bytes=5792 calls=2,2,2,2 exact$' "$tmp/mp1" &&
    grep -q '^opcalls count=725 bytes=5800 calls=2,0,1,0 exact$' "$tmp/mp1"; then
    pass "mpich_csel_both_sides_of_the_boundary"
else
    fail "mpich_csel_both_sides_of_the_boundary" "$(tr '\n' ' ' <"$tmp/mp1" | head -c 300)"
fi
mp "$tmp/mp0" opcalls "724 725"
if [ "$(grep -c '^opcalls count=72[45] bytes=[0-9]* calls=2,2,2,2 exact$' "$tmp/mp0")" = 2 ]; then
    pass "mpich_without_csel_recursive_doubling"
else
    fail "mpich_without_csel_recursive_doubling" "$(tr '\n' ' ' <"$tmp/mp0" | head -c 300)"
fi
mp "$tmp/mp2" noncomm "182 1024" MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$csel"
if [ "$(grep -c '^noncomm count=[0-9]* bytes=[0-9]* exact$' "$tmp/mp2")" = 2 ]; then
    pass "mpich_csel_guard_keeps_user_ops_exact"
else
    fail "mpich_csel_guard_keeps_user_ops_exact" "$(tr '\n' ' ' <"$tmp/mp2" | head -c 300)"
fi

# ---- NCCL: the tuner plugin -------------------------------------------------------
csv=$syn/tune/nccl-tuner.csv
load() { CG_TUNE_NCCL=$1 build/tests/nccl_tuner_load build/nccl/libcgtune_nccl.so "${@:2}" 2>&1; }
out=$(load "$csv" 16 2 allreduce 1024 1482910 1482911 67108864)
echo "$out" | sed 's/^/    /'
if [ "$out" = "plugin collgen
allreduce 1024 -> tree/simple channels=-1
allreduce 1482910 -> tree/simple channels=-1
allreduce 1482911 -> ring/simple channels=-1
allreduce 67108864 -> ring/simple channels=-1" ]; then
    pass "nccl_plugin_both_sides_of_the_boundary"
else
    fail "nccl_plugin_both_sides_of_the_boundary"
fi
check "nccl_plugin_no_row_nccls_choice" grep -q "^bcast 1024 -> pat/simple channels=-1$" <<<"$(load "$csv" 8 1 bcast 1024)"
printf 'collective,min_bytes,max_bytes,min_nodes,max_nodes,min_ranks,max_ranks,algorithm,protocol,channels\nallreduce,0,100,1,1,2,4,ring,ll128,4\n' >"$tmp/small.csv"
check "nccl_plugin_protocol_and_channels" grep -q "^allreduce 64 -> ring/ll128 channels=4$" <<<"$(load "$tmp/small.csv" 4 1 allreduce 64)"
check "nccl_plugin_other_communicator_nccls_choice" grep -q "^allreduce 64 -> pat/simple channels=-1$" <<<"$(load "$tmp/small.csv" 8 1 allreduce 64)"
printf 'allreduce,0,100,1,1,2,4,rings,ll,4\n' >"$tmp/bad.csv"
out=$(load "$tmp/bad.csv" 4 1 allreduce 64)
if grep -q "bad.csv:1:25: error: unknown algorithm" <<<"$out" && grep -q "^init failed" <<<"$out"; then
    pass "nccl_plugin_bad_csv_refused"
else
    fail "nccl_plugin_bad_csv_refused" "$out"
fi
check "nccl_plugin_no_csv_refused" grep -q "^init failed" <<<"$(load "" 4 1 allreduce 64)"

# ---- bad input ------------------------------------------------------------------------
bad() { # bad NAME DIR PATTERN: collgen tune DIR fails with PATTERN, writes nothing
    local name=$1 dir=$2 pat=$3 rc=0
    "$collgen" tune "$dir" --out "$tmp/out-$name" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    if [ "$rc" = 2 ] && grep -q -- "$pat" "$tmp/$name.err" && [ ! -e "$tmp/out-$name" ]; then
        pass "bad_$name"
    else
        fail "bad_$name" "rc=$rc: $(head -2 "$tmp/$name.err")"
    fi
}
bad not_a_directory "$tmp/nowhere" "not a campaign directory"
mkdir -p "$tmp/nopoints"
bad no_points "$tmp/nopoints" "nopoints/points.jsonl"
mkdir -p "$tmp/empty" && : >"$tmp/empty/points.jsonl"
bad empty "$tmp/empty" "empty campaign"
mkdir -p "$tmp/allbad"
grep '"status": "failed_check"' "$syn/points.jsonl" >"$tmp/allbad/points.jsonl"
bad nothing_valid "$tmp/allbad" "nothing to tune"
mkdir -p "$tmp/malformed"
{ head -2 "$syn/points.jsonl"; echo '{"schema_version": 2,'; } >"$tmp/malformed/points.jsonl"
bad malformed "$tmp/malformed" "malformed/points.jsonl:3:"
rc=0
"$collgen" tune "$syn" --seed -1 >/dev/null 2>"$tmp/seed.err" || rc=$?
check "bad_seed" test "$rc" = 2 -a -s "$tmp/seed.err"
rc=0
"$collgen" tune "$syn" --max-launch-skew 0.5 --out "$tmp/skew-bad" >/dev/null 2>"$tmp/skew.err" || rc=$?
check "bad_max_launch_skew" test "$rc" = 2 -a ! -e "$tmp/skew-bad" -a -s "$tmp/skew.err"

# ---- a real campaign ---------------------------------------------------------------------
if [ "${CG_TUNE_REAL:-1}" != 0 ]; then
    real=$tmp/tune-real
    if nice "$collgen" run tests/descriptors/tune-real.json --out "$real" --quiet --no-report \
        >"$tmp/real.out" 2>&1 && "$collgen" tune -q "$real" 2>"$tmp/real.err"; then
        pass "real_runs"
        pyrun real "$real" "$real/tune"
        pyrun selection "$real" "$real/tune"
    else
        fail "real_runs" "$(tail -3 "$tmp/real.out" "$tmp/real.err" | tr '\n' ' ')"
    fi
fi

[ "$failed" -eq 0 ]
