#!/usr/bin/env bash
# tests/run_cgtune.sh - libcgtune.so (runtime/tune/, runtime/README.md "The
# tuning library"), after `ninja`.
#
#   tests/run_cgtune.sh [--quick]
#
# 1. Every collective through the preload against PMPI (tests/tune_check.c),
#    both libraries, p = 1..8, two selections per p that pick, for every
#    collective at once, its generated schedules in turn (rotation k = p - 1
#    and p + 7 over the schedules of emitted/registry.json, so each schedule
#    runs at one p at least). Even p run with CG_PPN=2 and rules with a
#    "ppn": [2, 2] range (the topology schedules run on 2-rank nodes); odd p
#    without a ppn range. Then each rank's footer (CG_TUNE_LOG with %r) must
#    hold, per collective, exactly the calls the program made, the
#    intercommunicator and datatype fallbacks it made, the non-commutative
#    and non-contiguous ones where the schedule needs that (registry.json),
#    nothing unmatched, and the rest served by the schedule.
#    --quick: p = 1, 2, 3, 4 and 8 only.
# 2. Bad selections (missing file, CG_TUNE unset, malformed JSON, unknown
#    implementation, a schedule not in the build, overlapping ranges, a
#    parameter out of its range): the message (file:line:col where there is
#    one) at MPI_Init, and every call passed to the library (footer: NOT
#    USED, all calls unmatched); CG_TUNE_STRICT=1 aborts.
# 3. native:default and native:<alg> rules pass through, counted as such;
#    CG_TUNE_MAX_BYTES sends larger calls through with reason "count".
# 4. baseline:<name> rules run the baseline (p = 3), non-contiguous
#    datatypes passed through for them.
# 5. A rule with a ppn range holds no call on an irregular communicator
#    (p = 3, CG_PPN=2); a rule without one holds them all.
set -u
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CG_MPIRUN_TIMEOUT=${CG_MPIRUN_TIMEOUT:-240}

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }

for f in openmpi mpich; do
    for x in libcgtune.so tune_check; do
        if [ ! -e "build/$f/$x" ]; then
            fail "tune_built_$f" "build/$f/$x missing (run ninja)"
            exit 1
        fi
    done
done

# make_sel LIBRARY P K PPN OUT: a selection of every collective's schedule
# number K (mod its count) at every size; PPN "": no ppn range.
make_sel() {
    python3 - "$@" <<'EOF'
import json, sys
lib, p, k, ppn, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
reg = json.load(open("emitted/registry.json"))["schedules"]
colls = ["allreduce", "allgather", "reduce_scatter_block", "bcast", "reduce", "gather",
         "scatter", "alltoall", "scan", "exscan", "barrier"]
rules, flags = [], {}
for c in colls:
    mine = sorted([s for s in reg if s["collective"] == c], key=lambda s: s["name"])
    s = mine[k % len(mine)]
    r = {"collective": c, "bytes": [0, 1 << 40], "implementation": "generated:" + s["name"]}
    if ppn:
        r["ppn"] = [int(ppn), int(ppn)]
    r["p"] = [1, 64]
    rules.append(r)
    flags[c] = (s["commutative_only"], s["contiguous_only"], s["name"])
json.dump({"schema": 1, "kind": "collgen-selection", "library": lib, "campaign": "run_tune",
           "rules": rules}, open(out, "w"), indent=1)
json.dump(flags, open(out + ".flags", "w"))
EOF
}

# check_footers OUT_OF_TUNE_CHECK FOOTER_PREFIX NP SELECTION: the footers of
# every rank against the CALLS lines; prints nothing when they agree, else
# the first difference.
check_footers() {
    python3 - "$@" <<'EOF'
import json, sys
out, prefix, np_, sel = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
flags = json.load(open(sel + ".flags"))
calls = {}
for line in open(out):
    w = line.split()
    if w and w[0] == "CALLS":
        calls[w[1]] = [int(v) for v in w[2:]]
if len(calls) != 11:
    print("no CALLS lines from tune_check"); sys.exit(0)
for r in range(np_):
    try:
        text = open(f"{prefix}{r}").read().splitlines()
    except OSError as e:
        print(f"rank {r}: no footer ({e})"); sys.exit(0)
    if not any("  used  " in l for l in text if l.startswith("# selection:")):
        print(f"rank {r}: the footer says the selection was not used"); sys.exit(0)
    rows = {}
    for l in text:
        if l.startswith("#"):
            continue
        w = l.split()
        rows.setdefault(w[0], []).append(w)
    for c, (total, inter, dtype, noncomm, vec) in calls.items():
        comm_only, contig_only, name = flags[c]
        rule = [w for w in rows.get(c, []) if w[4].startswith("generated:")]
        norule = [w for w in rows.get(c, []) if w[4] == "native:default(no-rule)"]
        if len(rule) != 1 or len(norule) != 1:
            print(f"rank {r}: {c}: rows {rows.get(c)}"); sys.exit(0)
        w = rule[0]
        want = {"intercommunicator": inter, "datatype": dtype,
                "non-commutative": noncomm if comm_only else 0,
                "non-contiguous": vec if contig_only else 0}
        got = dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in w[7].split(",")) if w[7] != "-" else {}
        want = dict((k, v) for k, v in want.items() if v)
        fb = sum(want.values())
        if w[4] != "generated:" + name or int(w[5]) != total or int(w[6]) != fb or got != want:
            print(f"rank {r}: {c} ({name}): footer calls {w[5]} fallback {w[6]} {got}; "
                  f"made {total}, expected fallback {fb} {want}"); sys.exit(0)
        if int(norule[0][5]) != 0:
            print(f"rank {r}: {c}: {norule[0][5]} calls matched no rule"); sys.exit(0)
        if total - fb <= 0 and c != "barrier":
            print(f"rank {r}: {c}: no call served by {name}"); sys.exit(0)
EOF
}

# ---- 1. every collective, both libraries, p = 1..8 ---------------------------

if [ $quick -eq 1 ]; then plist="1 2 3 4 8"; else plist="1 2 3 4 5 6 7 8"; fi
for f in openmpi mpich; do
    for p in $plist; do
        for k in $((p - 1)) $((p + 7)); do
            ppn=""
            [ $((p % 2)) -eq 0 ] && ppn=2
            d=$tmp/$f-p$p-k$k
            mkdir -p "$d"
            make_sel "$f" "$p" "$k" "$ppn" "$d/sel.json"
            CG_PPN=$ppn CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$d/sel.json \
                CG_TUNE_LOG="$d/footer.%r" CG_TUNE_STRICT=1 \
                tests/mpirun.sh "$f" "$p" "build/$f/tune_check" "${f}_k$k" >"$d/out" 2>"$d/err"
            rc=$?
            grep -E '^(PASS|FAIL) ' "$d/out"
            if [ $rc -ne 0 ]; then
                fail "tune_run_${f}_p${p}_k$k" "exit status $rc: $(head -c 600 "$d/err")"
                continue
            fi
            if grep -q '^FAIL ' "$d/out"; then
                grep '^tune_check:' "$d/err" | head -3
                echo "  selection: $(tr -d '\n ' <"$d/sel.json" | head -c 1500)"
            fi
            why=$(check_footers "$d/out" "$d/footer." "$p" "$d/sel.json")
            if [ -z "$why" ]; then
                pass "tune_footer_counts_equal_calls_${f}_p${p}_k$k"
            else
                fail "tune_footer_counts_equal_calls_${f}_p${p}_k$k" "$why"
            fi
        done
    done
done

# ---- 2. bad selections ----------------------------------------------------------

# bad_case NAME FLAVOUR SELECTION-TEXT|@unset|@missing EXPECTED-MESSAGE
bad_case() {
    local name=$1 f=$2 text=$3 want=$4 d=$tmp/bad-$1-$2 rc
    mkdir -p "$d"
    local sel=$d/sel.json
    case $text in
    @missing) sel=$d/no-such-selection.json ;;
    @unset) sel="" ;;
    *) printf '%s\n' "$text" >"$sel" ;;
    esac
    # warn and pass through: every call unmatched, results still right
    CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$sel CG_TUNE_LOG="$d/footer.%r" \
        tests/mpirun.sh "$f" 2 "build/$f/tune_check" "bad_$name" >"$d/out" 2>"$d/err"
    rc=$?
    local ok=1 why=""
    if [ $rc -ne 0 ] || grep -q '^FAIL ' "$d/out"; then
        ok=0 why="exit $rc $(grep '^FAIL ' "$d/out" | head -2)"
    elif ! grep -qF -- "$want" "$d/err"; then
        ok=0 why="message '$want' not in: $(head -c 600 "$d/err")"
    elif [ "$(grep -c 'libcgtune' "$d/err")" -lt 1 ]; then
        ok=0 why="no libcgtune line"
    elif ! grep -q 'NOT USED' "$d/footer.0"; then
        ok=0 why="the footer does not say NOT USED"
    fi
    if [ $ok -eq 1 ]; then
        # every call of the program counted as unmatched
        local made counted
        made=$(awk '$1 == "CALLS" { s += $3 } END { print s + 0 }' "$d/out")
        counted=$(awk '!/^#/ && $5 == "native:default(no-rule)" { s += $6 } END { print s + 0 }' "$d/footer.0")
        if [ "$made" != "$counted" ] || [ "$made" -eq 0 ]; then
            ok=0 why="footer counts $counted unmatched calls, the program made $made"
        fi
    fi
    if [ $ok -eq 1 ]; then pass "tune_bad_${name}_passes_through_$f"; else fail "tune_bad_${name}_passes_through_$f" "$why"; fi
    # strict: abort, with the message first
    CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$sel CG_TUNE_STRICT=1 \
        tests/mpirun.sh "$f" 2 "build/$f/tune_check" "strict_$name" >"$d/sout" 2>"$d/serr"
    rc=$?
    if [ $rc -eq 3 ] && grep -qF -- "$want" "$d/serr" && grep -q 'CG_TUNE_STRICT=1: aborting (exit status 3)' "$d/serr" &&
        ! grep -q '^PASS ' "$d/sout"; then
        pass "tune_bad_${name}_strict_aborts_$f"
    else
        fail "tune_bad_${name}_strict_aborts_$f" "exit $rc: $(head -c 400 "$d/serr")"
    fi
}

head_ok='{ "schema": 1, "kind": "collgen-selection", "library": "LIB", "rules": ['
for f in openmpi mpich; do
    h=${head_ok/LIB/$f}
    bad_case missing "$f" @missing "no-such-selection.json: error: cannot read: No such file or directory"
    bad_case unset "$f" @unset "CG_TUNE is not set"
    bad_case malformed "$f" "$h
  { \"collective\": \"allreduce\", \"bytes\": [0, 10] \"implementation\": \"native:default\" } ] }" "sel.json:2:"
    bad_case unknown_impl "$f" "$h
  { \"collective\": \"allreduce\", \"bytes\": [0, 10],
    \"implementation\": \"magic:fast\" } ] }" "sel.json:3:23: error: unknown implementation 'magic:fast'"
    bad_case not_in_build "$f" "$h
  { \"collective\": \"allreduce\", \"bytes\": [0, 10], \"implementation\": \"generated:allreduce_nosuch\" } ] }" \
        "sel.json:2:68: error: 'generated:allreduce_nosuch' is not built into this libcgtune.so"
    bad_case overlap "$f" "$h
  { \"collective\": \"bcast\", \"p\": [2, 8], \"bytes\": [0, 4095], \"implementation\": \"generated:bcast_chain\" },
  { \"collective\": \"bcast\", \"p\": [1, 2], \"bytes\": [4000, 9000], \"implementation\": \"generated:bcast_knomial\" } ] }" \
        "sel.json:3:3: error: this bcast rule (generated:bcast_knomial) overlaps the one at line 2 (generated:bcast_chain)"
    bad_case param_range "$f" "$h
  { \"collective\": \"bcast\", \"bytes\": [0, 10], \"implementation\": \"generated:bcast_knomial\", \"params\": { \"radix\": 99 } } ] }" \
        "parameter 'radix' (verified 2..8) = 99 is out of range"
    bad_case wrong_collective "$f" "$h
  { \"collective\": \"allreduce\", \"bytes\": [0, 10], \"implementation\": \"generated:bcast_chain\" } ] }" \
        "'generated:bcast_chain' is a bcast implementation; the rule is for allreduce"
done

# ---- 3. native rules and the byte limit ------------------------------------------

for f in openmpi mpich; do
    d=$tmp/native-$f
    mkdir -p "$d"
    cat >"$d/sel.json" <<EOF
{ "schema": 1, "kind": "collgen-selection", "library": "$f", "rules": [
  { "collective": "allreduce", "bytes": [0, 1099511627776], "implementation": "native:default" },
  { "collective": "bcast", "bytes": [0, 1099511627776], "implementation": "native:binomial" },
  { "collective": "allgather", "bytes": [0, 1099511627776], "implementation": "generated:allgather_ring" } ] }
EOF
    CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$d/sel.json CG_TUNE_LOG="$d/footer.%r" \
        CG_TUNE_MAX_BYTES=200 tests/mpirun.sh "$f" 3 "build/$f/tune_check" "native_$f" >"$d/out" 2>"$d/err"
    rc=$?
    grep -E '^(PASS|FAIL) ' "$d/out" | sed 's/^/  /'
    why=$(python3 - "$d/out" "$d/footer.0" <<'EOF'
import sys
calls = {l.split()[1]: [int(v) for v in l.split()[2:]] for l in open(sys.argv[1]) if l.startswith("CALLS")}
rows = {}
for l in open(sys.argv[2]):
    if not l.startswith("#"):
        w = l.split(); rows[(w[0], w[4])] = w
ar = rows.get(("allreduce", "native:default"))
bc = rows.get(("bcast", "native:binomial"))
ag = rows.get(("allgather", "generated:allgather_ring"))
if not (ar and bc and ag):
    print("rows missing:", list(rows)); sys.exit()
if int(ar[5]) != calls["allreduce"][0] or ar[6] != "0":
    print("native:default row", ar, "made", calls["allreduce"]); sys.exit()
if int(bc[5]) != calls["bcast"][0] or bc[7] != f"native-alg={calls['bcast'][0]}":
    print("native:binomial row", bc, "made", calls["bcast"]); sys.exit()
# allgather at p = 3: counts 0, 1, 5 of int (<= 60 bytes) served, 64 and 1000 over 200 bytes
reasons = dict(kv.split("=") for kv in ag[7].split(","))
if "count" not in reasons or int(reasons["count"]) < 8 or int(ag[5]) != calls["allgather"][0]:
    print("allgather row", ag, "made", calls["allgather"]); sys.exit()
EOF
)
    if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$d/out" && [ -z "$why" ] &&
        grep -q "note: 'native:binomial' is not switchable per call" "$d/err"; then
        pass "tune_native_rules_and_max_bytes_$f"
    else
        fail "tune_native_rules_and_max_bytes_$f" "exit $rc $why $(head -c 300 "$d/err")"
    fi
done

# ---- 4. baselines: run, and non-contiguous datatypes passed through ----------------

for f in openmpi mpich; do
    d=$tmp/baseline-$f
    mkdir -p "$d"
    cat >"$d/sel.json" <<EOF
{ "schema": 1, "kind": "collgen-selection", "library": "$f", "rules": [
  { "collective": "allreduce", "bytes": [0, 1099511627776], "implementation": "baseline:allreduce_recursive_doubling" },
  { "collective": "bcast", "bytes": [0, 1099511627776], "implementation": "baseline:bcast_binomial" },
  { "collective": "allgather", "bytes": [0, 1099511627776], "implementation": "baseline:allgather_bruck" } ] }
EOF
    CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$d/sel.json CG_TUNE_LOG="$d/footer.%r" CG_TUNE_STRICT=1 \
        tests/mpirun.sh "$f" 3 "build/$f/tune_check" "baseline_$f" >"$d/out" 2>"$d/err"
    rc=$?
    grep -E '^(PASS|FAIL) ' "$d/out" | grep -E 'allreduce|bcast|allgather'
    grep '^tune_check:' "$d/err" | head -3
    why=$(python3 - "$d/out" "$d/footer.0" <<'EOF'
import sys
calls = {l.split()[1]: [int(v) for v in l.split()[2:]] for l in open(sys.argv[1]) if l.startswith("CALLS")}
n = 0
for l in open(sys.argv[2]):
    if l.startswith("#"):
        continue
    w = l.split()
    if not w[4].startswith("baseline:"):
        continue
    n += 1
    total, inter, dtype, noncomm, vec = calls[w[0]]
    want = {"intercommunicator": inter, "datatype": dtype, "non-contiguous": vec}
    want = {k: v for k, v in want.items() if v}
    got = dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in w[7].split(",")) if w[7] != "-" else {}
    if int(w[5]) != total or got != want or int(w[5]) - int(w[6]) <= 0:
        print(w[0], w[4], "footer", w[5], w[6], got, "made", total, want); break
if n != 3:
    print("baseline rows:", n)
EOF
)
    if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$d/out" && [ -z "$why" ]; then
        pass "tune_baselines_run_and_footer_$f"
    else
        fail "tune_baselines_run_and_footer_$f" "exit $rc $why"
    fi
done

# ---- 5. ppn ranges on an irregular communicator ------------------------------------
# p = 3 with CG_PPN=2: nodes of 2 and 1 ranks, not regular, so a rule with a
# ppn range holds none of its calls and one without holds them all.

for f in openmpi mpich; do
    d=$tmp/irregular-$f
    mkdir -p "$d"
    cat >"$d/sel.json" <<EOF
{ "schema": 1, "kind": "collgen-selection", "library": "$f", "rules": [
  { "collective": "allreduce", "ppn": [1, 64], "bytes": [0, 1099511627776], "implementation": "generated:allreduce_recursive_doubling" },
  { "collective": "bcast", "bytes": [0, 1099511627776], "implementation": "generated:bcast_binomial_halving" } ] }
EOF
    CG_PPN=2 CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$d/sel.json CG_TUNE_LOG="$d/footer.%r" \
        tests/mpirun.sh "$f" 3 "build/$f/tune_check" "irregular_$f" >"$d/out" 2>"$d/err"
    rc=$?
    ar_made=$(awk '$1 == "CALLS" && $2 == "allreduce" { print $3 }' "$d/out")
    ar_inter=$(awk '$1 == "CALLS" && $2 == "allreduce" { print $4 }' "$d/out")
    bc_made=$(awk '$1 == "CALLS" && $2 == "bcast" { print $3 }' "$d/out")
    ok=1
    for r in 0 1 2; do
        # the intercommunicator's call matches any ppn (and passes through)
        ar_rule=$(awk '!/^#/ && $1 == "allreduce" && $5 ~ /^generated:/ { print $6 }' "$d/footer.$r")
        ar_norule=$(awk '!/^#/ && $1 == "allreduce" && $5 == "native:default(no-rule)" { print $6 }' "$d/footer.$r")
        bc_rule=$(awk '!/^#/ && $1 == "bcast" && $5 ~ /^generated:/ { print $6 }' "$d/footer.$r")
        if [ "${ar_rule:-x}" != "${ar_inter:-y}" ] || [ "${ar_norule:-x}" != "$((${ar_made:-0} - ${ar_inter:-0}))" ] ||
            [ "${bc_rule:-x}" != "${bc_made:-y}" ]; then
            ok=0
        fi
    done
    if [ $rc -eq 0 ] && ! grep -q '^FAIL' "$d/out" && [ $ok -eq 1 ]; then
        pass "tune_ppn_rule_holds_no_irregular_call_$f"
    else
        fail "tune_ppn_rule_holds_no_irregular_call_$f" "exit $rc; allreduce made $ar_made (inter $ar_inter): rule $ar_rule, no rule $ar_norule; bcast made $bc_made: rule $bc_rule"
    fi
done

# ---- the demo applications, unmodified, with and without the preload ------------------
# harness/apps/: the same binary's stdout byte for byte with and without
# libcgtune.so, and the footer shows that the selection's generated schedules
# served the app's calls (every allreduce and allgather, none passed through).
# cg_app at p = 2 (two addends: any order gives the same doubles), deposit_app
# at p = 3 (whole-number sums: exact in any order).
for f in openmpi mpich; do
    d=$tmp/apps-$f
    mkdir -p "$d"
    cat >"$d/sel.json" <<EOF
{ "schema": 1, "kind": "collgen-selection", "library": "$f", "rules": [
  { "collective": "allreduce", "bytes": [0, 1099511627776], "implementation": "generated:allreduce_ring" },
  { "collective": "allgather", "bytes": [0, 1099511627776], "implementation": "generated:allgather_ring" } ] }
EOF
    for app in "cg_app 2 32 60" "deposit_app 3 5000 3000 12"; do
        set -- $app
        name=$1 np=$2
        shift 2
        tests/mpirun.sh "$f" "$np" "build/$f/$name" "$@" >"$d/$name.plain" 2>"$d/$name.plain.err"
        rc1=$?
        CG_PRELOAD=$PWD/build/$f/libcgtune.so CG_TUNE=$d/sel.json CG_TUNE_LOG="$d/$name.footer" \
            tests/mpirun.sh "$f" "$np" "build/$f/$name" "$@" >"$d/$name.tuned" 2>"$d/$name.tuned.err"
        rc2=$?
        gen=$(awk '!/^#/ && $5 ~ /^generated:/ { s += $6 } END { print s + 0 }' "$d/$name.footer" 2>/dev/null)
        other=$(awk '!/^#/ && ($1 == "allreduce" || $1 == "allgather") && $5 !~ /^generated:/ { s += $6 } END { print s + 0 }' "$d/$name.footer" 2>/dev/null)
        if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s "$d/$name.plain" ] && cmp -s "$d/$name.plain" "$d/$name.tuned" &&
            [ "${gen:-0}" -gt 0 ] && [ "${other:-1}" -eq 0 ]; then
            pass "tune_app_${name}_identical_through_the_preload_$f ($gen calls generated)"
        else
            fail "tune_app_${name}_identical_through_the_preload_$f" "exit $rc1/$rc2, generated $gen, other $other, $(cmp "$d/$name.plain" "$d/$name.tuned" 2>&1 | head -1)"
        fi
    done
done
