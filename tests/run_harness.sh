#!/usr/bin/env bash
# tests/run_harness.sh - tests of `collgen run`, the campaign runner
# (harness/run*.c, harness/descriptor.c, descriptors/).
#
#   tests/descriptors/bad/<case>.json     one broken descriptor per check;
#   tests/descriptors/bad/<case>.args     optional: the arguments instead of
#                                         the file (bad platforms, --platform)
#   tests/descriptors/bad/<case>.err.expected
#                                         the exact stderr of
#                                         `build/collgen run --dry-run <args>`,
#                                         which must exit 2
#   tests/descriptors/slurm.json          a test for the Slurm example, and
#   tests/descriptors/slurm.dryrun.expected
#                                         its exact --dry-run (batch scripts)
#   tests/descriptors/sweep.json          a parameter sweep, node shapes and
#   tests/descriptors/sweep.dryrun.expected  micro-benchmarks, and its exact
#                                         --dry-run, planned against the
#                                         fixture schedules of
#                                         tests/descriptors/schedules/, emitted
#                                         into build/tests/descriptors/ first
#                                         (collgen run --registry)
#
# Then: every good descriptor validates; the algorithm tables of
# descriptors/platforms/local.json agree with ompi_info and mpivars; the
# runner's time-out, wrong-launcher and pre-flight paths (with launchers made
# up here, no bench needed); and, once build/<lib>/bench exists, a tiny real
# campaign checked record by record, a campaign killed with SIGKILL and
# resumed (every point exactly once), and a real job that times out.
#
# One line per case: "PASS harness <name>", "FAIL harness <name> (why)" or
# "SKIP harness <name> (why)"; tests/run_all.sh counts PASS and FAIL.
# `UPDATE=1 tests/run_harness.sh` rewrites the goldens instead of comparing.
# Everything runs from the repository root with relative paths, since paths
# appear in diagnostics. No timing assertions. Exit status: 0 when nothing
# failed.
set -u
cd "$(dirname "$0")/.."

collgen=build/collgen
update=${UPDATE:-0}
failed=0
tmp=$(mktemp -d)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
cleanup() {
    rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "PASS harness $1"; }
fail() {
    echo "FAIL harness $1${2:+ ($2)}"
    failed=$((failed + 1))
}
skip() { echo "SKIP harness $1 ($2)"; }

# golden EXPECTED ACTUAL: 0 same (or rewritten with UPDATE=1), 2 missing, 1 differs.
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

if [ ! -x "$collgen" ]; then
    fail collgen_is_built "$collgen is missing: run ninja"
    exit 1
fi

# The fixture schedules' registry, written by the generator as emitted/'s is:
# the harness reads registries, never schedules (the .args of params_*).
fixture_registry=build/tests/descriptors/registry.json
if ! "$collgen" emit -q --out build/tests/descriptors tests/descriptors/schedules/bcast/*.json; then
    fail fixture_registry "collgen emit of tests/descriptors/schedules/ failed"
fi

# ---- bad descriptors: exit status 2 and the exact diagnostics ----------------

nbad=0
for json in tests/descriptors/bad/*.json; do
    [ -e "$json" ] || continue
    name=$(basename "$json" .json)
    base=tests/descriptors/bad/$name
    nbad=$((nbad + 1))
    if [ -f "$base.args" ]; then
        read -r -a args <"$base.args"
    else
        args=("$json")
    fi
    timeout 60 "$collgen" run --dry-run "${args[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    why=
    golden "$base.err.expected" "$tmp/$name.err"
    case $? in
    0) ;;
    2) why="no .err.expected" ;;
    *) why="diagnostics differ" ;;
    esac
    [ "$rc" -eq 2 ] || why="exit status $rc, expected 2"
    [ -s "$tmp/$name.out" ] && why="printed a plan: $(head -1 "$tmp/$name.out")"
    if [ -z "$why" ]; then
        pass "bad_$name"
    else
        fail "bad_$name" "$why"
    fi
done
if [ "$nbad" -ge 12 ]; then
    pass "bad_descriptor_cases_at_least_12 ($nbad)"
else
    fail bad_descriptor_cases_at_least_12 "only $nbad"
fi
for f in tests/descriptors/bad/*.err.expected tests/descriptors/bad/*.args; do
    [ -e "$f" ] || continue
    base=${f%.err.expected}
    base=${base%.args}
    [ -f "$base.json" ] || fail "orphan_$(basename "$base")" "$f has no $base.json"
done

# ---- repeats: 3,000 copies of one size and of one implementation -------------

# Each repeat was compared with (and reported once per) every earlier copy:
# 37 to 44 s for this file. Now one message per repeated value.
"$py" - "$tmp/repeats.json" <<'PYEOF'
import json, sys
d = {"schema_version": 1, "collectives": ["allreduce"], "ranks": 2,
     "sizes": [64] * 3000, "implementations": ["native:default"] * 3000}
json.dump(d, open(sys.argv[1], "w"))
PYEOF
timeout 60 "$collgen" run --dry-run "$tmp/repeats.json" >/dev/null 2>"$tmp/repeats.err"
rc=$?
nerr=$(grep -c ': error: ' "$tmp/repeats.err")
if [ "$rc" -eq 2 ] && [ "$nerr" -eq 2 ] && grep -q 'error: size 64 is listed twice$' "$tmp/repeats.err" &&
    grep -q "error: implementation 'native:default' is listed twice$" "$tmp/repeats.err"; then
    pass "repeats_reported_once_each"
else
    head -5 "$tmp/repeats.err"
    fail "repeats_reported_once_each" "exit status $rc, $nerr errors"
fi

# ---- good descriptors ---------------------------------------------------------

for json in descriptors/tests/*.json; do
    name=$(basename "$json" .json)
    timeout 60 "$collgen" run "$name" --dry-run >"$tmp/good.out" 2>"$tmp/good.err"
    rc=$?
    plan=$(grep -E '^plan: [0-9]+ jobs, [0-9]+ points' "$tmp/good.out" | head -1)
    if [ "$rc" -eq 0 ] && [ ! -s "$tmp/good.err" ] && [ -n "$plan" ] && ! grep -q '^plan: 0 ' "$tmp/good.out"; then
        pass "test_descriptor_validates_$name (${plan%%;*})"
    else
        cat "$tmp/good.err"
        fail "test_descriptor_validates_$name" "exit status $rc"
    fi
done
for json in descriptors/platforms/*.json; do
    name=$(basename "$json" .json)
    if timeout 60 "$collgen" run --list-algorithms --platform "$name" >"$tmp/algos" 2>"$tmp/algos.err" &&
        [ ! -s "$tmp/algos.err" ] && [ -s "$tmp/algos" ]; then
        pass "platform_descriptor_validates_$name ($(wc -l <"$tmp/algos") algorithms)"
    else
        cat "$tmp/algos.err"
        fail "platform_descriptor_validates_$name"
    fi
done

# quickstart: what README promises: four collectives at 4 ranks from 8 B to
# 4 MiB under both libraries; the native default, every algorithm the
# platform can force at 4 ranks, every generated schedule.
"$collgen" run quickstart --dry-run >"$tmp/qs" 2>&1
why=
for coll in allreduce allgather reduce_scatter_block bcast; do
    grep -q "^sizes of $coll (count x datatype size, B): 8 .* 4194304\$" "$tmp/qs" || why="sizes of $coll"
done
for lib in openmpi mpich; do
    grep -q "^job [0-9]*: $lib p=4 native:default + generated," "$tmp/qs" || why="no $lib default job"
done
while read -r lib coll name _ rest; do
    case $rest in *"only at 2 ranks"*) continue ;; esac
    case $coll in allreduce | allgather | reduce_scatter_block | bcast) ;; *) continue ;; esac
    grep -q "^job [0-9]*: $lib p=4 native:$name ($coll)," "$tmp/qs" || why="no job forcing $lib $coll $name"
done < <("$collgen" run --list-algorithms | grep -v '^nccl ')
# Every schedule of the four collectives the harness measures (the generator
# knows more; the quickstart measures these).
for s in $("$collgen" list | awk '$2 ~ /^(allreduce|allgather|reduce_scatter_block|bcast)$/ { print $1 }'); do
    grep -q "generated:$s\b" "$tmp/qs" || why="generated:$s is missing"
done
if [ -z "$why" ]; then
    pass "quickstart_plan_is_what_readme_promises ($(grep -o '^plan: [0-9]* jobs, [0-9]* points' "$tmp/qs"))"
else
    fail quickstart_plan_is_what_readme_promises "$why"
fi

# all: every collective the harness measures, at 4 ranks, 8 B, 64 KiB and
# 1 MiB under both libraries; the native default, every algorithm the
# platform can force at 4 ranks, every generated schedule; barrier planned
# once per job and implementation (0 B).
"$collgen" run all --dry-run >"$tmp/all" 2>&1
why=
colls=$("$collgen" list | awk '{ print $2 }' | sort -u)
[ "$(echo "$colls" | wc -l)" -ge 11 ] || why="collgen list shows $(echo "$colls" | wc -l) collectives"
for coll in $colls; do
    if [ "$coll" = barrier ]; then
        grep -q "^sizes of barrier (count x datatype size, B): 0\$" "$tmp/all" || why="sizes of barrier"
    else
        grep -q "^sizes of $coll (count x datatype size, B): 8 65536 1048576\$" "$tmp/all" || why="sizes of $coll"
    fi
done
for lib in openmpi mpich; do
    grep -q "^job [0-9]*: $lib p=4 native:default + generated," "$tmp/all" || why="no $lib default job"
done
while read -r lib coll name _ rest; do
    case $rest in *"only at 2 ranks"*) continue ;; esac
    grep -q "^job [0-9]*: $lib p=4 native:$name ($coll), [13] points" "$tmp/all" || why="no job forcing $lib $coll $name"
done < <("$collgen" run --list-algorithms | grep -v '^nccl ')
for s in $("$collgen" list | awk '{ print $1 }'); do
    grep -q "generated:$s\b" "$tmp/all" || why="generated:$s is missing"
done
grep -q '^note: barrier moves no data' "$tmp/all" || why="no note about barrier's sizes"
if [ -z "$why" ]; then
    pass "all_plan_has_every_collective_algorithm_and_schedule ($(grep -o '^plan: [0-9]* jobs, [0-9]* points' "$tmp/all"))"
else
    fail all_plan_has_every_collective_algorithm_and_schedule "$why"
fi

# A test of barrier alone needs no sizes, and barrier is one point per job
# and implementation whatever sizes and datatypes are listed.
cat >"$tmp/barrier.json" <<'EOF'
{ "schema_version": 1, "libraries": ["openmpi"], "collectives": ["barrier"], "ranks": [2, 3],
  "implementations": ["native:default", "generated:*"] }
EOF
cat >"$tmp/barrier2.json" <<'EOF'
{ "schema_version": 1, "libraries": ["openmpi"], "collectives": ["allreduce", "barrier"], "ranks": 2,
  "sizes": [8, 64, 4096], "datatypes": ["int32", "double"], "implementations": ["native:default"] }
EOF
"$collgen" run "$tmp/barrier.json" --dry-run >"$tmp/b1" 2>&1
rc1=$?
"$collgen" run "$tmp/barrier2.json" --dry-run >"$tmp/b2" 2>&1
rc2=$?
nsched=$("$collgen" list | awk '$2 == "barrier"' | wc -l)
if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] &&
    grep -q "^plan: 2 jobs, $((2 * (nsched + 1))) points" "$tmp/b1" &&
    grep -q '^  points: allreduce 6, barrier 1$' "$tmp/b2"; then
    pass barrier_needs_no_sizes_and_is_one_point_per_job_and_implementation
else
    sed 's/^/# /' "$tmp/b1" "$tmp/b2" | head -20
    fail barrier_needs_no_sizes_and_is_one_point_per_job_and_implementation "exit status $rc1, $rc2"
fi

# bound: descriptors/tests/bound.json puts bound:sendrecv_reduce in each
# library's default job (never in a forced one), and every misuse of a bound
# is a located error (tests/descriptors/bad/bound_*.json, checked above).
"$collgen" run bound --dry-run >"$tmp/bound.plan" 2>&1
why=
for lib in openmpi mpich; do
    awk -v lib="$lib" '/^job [0-9]+: / { hdr = $0 } /^  impls:/ && hdr ~ ("^job [0-9]+: " lib " p=2 native:default \\+ generated \\+ bound,") { print }' \
        "$tmp/bound.plan" | grep -q ' bound:sendrecv_reduce$' || why="no bound in the $lib default job"
done
[ "$(grep -c '^  impls:.*bound:' "$tmp/bound.plan")" = 2 ] || why="bound:sendrecv_reduce outside the two default jobs"
for case in bound_ranks bound_collective bound_no_allreduce bound_unknown bound_in_place; do
    [ -f "tests/descriptors/bad/$case.json" ] || why="tests/descriptors/bad/$case.json is missing"
done
if [ -z "$why" ]; then
    pass bound_descriptor_plans_the_bound_in_default_jobs_and_misuse_is_refused
else
    sed 's/^/# /' "$tmp/bound.plan" | head -20
    fail bound_descriptor_plans_the_bound_in_default_jobs_and_misuse_is_refused "$why"
fi

# ---- Slurm: rendering and a missing sbatch ------------------------------------

out=results/slurm-example-test
"$collgen" run tests/descriptors/slurm.json --platform slurm-example --out "$out" --dry-run >"$tmp/slurm.out" 2>"$tmp/slurm.err"
rc=$?
why=
golden tests/descriptors/slurm.dryrun.expected "$tmp/slurm.out" || why="dry run differs"
# The example runs on a plain Slurm (tests/run_slurm.sh runs it): no account,
# partition or module lines; the runner names each job and its output.
for line in '#SBATCH --time=01:01:40' \
    '#SBATCH --nodes=2' '#SBATCH --ntasks-per-node=2' 'export UCX_MAX_RNDV_RAILS=1' \
    'export OMPI_MCA_coll_tuned_use_dynamic_rules=1' 'export OMPI_MCA_coll_tuned_allreduce_algorithm=4' \
    'export MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling' 'export OMPI_MCA_mpi_yield_when_idle=1' \
    "srun --mpi=pmix --ntasks=4 --ntasks-per-node=2 --cpu-bind=cores build/openmpi/bench $out/jobs/job-1.json" \
    "srun --mpi=pmi2 --ntasks=4 --ntasks-per-node=2 --cpu-bind=cores env LD_PRELOAD=build/mpich/cg_mpich_yield.so build/mpich/bench $out/jobs/job-3.json" \
    "\$ SBATCH_JOB_NAME=collgen-slurm-example-test-4 SBATCH_OUTPUT=$out/logs/job-4.slurm.log SBATCH_NO_REQUEUE=yes sbatch --wait --quiet $out/jobs/job-4.sbatch"; do
    grep -qF -- "$line" "$tmp/slurm.out" || why="no line '$line'"
done
for line in '#SBATCH --account' '#SBATCH --partition' 'module '; do
    grep -qF -- "$line" "$tmp/slurm.out" && why="a site line '$line' in the example"
done
[ "$rc" -eq 0 ] && [ ! -s "$tmp/slurm.err" ] || why="exit status $rc: $(head -1 "$tmp/slurm.err")"
[ -e "$out" ] && why="--dry-run created $out"
if [ -z "$why" ]; then pass slurm_dry_run_renders_batch_scripts; else fail slurm_dry_run_renders_batch_scripts "$why"; fi

if command -v sbatch >/dev/null 2>&1; then
    skip slurm_without_sbatch_is_refused "sbatch is installed here"
else
    "$collgen" run tiny --platform slurm-example --out "$tmp/slurm" --no-report >"$tmp/s.out" 2>"$tmp/s.err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q 'sbatch is not installed (not found in PATH): platform slurm-example needs it' "$tmp/s.err" &&
        [ ! -e "$tmp/slurm" ]; then
        pass slurm_without_sbatch_is_refused_before_anything_runs
    else
        cat "$tmp/s.err"
        fail slurm_without_sbatch_is_refused_before_anything_runs "exit status $rc"
    fi
fi

# ---- parameter sweeps, node shapes and micro-benchmarks: the plan --------------------

# tests/descriptors/sweep.json sweeps two parameters of the fixture schedule
# tests/descriptors/schedules/bcast/sweep_fixture.json (read through
# --registry, so that this holds whatever schedules/ has), runs every job
# under the real topology, CG_PPN=2 and CG_PPN=3 (which does not divide 4),
# and asks for both micro-benchmarks. The bad cases of these keys are
# tests/descriptors/bad/{params,virtual_ranks_per_node,micro}_*.json above.
"$collgen" run tests/descriptors/sweep.json --registry "$fixture_registry" --out results/sweep-test \
    --dry-run >"$tmp/sweep.out" 2>"$tmp/sweep.err"
rc=$?
why=
golden tests/descriptors/sweep.dryrun.expected "$tmp/sweep.out" || why="dry run differs"
for line in 'plan: 6 jobs, 58 points' \
    'job 3: openmpi p=4 CG_PPN=2 native:default + generated + micro, 18 points' \
    '  $ CG_MPIRUN_TIMEOUT=600 CG_PPN=2 tests/mpirun.sh openmpi 4 ' \
    ' generated:bcast_sweep_fixture(radix=2,segments=1) generated:bcast_sweep_fixture(radix=2,segments=2) generated:bcast_sweep_fixture(radix=8,segments=1) generated:bcast_sweep_fixture(radix=8,segments=2) ' \
    ' micro:multi_collective(k=1) micro:multi_collective(k=2) micro:lane_pattern(k=1) micro:lane_pattern(k=2)' \
    'note: virtual_ranks_per_node 3 does not divide 4 ranks: CG_PPN=3 makes an irregular topology' \
    'note: the micro-benchmarks need a regular node shape: left out at p=4 with 3 ranks per node' \
    'job 5: openmpi p=4 CG_PPN=3 native:default + generated, 12 points' \
    'sizes of lane_pattern (count x datatype size, B): 1048576'; do
    grep -qF -- "$line" "$tmp/sweep.out" || why="no line with '$line'"
done
# A forced algorithm's job never holds a sweep or a micro-benchmark.
grep -A2 'native:ring (allreduce)' "$tmp/sweep.out" | grep -q 'micro:\|generated:' && why="a forced job holds generated or micro points"
[ "$rc" -eq 0 ] && [ ! -s "$tmp/sweep.err" ] || why="exit status $rc: $(head -1 "$tmp/sweep.err")"
if [ -z "$why" ]; then pass sweep_shapes_and_micro_dry_run_plans_one_implementation_per_value_and_job_per_shape; else fail sweep_shapes_and_micro_dry_run_plans_one_implementation_per_value_and_job_per_shape "$why"; fi

# ---- the algorithm tables against the libraries themselves ------------------------

"$collgen" run --list-algorithms >"$tmp/local.algos"
if command -v ompi_info >/dev/null 2>&1; then
    ompi_info --param coll tuned --level 9 >"$tmp/ompi_info" 2>/dev/null
    if "$py" - "$tmp/local.algos" "$tmp/ompi_info" <<'EOF'; then
import re, sys
table = {}
for line in open(sys.argv[1]):
    lib, coll, name, ident = line.split()[:4]
    if lib == "openmpi":
        table.setdefault(coll, {})[name] = ident
text = open(sys.argv[2]).read()
bad = 0
for coll, algos in table.items():
    m = re.search(r'"coll_tuned_%s_algorithm".*?Valid values: ([^\n]*)' % coll, text, re.S)
    if not m:
        print("# ompi_info has no coll_tuned_%s_algorithm" % coll); bad += 1; continue
    valid = {n: i for i, n in re.findall(r'(\d+):"([^"]+)"', m.group(1))}
    valid.pop("ignore", None)
    if valid != algos:
        print("# %s: local.json %s, ompi_info %s" % (coll, sorted(algos.items()), sorted(valid.items())))
        bad += 1
sys.exit(1 if bad or not table else 0)
EOF
        pass openmpi_algorithm_numbers_match_ompi_info
    else
        fail openmpi_algorithm_numbers_match_ompi_info
    fi
else
    skip openmpi_algorithm_numbers_match_ompi_info "no ompi_info"
fi
if command -v mpivars >/dev/null 2>&1; then
    why=
    mpivars >"$tmp/mpivars" 2>&1
    mcolls=$(awk '$1 == "mpich" { print $2 }' "$tmp/local.algos" | sort -u)
    [ "$(echo "$mcolls" | wc -l)" = 11 ] || why="local.json lists MPICH algorithms for $(echo "$mcolls" | wc -l) collectives, not 11"
    for coll in $mcolls; do
        var=MPIR_CVAR_$(echo "$coll" | tr a-z A-Z)_INTRA_ALGORITHM
        names=$(awk -v c="$coll" '$1 == "mpich" && $2 == c { print $3 }' "$tmp/local.algos")
        n=0
        values=
        for name in $names; do
            n=$((n + 1))
            # An unknown value makes MPI_T's init abort; a known one prints its enum.
            v=$(env "$var=$name" mpivars 2>&1 | sed -n "s/^[[:space:]]*$var *=\([0-9]*\).*/\1/p")
            if [ -z "$v" ] || [ "$v" = 0 ]; then
                why="$var=$name is not accepted by MPICH"
            fi
            values="$values $v"
        done
        forceable=$(grep -E "^[[:space:]]*$var *=" "$tmp/mpivars" | grep -o -- '- Force' | wc -l)
        [ "$n" -eq "$forceable" ] || why="$coll: local.json lists $n algorithms, mpivars describes $forceable"
        distinct=$(echo $values | tr ' ' '\n' | sort -u | wc -l)
        [ "$distinct" -eq "$n" ] || why="$coll: two names map to one algorithm ($values)"
    done
    if [ -z "$why" ]; then pass "mpich_algorithm_names_match_mpivars ($(echo $mcolls | wc -w) collectives)"; else fail mpich_algorithm_names_match_mpivars "$why"; fi
else
    skip mpich_algorithm_names_match_mpivars "no mpivars"
fi

# ---- the runner without bench: launchers made up here -----------------------------

# fixture NAME LAUNCH_JSON [PROGRAM]: a copy of local.json whose libraries
# launch LAUNCH_JSON (a JSON array) and have no nccl.
fixture() {
    "$py" - "$1" "$2" "${3:-}" <<'EOF'
import json, sys
p = json.load(open("descriptors/platforms/local.json"))
del p["libraries"]["nccl"]
for lib in p["libraries"].values():
    lib["launch"] = json.loads(sys.argv[2])
    if sys.argv[3]:
        lib["program"] = sys.argv[3]
json.dump(p, open(sys.argv[1], "w"), indent=1)
EOF
}

# planned DIR: the number of points in DIR's plan (campaign.json). Why not a
# constant: generated:* grows with schedules/.
planned() {
    "$py" -c "import json, sys; print(json.load(open(sys.argv[1] + '/campaign.json'))['plan']['points_total'])" "$1" 2>/dev/null
}

# check_once DIR: every point of the plan has exactly one record; prints the
# statuses as "status count" lines.
check_once() {
    "$py" tests/check_once.py "$1"
}

# No process of a campaign directory may outlive its runner.
leftovers() {
    pgrep -f -- "$1/jobs/" >/dev/null 2>&1
}

cat >"$tmp/t2.json" <<'EOF'
{
  "schema_version": 1,
  "libraries": ["openmpi"],
  "collectives": ["allreduce", "bcast"],
  "sizes": [64, 4096],
  "ranks": 2,
  "implementations": ["native:default", "generated:*"],
  "timeout_s": 2
}
EOF
fixture "$tmp/hang.json" '["sh", "-c", "echo started; sleep 60", "{program}", "{job}"]' /bin/true
t0=$SECONDS
"$collgen" run "$tmp/t2.json" --platform "$tmp/hang.json" --out "$tmp/hang" --quiet --no-report >"$tmp/hang.out" 2>"$tmp/hang.err"
rc=$?
st=$(check_once "$tmp/hang" 2>&1)
if [ "$rc" -eq 1 ] && [ "$st" = "timeout $(planned "$tmp/hang")" ] && ! leftovers "$tmp/hang" &&
    grep -q '"reason":"the job was killed at its timeout (2 s) before this point was recorded"' "$tmp/hang/points.jsonl"; then
    pass "job_past_its_timeout_is_killed_and_its_points_recorded_as_timeout ($((SECONDS - t0)) s)"
else
    cat "$tmp/hang.err"
    fail job_past_its_timeout_is_killed_and_its_points_recorded_as_timeout "exit status $rc, statuses: $st"
fi

fixture "$tmp/exit3.json" '["sh", "-c", "echo \"bench: started as 1 ranks, expected 2: wrong launcher?\" >&2; exit 3", "{program}", "{job}"]' /bin/true
"$collgen" run "$tmp/t2.json" --platform "$tmp/exit3.json" --out "$tmp/exit3" --quiet --no-report >/dev/null 2>"$tmp/exit3.err"
rc=$?
st=$(check_once "$tmp/exit3" 2>&1)
if [ "$rc" -eq 1 ] && [ "$st" = "error $(planned "$tmp/exit3")" ] &&
    [ "$(grep -c '"reason":"wrong launcher (exit status 3): bench: started as 1 ranks' "$tmp/exit3/points.jsonl")" -eq "$(planned "$tmp/exit3")" ]; then
    pass bench_exit_3_is_reported_as_wrong_launcher_and_points_recorded_as_error
else
    cat "$tmp/exit3.err"
    fail bench_exit_3_is_reported_as_wrong_launcher_and_points_recorded_as_error "exit status $rc, statuses: $st"
fi

fixture "$tmp/noprog.json" '["{program}", "{job}"]' build/nonexistent/bench
"$collgen" run "$tmp/t2.json" --platform "$tmp/noprog.json" --out "$tmp/noprog" >/dev/null 2>"$tmp/noprog.err"
rc=$?
if [ "$rc" -eq 2 ] && [ ! -e "$tmp/noprog" ] && grep -q 'build/nonexistent/bench of library openmpi is missing or not executable' "$tmp/noprog.err"; then
    pass missing_bench_is_refused_before_anything_is_created
else
    cat "$tmp/noprog.err"
    fail missing_bench_is_refused_before_anything_is_created "exit status $rc"
fi

"$collgen" run "$tmp/t2.json" --platform "$tmp/exit3.json" --out "$tmp/exit3" >/dev/null 2>"$tmp/again.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "already exists: finish it with --resume" "$tmp/again.err"; then
    pass existing_campaign_directory_is_not_overwritten
else
    fail existing_campaign_directory_is_not_overwritten "exit status $rc"
fi

njobs=$(ls "$tmp/exit3/jobs" | wc -l)
"$collgen" run --resume "$tmp/exit3" --no-report >"$tmp/r.out" 2>"$tmp/r.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'nothing to do' "$tmp/r.err" && [ "$(ls "$tmp/exit3/jobs" | wc -l)" -eq "$njobs" ] &&
    "$py" -c "import json,sys; c=json.load(open('$tmp/exit3/campaign.json')); sys.exit(0 if len(c['resumes']) == 1 else 1)"; then
    pass resume_of_a_finished_campaign_runs_nothing_and_is_noted
else
    cat "$tmp/r.err"
    fail resume_of_a_finished_campaign_runs_nothing_and_is_noted "exit status $rc"
fi

# --retry-errors: the error points run again, their old records move aside,
# and points.jsonl keeps one record per point. (exit3's launcher fails again.)
nrec=$(wc -l <"$tmp/exit3/points.jsonl")
"$collgen" run --resume "$tmp/exit3" --retry-errors --no-report >"$tmp/retry.out" 2>"$tmp/retry.err"
rc=$?
st=$(check_once "$tmp/exit3" 2>&1)
if [ "$rc" -eq 1 ] && [ "$st" = "error $(planned "$tmp/exit3")" ] &&
    [ "$(wc -l <"$tmp/exit3/points.retried.jsonl")" -eq "$nrec" ] &&
    [ "$(ls "$tmp/exit3/jobs" | wc -l)" -gt "$njobs" ] &&
    grep -q "moved $nrec records to $tmp/exit3/points.retried.jsonl" "$tmp/retry.err" &&
    grep -q "^not ok: $nrec of $nrec recorded points ($nrec error); run the error and timeout ones again with: build/collgen run --resume $tmp/exit3 --retry-errors" "$tmp/retry.out"; then
    pass resume_retry_errors_runs_error_points_again_keeping_one_record_each
else
    cat "$tmp/retry.err" "$tmp/retry.out"
    fail resume_retry_errors_runs_error_points_again_keeping_one_record_each "exit status $rc, statuses: $st"
fi
"$collgen" run tiny --retry-errors --dry-run >/dev/null 2>"$tmp/retry2.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q -- '--retry-errors goes with --resume DIR' "$tmp/retry2.err"; then
    pass retry_errors_without_resume_is_refused
else
    fail retry_errors_without_resume_is_refused "exit status $rc"
fi

# A rank killed by SIGKILL long before the limit: tests/mpirun.sh said
# "killed after 120 s" for any exit status 137.
CG_MPIRUN_TIMEOUT=120 tests/mpirun.sh openmpi 1 bash -c 'kill -KILL $$' >"$tmp/k137.out" 2>"$tmp/k137.err"
rc=$?
if [ "$rc" -eq 137 ] && ! grep -q 'killed after 120 s' "$tmp/k137.err" &&
    grep -q 'mpirun.sh: openmpi np=1 bash: exited with status 137 after [0-9]* s: killed by signal 9 (KILL), not by the time limit (120 s)' "$tmp/k137.err"; then
    pass mpirun_sh_exit_137_before_the_limit_is_not_called_a_timeout
else
    cat "$tmp/k137.err"
    fail mpirun_sh_exit_137_before_the_limit_is_not_called_a_timeout "exit status $rc"
fi
CG_MPIRUN_TIMEOUT=1 tests/mpirun.sh openmpi 1 sleep 30 >"$tmp/k124.out" 2>"$tmp/k124.err"
rc=$?
if [ "$rc" -eq 124 ] && grep -q 'mpirun.sh: openmpi np=1 sleep: killed after 1 s (CG_MPIRUN_TIMEOUT)' "$tmp/k124.err"; then
    pass mpirun_sh_time_limit_is_called_a_timeout
else
    cat "$tmp/k124.err"
    fail mpirun_sh_time_limit_is_called_a_timeout "exit status $rc"
fi

# The same in a campaign: the points' reason is the real one.
# (timeout_s 60: mpirun may need more than t2's 2 s to start two ranks here.)
sed 's/"timeout_s": 2/"timeout_s": 60/' "$tmp/t2.json" >"$tmp/t60.json"
fixture "$tmp/kill9.json" '["tests/mpirun.sh", "openmpi", "{ranks}", "bash", "-c", "kill -KILL $$", "{program}", "{job}"]'
"$collgen" run "$tmp/t60.json" --platform "$tmp/kill9.json" --out "$tmp/kill9" --quiet --no-report >"$tmp/kill9.out" 2>"$tmp/kill9.err"
rc=$?
st=$(check_once "$tmp/kill9" 2>&1)
if [ "$rc" -eq 1 ] && [ "$st" = "error $(planned "$tmp/kill9")" ] &&
    grep -q '"reason":"the job was killed by signal 9: mpirun.sh: openmpi np=2 bash: exited with status 137 after [0-9]* s: killed by signal 9 (KILL), not by the time limit' "$tmp/kill9/points.jsonl"; then
    pass rank_killed_by_sigkill_is_recorded_with_the_real_reason
else
    head -c 600 "$tmp/kill9/points.jsonl"
    echo
    fail rank_killed_by_sigkill_is_recorded_with_the_real_reason "exit status $rc, statuses: $st"
fi

# A directory given as the test: said so (it was "I/O error").
"$collgen" run descriptors/tests --dry-run >/dev/null 2>"$tmp/dir.err"
rc=$?
if [ "$rc" -eq 2 ] && grep -qx 'descriptors/tests: error: cannot read: it is a directory, not a file (name the .json files in it)' "$tmp/dir.err"; then
    pass directory_given_as_test_is_said_to_be_one
else
    cat "$tmp/dir.err"
    fail directory_given_as_test_is_said_to_be_one "exit status $rc"
fi

# ---- bench's float16 and bfloat16 data (tests/test_bench_data.c) --------------------

# The conversion, the exact expected results and the uniqueness of the GPU
# mode's 16-bit inputs (harness/bench_data.c): build/openmpi/test_bench_data
# (runtime/mpi.ninja), no launcher needed.
if [ -x build/openmpi/test_bench_data ]; then
    timeout 120 build/openmpi/test_bench_data >"$tmp/tbd.out" 2>&1
    rc=$?
    sed -n 's/^PASS /PASS harness /p' "$tmp/tbd.out"
    while read -r line; do
        fail "${line#FAIL }"
    done < <(grep '^FAIL ' "$tmp/tbd.out")
    if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$tmp/tbd.out"; then
        fail bench_data_unit_test "exit status $rc: $(tail -1 "$tmp/tbd.out")"
    elif ! grep -q '^PASS ' "$tmp/tbd.out"; then
        fail bench_data_unit_test "ran no test"
    fi
else
    fail bench_data_unit_test "build/openmpi/test_bench_data was not built (run ninja)"
fi

# ---- with the real benchmark program -----------------------------------------------

if [ ! -x build/openmpi/bench ] || [ ! -x build/mpich/bench ]; then
    for t in tiny_real_campaign_records_match_the_plan_and_schema every_collective_real_campaign_records_are_ok_and_complete \
        report_of_every_collective_has_its_tables_and_plots \
        wrong_generated_barrier_and_rooted_result_are_recorded_as_failed_check \
        bound_sendrecv_reduce_runs_at_p2_with_kind_bound_and_check_ok \
        mpich_fallback_said_on_stderr_is_recorded_as_reported_fallback \
        forced_natives_in_the_same_launch_run_what_was_forced \
        roofline_is_measured_again_for_every_point_from_1_MiB \
        wrong_generated_implementation_is_recorded_as_failed_check \
        kill_and_resume_loses_and_repeats_no_point \
        real_job_past_its_timeout_records_timeout wrong_launcher_with_real_bench_is_caught \
        micro_benchmarks_under_virtual_nodes_record_ok_and_shapes \
        wrong_micro_benchmark_data_is_recorded_as_failed_check \
        bench_refuses_unknown_parameters_and_lanes_beyond_the_node \
        bench_records_float16_and_bfloat16_points_as_skipped \
        real_parameter_sweep_records_requested_and_effective_params; do
        skip "$t" "build/openmpi/bench or build/mpich/bench is not built yet"
    done
    [ "$failed" -eq 0 ]
    exit
fi

t0=$SECONDS
# NCCL_CG_TEST: an environment value bench copies into run-N.json (its env
# prefixes), with a byte that is no UTF-8, an overlong '/', a surrogate and a
# control character: the file must stay valid UTF-8 (runtime/util/jsonio.c).
NCCL_CG_TEST=$'bad\xff\xc0\xaf\xed\xa0\x80\x01end' \
    "$collgen" run tiny --out "$tmp/tiny" --quiet --no-report >"$tmp/tiny.out" 2>"$tmp/tiny.err"
rc=$?
st=$(check_once "$tmp/tiny" 2>&1)
if [ "$rc" -eq 0 ] && [ "$st" = "ok $(planned "$tmp/tiny")" ] && "$py" - "$tmp/tiny" descriptors/tests/tiny.json <<'EOF'; then
import json, math, os, sys
d, desc = sys.argv[1], sys.argv[2]
c = json.load(open(d + "/campaign.json"))
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
# campaign.json: the descriptors as given, their hashes, the plan, the command line.
text = open(desc, "rb").read()
h = 14695981039346656037
for b in text:
    h = ((h ^ b) * 1099511628211) % (1 << 64)
need(c["test"]["text"].encode() == text, "test text is not verbatim")
need(c["test"]["fnv1a64"] == "%016x" % h, "test hash is not FNV-1a 64 of the file")
need(c["platform"]["text"] == open("descriptors/platforms/local.json").read(), "platform text")
need(c["command_line"][:2] == ["collgen", "run"], "command line")
plan = {p["id"]: (j, p) for j in c["plan"]["jobs"] for p in j["points"]}
need(len(plan) == c["plan"]["points_total"] > 0, "plan size")
metas = sorted(f for f in os.listdir(d) if f.startswith("run-") and f.endswith(".json"))
need(len(metas) == len(c["plan"]["jobs"]), "one run-N.json per job")
for m in metas:
    try:
        env = json.loads(open(os.path.join(d, m), "rb").read().decode("utf-8"))["env"]  # strict
    except (UnicodeDecodeError, ValueError, KeyError) as e:
        env = {}
        need(False, "%s is not valid UTF-8 JSON: %s" % (m, e))
    need(env.get("NCCL_CG_TEST") == "bad" + "\ufffd" * 6 + "\x01end",
         "%s env NCCL_CG_TEST %r" % (m, env.get("NCCL_CG_TEST")))
sizes = {"double": 8, "float": 4, "int32": 4, "int64": 8}
roofs = {}
for line in open(d + "/points.jsonl"):
    r = json.loads(line)
    job, p = plan[r["point_id"]]
    jf = json.load(open("%s/jobs/job-%d.json" % (d, r["run_id"])))
    need(r["point_id"] in [q["id"] for q in jf["points"]], "record's run_id names a job without the point")
    need(os.path.exists("%s/run-%d.json" % (d, r["run_id"])), "run-%d.json" % r["run_id"])
    for k in ["schema_version", "campaign", "run_id", "point_id", "seq", "status", "reason", "collective",
              "backend", "library", "kind", "name", "schedule_file", "schedule_hash", "requested",
              "effective", "diff", "size_B", "timing", "validity", "bandwidth", "roofline", "check",
              "tags", "raw", "launch"]:
        need(k in r, "record has no " + k)
    need(r["schema_version"] == 3 and r["campaign"] == c["campaign"], "identity")
    need(r["launch"] == {"index": 1, "of": 1, "point_id": r["point_id"]}, "launch")
    need(r["timing"]["figure"] == "max_rank_duration" and r["timing"]["sync"] == "barrier" and
         r["timing"]["span"]["figure"] == "global_span", "timing figure")
    need(r["seq"] == p["seq"] and r["collective"] == p["collective"], "seq/collective")
    need(r["library"] == job["library"] and r["backend"] == "mpi", "library")
    kind, name = p["impl"].split(":")
    need(r["kind"] == kind and r["name"] == name, "kind/name %s %s vs %s" % (r["kind"], r["name"], p["impl"]))
    q = r["requested"]
    for k in ["count", "datatype", "op", "root", "in_place"]:
        need(q[k] == p[k], "requested.%s" % k)
    need(q["ranks"] == job["ranks"] == 2 and q["ranks_per_node"] == 2, "requested ranks")
    nb = p["count"] * sizes[p["datatype"]]
    if p["collective"] in ("allgather", "reduce_scatter_block"):
        nb *= job["ranks"]
    need(r["size_B"] == nb, "size_B %s vs %s" % (r["size_B"], nb))
    f = {"allreduce": 1.0, "bcast": 1.0}.get(p["collective"], 0.5)
    need(abs(r["bandwidth"]["busbw_factor"] - f) < 1e-9, "busbw_factor")
    # The roofline (bench_roof.c): bytes rounded up to whole elements, the
    # limit the sum of its parts, one per (launch, collective, count).
    es = sizes[p["datatype"]]
    whole = lambda b: math.ceil(b / es - 1e-9) * es
    ro = r["roofline"]
    need(ro["recv_B"] == whole(f * nb), "roofline recv_B %s" % ro["recv_B"])
    red = p["collective"] in ("allreduce", "reduce_scatter_block")
    need(ro["reduce_B"] == (whole(nb / 2) if red else 0), "roofline reduce_B %s" % ro["reduce_B"])
    need(ro["copy_B"] == (whole(nb / 2) if p["collective"] == "allgather" else 0), "roofline copy_B")
    need(ro["p2p_ns"] > 0 and (ro["reduce_ns"] > 0) == red, "roofline times")
    need(ro["limit_ns"] == ro["p2p_ns"] + ro["reduce_ns"] + ro["copy_ns"], "roofline limit_ns")
    need(ro["overlap_limit_ns"] == max(ro["p2p_ns"], ro["reduce_ns"] + ro["copy_ns"]), "overlap")
    key = (r["run_id"], p["collective"], p["count"])
    need(roofs.setdefault(key, ro) == ro, "one roofline per launch, collective and count")
    need(r["status"] == "ok" and r["timing"]["n"] >= 3 and r["timing"]["warmup"] == 1, "timing")
    need(r["timing"]["stop"] in ("rse", "budget", "max_reps"), "stop")
    need(r["check"]["verdict"] == "ok", "check verdict")
    need(os.path.exists(os.path.join(d, r["raw"])), "raw file " + str(r["raw"]))
    if kind == "generated":
        need(r["schedule_file"] and r["tags"], "generated without schedule file or tags")
    if job["knobs"]["algorithm"]:
        need(q["algorithm"] == job["knobs"]["algorithm"], "requested.algorithm")
        need(q["forced_by"] == job["knobs"]["forced_by"], "requested.forced_by")
for b in sorted(set(bad))[:10]:
    print("#", b)
sys.exit(1 if bad else 0)
EOF
    pass "tiny_real_campaign_records_match_the_plan_and_schema ($((SECONDS - t0)) s)"
else
    cat "$tmp/tiny.err"
    fail tiny_real_campaign_records_match_the_plan_and_schema "exit status $rc, statuses: $st"
fi

# Every collective the harness measures, 2 ranks, one size (129 doubles: the
# blocks of p are uneven), both libraries, the native default and every
# generated schedule; rooted collectives at both roots, in place where MPI
# defines it. Every record ok and complete, with each collective's size_B,
# busbw factor and check.
colls_json=$("$collgen" list | awk '{ print $2 }' | sort -u | "$py" -c '
import json, sys
rooted = {"bcast", "reduce", "gather", "scatter"}
inplace = {"allreduce", "allgather", "reduce_scatter_block", "reduce", "gather", "scatter", "alltoall", "scan", "exscan"}
out = []
for c in sys.stdin.read().split():
    e = {"name": c}
    if c in rooted:
        e["roots"] = [0, 1]
    if c in inplace:
        e["in_place"] = [False, True]
    out.append(e)
print(json.dumps(out))')
cat >"$tmp/every.json" <<EOF2
{
  "schema_version": 1,
  "libraries": ["openmpi", "mpich"],
  "collectives": $colls_json,
  "sizes": [1032],
  "ranks": 2,
  "implementations": ["native:default", "generated:*"],
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 20, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 120
}
EOF2
t0=$SECONDS
"$collgen" run "$tmp/every.json" --out "$tmp/every" --quiet --no-report >"$tmp/every.out" 2>"$tmp/every.err"
rc=$?
st=$(check_once "$tmp/every" 2>&1)
npoints=$("$py" -c "import json; print(json.load(open('$tmp/every/campaign.json'))['plan']['points_total'])" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "$st" = "ok $npoints" ] && "$py" - "$tmp/every" <<'EOF2'; then
import json, os, sys
d = sys.argv[1]
c = json.load(open(d + "/campaign.json"))
plan = {p["id"]: (j, p) for j in c["plan"]["jobs"] for p in j["points"]}
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
per_rank = {"allgather", "reduce_scatter_block", "gather", "scatter", "alltoall"}
factor = {"allreduce": 1.0, "bcast": 1.0, "reduce": 1.0, "scan": 1.0, "exscan": 1.0,
          "allgather": 0.5, "reduce_scatter_block": 0.5, "gather": 0.5, "scatter": 0.5,
          "alltoall": 0.5, "barrier": None}
seen = set()
for line in open(d + "/points.jsonl"):
    r = json.loads(line)
    job, p = plan[r["point_id"]]
    coll = p["collective"]
    seen.add((r["library"], coll, r["kind"]))
    for k in ["schema_version", "campaign", "run_id", "point_id", "seq", "status", "reason", "collective",
              "backend", "library", "kind", "name", "schedule_file", "schedule_hash", "requested",
              "effective", "diff", "size_B", "timing", "validity", "bandwidth", "check", "tags",
              "raw", "launch"]:
        need(k in r, "%s record has no %s" % (coll, k))
    need(r["status"] == "ok" and r["reason"] is None, "%s %s: %s" % (coll, r["name"], r["reason"]))
    need(r["collective"] == coll and r["seq"] == p["seq"], "collective/seq")
    kind, name = p["impl"].split(":")
    need(r["kind"] == kind and r["name"] == name, "kind/name")
    q = r["requested"]
    for k in ["count", "datatype", "op", "root", "in_place"]:
        need(q[k] == p[k], "%s requested.%s" % (coll, k))
    nb = 0 if coll == "barrier" else p["count"] * 8 * (2 if coll in per_rank else 1)
    need(r["size_B"] == nb, "%s size_B %s, expected %s" % (coll, r["size_B"], nb))
    need(coll != "barrier" or p["count"] == 0, "barrier count")
    bw = r["bandwidth"]
    if factor[coll] is None:
        need(bw == {"algbw_GBps": None, "busbw_GBps": None, "busbw_factor": None}, "barrier bandwidth %s" % bw)
    else:
        need(abs(bw["busbw_factor"] - factor[coll]) < 1e-9, "%s busbw_factor %s" % (coll, bw["busbw_factor"]))
        need(bw["algbw_GBps"] > 0 and abs(bw["busbw_GBps"] - bw["algbw_GBps"] * factor[coll]) < 1e-9, "%s busbw" % coll)
    ref = "staggered_entry" if coll == "barrier" else ("native" if kind == "generated" else "formula")
    need(r["check"] == {"reference": ref, "elements_wrong": 0, "max_error": 0, "verdict": "ok"},
         "%s %s check %s" % (coll, name, r["check"]))
    need(r["timing"]["n"] >= 3 and r["timing"]["stop"] in ("rse", "budget", "max_reps"), "timing")
    need(os.path.exists(os.path.join(d, r["raw"])), "raw file " + str(r["raw"]))
    if kind == "generated":
        need(r["schedule_file"] and r["schedule_hash"] and r["tags"], "%s generated without schedule or tags" % name)
        need(r["effective"]["algorithm_source"] == "generated" and r["diff"] == [], "generated effective")
    else:
        need(r["effective"]["algorithm"] == "default" and r["diff"] == [], "%s native effective %s" % (coll, r["effective"]))
colls = {p["collective"] for _, p in plan.values()}
need(len(colls) >= 11, "only %d collectives planned" % len(colls))
for lib in ("openmpi", "mpich"):
    for coll in colls:
        for kind in ("native", "generated"):
            need((lib, coll, kind) in seen, "no %s %s %s record" % (lib, coll, kind))
for b in sorted(set(bad))[:10]:
    print("#", b)
sys.exit(1 if bad else 0)
EOF2
    pass "every_collective_real_campaign_records_are_ok_and_complete ($npoints points, $((SECONDS - t0)) s)"
else
    cat "$tmp/every.err"
    fail every_collective_real_campaign_records_are_ok_and_complete "exit status $rc, statuses: $st (of $npoints)"
fi

# Its report: a table per collective, library, root and in-place setting,
# and every collective's plots (barrier: a bar chart, no bus bandwidth,
# since it moves no data). The plots are made for Open MPI's records at
# root 0, not in place, to keep matplotlib's time down.
t0=$SECONDS
"$collgen" report "$tmp/every" --quiet --no-plots >"$tmp/every.rep" 2>&1
rc=$?
mkdir -p "$tmp/every-plots"
cp -r "$tmp/every/raw" "$tmp/every-plots/"
"$py" - "$tmp/every/points.jsonl" >"$tmp/every-plots/points.jsonl" <<'EOF2'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["library"] == "openmpi" and r["requested"]["root"] == 0 and not r["requested"]["in_place"]:
        sys.stdout.write(line)
EOF2
"$collgen" report "$tmp/every-plots" --quiet >>"$tmp/every.rep" 2>&1 || rc=$?
why=
[ "$rc" -eq 0 ] || why="exit status $rc: $(head -3 "$tmp/every.rep")"
for coll in $("$collgen" list | awk '{ print $2 }' | sort -u); do
    for lib in openmpi mpich; do
        grep -q "^== $coll / $lib / p=2\( \|$\)" "$tmp/every/table.txt" || why="no table for $coll / $lib"
    done
    ls "$tmp/every-plots/plots/" | grep -q "^latency_${coll}_openmpi_p2\.png$" || why="no latency plot of $coll"
    ls "$tmp/every-plots/plots/" | grep -q "^box_${coll}_openmpi_p2\.png$" || why="no box plot of $coll"
    [ "$coll" = barrier ] || ls "$tmp/every-plots/plots/" | grep -q "^busbw_${coll}_openmpi_p2\.png$" || why="no busbw plot of $coll"
done
grep -q '^== reduce / mpich / p=2 / double sum / root 1 / in place ==$' "$tmp/every/table.txt" || why="no table of reduce at root 1 in place"
ls "$tmp/every-plots/plots/" | grep -q '^busbw_barrier' && why="a bus bandwidth plot for barrier"
grep -q '^== barrier / openmpi / p=2 ==$' "$tmp/every/table.txt" || why="barrier's table title names a datatype"
grep -q '^== scan / openmpi / p=2 / double sum ==$' "$tmp/every/table.txt" || why="scan's table title has no op"
grep -q 'barrier_dissemination against bruck or dissemination' "$tmp/every/table.txt" || why="no barrier pairing in the legend"
grep -q 'reduce_scatter_block_butterfly against butterfly or noncommutative' "$tmp/every/table.txt" || why="no butterfly pairing in the legend"
if [ -z "$why" ]; then
    pass "report_of_every_collective_has_its_tables_and_plots ($(ls "$tmp/every-plots/plots" | wc -l) plots, $((SECONDS - t0)) s)"
else
    fail report_of_every_collective_has_its_tables_and_plots "$why"
fi

# A generated barrier that lets a rank leave before the last one entered
# (CG_BENCH_CORRUPT on a barrier schedule: rank 0 takes its leaving time
# before the call) and a wrong result at the root of a reduce are
# failed_check, under both libraries.
for victim in barrier_dissemination reduce_binomial; do
    coll=${victim%%_*}
    cat >"$tmp/corrupt-$coll.json" <<EOF2
{
  "schema_version": 1,
  "libraries": ["openmpi", "mpich"],
  "collectives": [{ "name": "$coll", "implementations": ["generated:*"] }],
  "sizes": [64],
  "ranks": 3,
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "env": { "CG_BENCH_CORRUPT": "$victim" },
  "timeout_s": 60
}
EOF2
    "$collgen" run "$tmp/corrupt-$coll.json" --out "$tmp/corrupt-$coll" --quiet --no-report >/dev/null 2>"$tmp/corrupt-$coll.err"
done
if "$py" - "$tmp" <<'EOF2'; then
import json, sys
bad = 0
for coll, victim, ref, why in (("barrier", "barrier_dissemination", "staggered_entry",
                                "1 of 3 ranks left the barrier before the last rank entered"),
                               ("reduce", "reduce_binomial", "native", "1 element wrong on 1 of 3 ranks")):
    recs = [json.loads(l) for l in open("%s/corrupt-%s/points.jsonl" % (sys.argv[1], coll))]
    for r in recs:
        hit = r["name"] == victim
        ok = r["status"] == ("failed_check" if hit else "ok") and r["check"]["reference"] == ref
        if hit:
            ok = ok and r["timing"] is None and r["check"]["verdict"] == "wrong" and r["reason"].startswith(why)
        if not ok:
            print("#", r["library"], r["name"], r["status"], r["reason"])
            bad += 1
    bad += len({r["library"] for r in recs if r["name"] == victim}) != 2
sys.exit(1 if bad else 0)
EOF2
    pass wrong_generated_barrier_and_rooted_result_are_recorded_as_failed_check
else
    cat "$tmp"/corrupt-*.err
    fail wrong_generated_barrier_and_rooted_result_are_recorded_as_failed_check
fi

# The transport bound at p = 2, one size, both libraries: its record has kind
# bound, is checked against the formula, and the report shows it in a "bound
# us" column.
cat >"$tmp/bound.json" <<'EOF2'
{
  "schema_version": 1,
  "libraries": ["openmpi", "mpich"],
  "collectives": ["allreduce"],
  "sizes": [65544],
  "ranks": 2,
  "implementations": ["native:default", "bound:sendrecv_reduce"],
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 20, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 120
}
EOF2
"$collgen" run "$tmp/bound.json" --out "$tmp/bound" --quiet --no-report >"$tmp/bound.out" 2>"$tmp/bound.err"
rc=$?
"$collgen" report "$tmp/bound" --quiet --no-plots 2>>"$tmp/bound.err" || rc=$?
st=$(check_once "$tmp/bound" 2>&1)
if [ "$rc" -eq 0 ] && [ "$st" = "ok 4" ] && grep -q 'bound us  def/bound' "$tmp/bound/table.txt" &&
    "$py" - "$tmp/bound" <<'EOF2'; then
import json, os, sys
d = sys.argv[1]
bounds = [r for r in map(json.loads, open(d + "/points.jsonl")) if r["point_id"].find("bound_") > 0]
ok = len(bounds) == 2 and {r["library"] for r in bounds} == {"openmpi", "mpich"}
for r in bounds:
    ok = ok and r["kind"] == "bound" and r["name"] == "sendrecv_reduce" and r["status"] == "ok"
    ok = ok and r["check"] == {"reference": "formula", "elements_wrong": 0, "max_error": 0, "verdict": "ok"}
    ok = ok and r["effective"]["algorithm_source"] == "bound" and r["diff"] == []
    ok = ok and r["size_B"] == 65544 and r["requested"]["count"] == 8193 and r["tags"] is None
    ok = ok and r["bandwidth"]["busbw_factor"] == 1 and r["timing"]["n"] >= 3
    ok = ok and os.path.exists(os.path.join(d, r["raw"]))
sys.exit(0 if ok else 1)
EOF2
    pass bound_sendrecv_reduce_runs_at_p2_with_kind_bound_and_check_ok
else
    cat "$tmp/bound.err"
    fail bound_sendrecv_reduce_runs_at_p2_with_kind_bound_and_check_ok "exit status $rc, statuses: $st"
fi

# A deliberately wrong generated implementation (bench's test hook
# CG_BENCH_CORRUPT flips a byte of one output after its check call) is
# recorded as failed_check, untimed, and the campaign goes on.
cat >"$tmp/corrupt.json" <<'EOF2'
{
  "schema_version": 1,
  "libraries": ["openmpi", "mpich"],
  "collectives": ["allreduce"],
  "sizes": [64],
  "ranks": 2,
  "implementations": ["generated:allreduce_ring", "generated:allreduce_recursive_doubling"],
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "env": { "CG_BENCH_CORRUPT": "allreduce_ring" },
  "timeout_s": 60
}
EOF2
"$collgen" run "$tmp/corrupt.json" --out "$tmp/corrupt" --quiet --no-report >/dev/null 2>"$tmp/corrupt.err"
rc=$?
if [ "$rc" -eq 0 ] && "$py" - "$tmp/corrupt" <<'EOF2'; then
import json, sys
recs = {(r["library"], r["name"]): r for r in map(json.loads, open(sys.argv[1] + "/points.jsonl"))}
ok = len(recs) == 4
for lib in ("openmpi", "mpich"):
    bad, good = recs[(lib, "allreduce_ring")], recs[(lib, "allreduce_recursive_doubling")]
    ok = ok and bad["status"] == "failed_check" and bad["timing"] is None and bad["raw"] is None
    ok = ok and bad["check"]["verdict"] == "wrong" and bad["check"]["elements_wrong"] == 1
    ok = ok and bad["check"]["reference"] == "native"
    ok = ok and bad["reason"].startswith("1 element wrong on 1 of 2 ranks")
    ok = ok and good["status"] == "ok" and good["check"]["verdict"] == "ok"
sys.exit(0 if ok else 1)
EOF2
    pass wrong_generated_implementation_is_recorded_as_failed_check
else
    cat "$tmp/corrupt.err"
    fail wrong_generated_implementation_is_recorded_as_failed_check "exit status $rc"
fi

# MPICH's smp allreduce cannot run on one node: with
# MPIR_CVAR_COLLECTIVE_FALLBACK=print (local.json) MPICH says so on stderr
# and runs another algorithm; bench ties that to the point as
# reported_fallback instead of recording the forced name or "unobservable".
cat >"$tmp/fallback.json" <<'EOF2'
{
  "schema_version": 1,
  "libraries": ["mpich"],
  "collectives": ["allreduce"],
  "sizes": [64],
  "ranks": 2,
  "implementations": ["native:smp"],
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 60
}
EOF2
"$collgen" run "$tmp/fallback.json" --out "$tmp/fallback" --quiet --no-report >/dev/null 2>"$tmp/fallback.err"
rc=$?
if [ "$rc" -eq 0 ] && "$py" - "$tmp/fallback" <<'EOF2'; then
import json, sys
r = [json.loads(l) for l in open(sys.argv[1] + "/points.jsonl")]
e = r[0]["effective"] if len(r) == 1 else {}
ok = e.get("algorithm_source") == "reported_fallback" and e.get("algorithm") is None
ok = ok and "not usable" in e.get("forced_by", "") and "algorithm" in r[0]["diff"]
sys.exit(0 if ok else 1)
EOF2
    pass mpich_fallback_said_on_stderr_is_recorded_as_reported_fallback
else
    cat "$tmp/fallback.err"
    fail mpich_fallback_said_on_stderr_is_recorded_as_reported_fallback "exit status $rc"
fi

# Forced in the same launch ("forced_natives": "same_launch"): the native
# algorithms run in the job of the default and generated points, forced
# through MPI_T per point. Open MPI: the spy (tests/tune/ompi_spy.c) shows
# the forced algorithms ran (ring at 1024 doubles, bcast binomial), the
# records say so through MPI_T, and the default points after them read the
# restored value. MPICH: reduce_scatter_allgather at one double makes MPICH
# say on stderr that it fell back, which it can only do if the write took
# effect; at 1024 doubles it runs; the defaults after it read auto again.
for lib in openmpi mpich; do
    cat >"$tmp/same-$lib.json" <<EOF2
{
  "schema_version": 1,
  "libraries": ["$lib"],
  "sizes": [8, 8192],
  "ranks": 2,
  "forced_natives": "same_launch",
  "collectives": [
    {"name": "allreduce", "implementations": ["native:default", "generated:allreduce_ring",
      $( [ $lib = openmpi ] && echo '"native:ring", "native:recursive_doubling"' || echo '"native:reduce_scatter_allgather", "native:recursive_doubling"' )]},
    {"name": "bcast", "implementations": ["native:default", "native:binomial"]}
  ],
  "datatypes": ["double"], "ops": ["sum"],
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 120
}
EOF2
done
rm -f "$tmp/spy.log"
CG_PRELOAD=$PWD/build/openmpi/tune_spy.so CG_SPY_LOG=$tmp/spy.log \
    "$collgen" run "$tmp/same-openmpi.json" --out "$tmp/same-openmpi" --quiet --no-report \
    >/dev/null 2>"$tmp/same-openmpi.err"
rc=$?
"$collgen" run "$tmp/same-mpich.json" --out "$tmp/same-mpich" --quiet --no-report \
    >/dev/null 2>"$tmp/same-mpich.err"
rc2=$?
if [ "$rc" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -f build/openmpi/tune_spy.so ]; then
    if "$py" - "$tmp" >"$tmp/same.out" 2>&1 <<'EOF2'; then
import collections, json, sys
t = sys.argv[1]
bad = []
def need(c, what):
    if not c:
        bad.append(what)
for lib, var in (("openmpi", "OMPI_MCA_coll_tuned_%s_algorithm"), ("mpich", "MPIR_CVAR_%s_INTRA_ALGORITHM")):
    d = "%s/same-%s" % (t, lib)
    c = json.load(open(d + "/campaign.json"))
    jobs = c["plan"]["jobs"]
    need(len(jobs) == 1, "%s: %d jobs, expected the one launch" % (lib, len(jobs)))
    env = dict(jobs[0]["env"])
    need((env.get("OMPI_MCA_coll_tuned_use_dynamic_rules") == "1") == (lib == "openmpi"),
         "%s: the launch-only variable %r" % (lib, env.get("OMPI_MCA_coll_tuned_use_dynamic_rules")))
    for p in jobs[0]["points"]:
        forced = p["impl"].startswith("native:") and p["impl"] != "native:default"
        need(("knobs" in p) == forced, "%s: knobs of %s" % (lib, p["id"]))
        if forced:
            coll = p["collective"] if lib == "openmpi" else p["collective"].upper()
            rt = p["knobs"]["at_run_time"]
            need(var % coll in rt["mpi_t"] and rt["new_communicator"] == (lib == "openmpi"),
                 "%s: at_run_time of %s: %s" % (lib, p["id"], rt))
    recs = collections.OrderedDict()
    for line in open(d + "/points.jsonl"):
        r = json.loads(line)
        recs[(r["collective"], r["name"], r["size_B"])] = r
    need(len(recs) == len(jobs[0]["points"]) == 12, "%s: %d records" % (lib, len(recs)))
    for k, r in recs.items():
        need(r["status"] == "ok" and r["check"]["verdict"] == "ok", "%s %s: %s %s" % (lib, k, r["status"], r["reason"]))
        e, q = r["effective"], r["requested"]
        if r["kind"] == "native" and r["name"] == "default":
            need(e["algorithm"] == "default" and e["algorithm_source"] == "mpi_t",
                 "%s %s: the default after a forced point reads %s (%s)" % (lib, k, e["algorithm"], e["algorithm_source"]))
        elif r["kind"] == "native":
            need(q["knobs"]["algorithm"] == r["name"] and q["forced_by"] == q["knobs"]["forced_by"],
                 "%s %s: requested knobs %s" % (lib, k, q["knobs"]))
    if lib == "openmpi":
        for size, alg, src in ((8192, "ring", "mpi_t"), (8, "recursive_doubling", "known_fallback")):
            e = recs[("allreduce", "ring", size)]["effective"]
            need(e["algorithm"] == alg and e["algorithm_source"] == src, "openmpi ring at %d: %s" % (size, e))
        e = recs[("bcast", "binomial", 8192)]["effective"]
        need(e["algorithm"] == "binomial" and e["algorithm_source"] == "mpi_t", "openmpi binomial: %s" % e)
        spy = collections.Counter(open(t + "/spy.log").read().splitlines())
        for line in ("allreduce ring count=1024", "bcast binomial count=1024", "bcast basic_linear count=1024"):
            need(spy[line] >= 4, "the spy saw %r %d times" % (line, spy[line]))
    else:
        e = recs[("allreduce", "reduce_scatter_allgather", 8)]["effective"]
        need(e["algorithm_source"] == "reported_fallback", "mpich rsag at 8 B: %s" % e)
        e = recs[("allreduce", "reduce_scatter_allgather", 8192)]["effective"]
        need(e["algorithm_source"] != "reported_fallback", "mpich rsag at 8 KiB fell back: %s" % e)
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF2
        pass forced_natives_in_the_same_launch_run_what_was_forced
    else
        fail forced_natives_in_the_same_launch_run_what_was_forced "$(tail -c 2000 "$tmp/same.out")"
    fi
else
    cat "$tmp/same-openmpi.err" "$tmp/same-mpich.err"
    fail forced_natives_in_the_same_launch_run_what_was_forced "exit status $rc, $rc2 (or no build/openmpi/tune_spy.so)"
fi

# The roofline: cached per launch below 1 MiB (the three points of 4 KiB
# carry one measurement), measured again right before every point from
# 1 MiB (bench_roof.c, ROOF_EACH_B: the three of 2 MiB carry three).
cat >"$tmp/roofeach.json" <<'EOF2'
{
  "schema_version": 1,
  "libraries": ["openmpi"],
  "collectives": [{"name": "allreduce", "implementations": ["native:default",
    "generated:allreduce_ring", "generated:allreduce_recursive_doubling"]}],
  "sizes": [4096, 2097152],
  "ranks": 2,
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 5, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 120
}
EOF2
"$collgen" run "$tmp/roofeach.json" --out "$tmp/roofeach" --quiet --no-report >/dev/null 2>"$tmp/roofeach.err"
rc=$?
if [ "$rc" -eq 0 ] && "$py" - "$tmp/roofeach" <<'EOF2'; then
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/points.jsonl")]
by = {}
for r in recs:
    ro = r["roofline"]
    by.setdefault(r["size_B"], []).append((ro["p2p_ns"], ro["reduce_ns"], ro["limit_ns"]))
ok = len(recs) == 6 and all(r["status"] == "ok" for r in recs)
ok = ok and len(set(by[4096])) == 1 and len(set(by[2097152])) == 3
sys.exit(0 if ok else 1)
EOF2
    pass roofline_is_measured_again_for_every_point_from_1_MiB
else
    cat "$tmp/roofeach.err"
    fail roofline_is_measured_again_for_every_point_from_1_MiB "exit status $rc"
fi

# Kill and resume: SIGKILL to the runner's process group once records appear,
# a partial line as a write cut short would leave, then --resume.
cat >"$tmp/long.json" <<'EOF'
{
  "schema_version": 1,
  "libraries": ["openmpi", "mpich"],
  "collectives": ["allreduce", "allgather"],
  "sizes": [64, 4096, 65536, 262144],
  "ranks": 2,
  "implementations": ["native:default", "generated:*"],
  "timing": { "warmup": 1, "min_reps": 100, "max_reps": 100, "budget_s": 10 },
  "timeout_s": 120
}
EOF
t0=$SECONDS
setsid "$collgen" run "$tmp/long.json" --out "$tmp/kill" --quiet --no-report >"$tmp/kill.out" 2>&1 &
runner=$!
disown "$runner" # no "Killed" message from this shell
for _ in $(seq 1500); do
    [ -s "$tmp/kill/points.jsonl" ] && break
    sleep 0.02
done
kill -KILL -- "-$runner" 2>/dev/null
# The job's supervisor stops the job it was running; wait for that before
# writing to points.jsonl here (a bench still appending would interleave).
for _ in $(seq 300); do
    leftovers "$tmp/kill" || break
    sleep 0.1
done
before=$(wc -l <"$tmp/kill/points.jsonl" 2>/dev/null || echo 0)
printf '{"schema_version": 1, "point_id": "allreduce-' >>"$tmp/kill/points.jsonl"
ls "$tmp/kill/jobs" | sed -n 's/^job-\([0-9]*\)\.json$/\1/p' | sort >"$tmp/jobs.before"
"$collgen" run --resume "$tmp/kill" --quiet --no-report >"$tmp/resume.out" 2>"$tmp/resume.err"
rc=$?
st=$(check_once "$tmp/kill" 2>&1)
# The resume's launches get run ids no earlier launch had.
ls "$tmp/kill/jobs" | sed -n 's/^job-\([0-9]*\)\.json$/\1/p' | sort >"$tmp/jobs.after"
old_max=$(sort -n "$tmp/jobs.before" | tail -1)
new_ids=$(comm -13 "$tmp/jobs.before" "$tmp/jobs.after")
fresh=1
[ -n "$new_ids" ] || fresh=0
for n in $new_ids; do
    [ "$n" -gt "${old_max:-0}" ] || fresh=0
done
total=$(planned "$tmp/kill")
if [ "$rc" -eq 0 ] && [ "$st" = "ok $total" ] && [ "$before" -ge 1 ] && [ "$before" -lt "$total" ] &&
    grep -q 'cut a partial last line' "$tmp/resume.err" && [ "$fresh" = 1 ] && ! leftovers "$tmp/kill"; then
    pass "kill_and_resume_loses_and_repeats_no_point ($before of $total before the kill, $((SECONDS - t0)) s)"
else
    cat "$tmp/resume.err"
    fail kill_and_resume_loses_and_repeats_no_point "exit status $rc, $before records before the kill, statuses: $st"
fi

cat >"$tmp/slow.json" <<'EOF'
{
  "schema_version": 1,
  "libraries": ["openmpi"],
  "collectives": ["allreduce"],
  "sizes": [8, 4194304],
  "ranks": 2,
  "implementations": ["native:default"],
  "timing": { "warmup": 1, "min_reps": 100000, "max_reps": 100000, "budget_s": 1000 },
  "timeout_s": 3
}
EOF
"$collgen" run "$tmp/slow.json" --out "$tmp/slow" --quiet --no-report >/dev/null 2>"$tmp/slow.err"
rc=$?
st=$(check_once "$tmp/slow" 2>&1)
if [ "$rc" -eq 1 ] && echo "$st" | grep -q '^timeout [12]$' && ! leftovers "$tmp/slow"; then
    pass real_job_past_its_timeout_records_timeout
else
    cat "$tmp/slow.err"
    fail real_job_past_its_timeout_records_timeout "exit status $rc, statuses: $st"
fi

# Micro-benchmarks under virtual nodes: 4 ranks as 2 nodes x 2 (CG_PPN=2)
# and as the irregular 3 + 1 (CG_PPN=3, where the micro-benchmarks are left
# out); both libraries. Every record ok and checked; the records carry the
# node shape requested and the one the runtime's topology found.
cat >"$tmp/micro.json" <<'EOF2'
{
  "schema_version": 1,
  "libraries": ["openmpi", "mpich"],
  "collectives": ["allreduce", { "name": "bcast", "roots": [0, 1] },
                  { "name": "allgather", "in_place": [false, true] }],
  "sizes": [64, 65536],
  "ranks": 4,
  "implementations": ["native:default"],
  "virtual_ranks_per_node": [2, 3],
  "micro": { "lane_pattern": {}, "multi_collective": {} },
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 60
}
EOF2
t0=$SECONDS
"$collgen" run "$tmp/micro.json" --out "$tmp/micro" --quiet --no-report >"$tmp/micro.out" 2>"$tmp/micro.err"
rc=$?
st=$(check_once "$tmp/micro" 2>&1)
if [ "$rc" -eq 0 ] && [ "$st" = "ok $(planned "$tmp/micro")" ] && "$py" - "$tmp/micro" <<'EOF2'; then
import glob, json, os, sys
d = sys.argv[1]
c = json.load(open(d + "/campaign.json"))
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
plan = {p["id"]: (j, p) for j in c["plan"]["jobs"] for p in j["points"]}
need(sorted({j["virtual_ranks_per_node"] for j in c["plan"]["jobs"]}) == [2, 3], "jobs' shapes")
for f in glob.glob(d + "/jobs/job-*.json"):
    jf = json.load(open(f))
    need(jf["virtual_ranks_per_node"] in (2, 3) and jf["ranks_per_node"] == 4, "job file shape")
for f in glob.glob(d + "/run-*.json"):
    need(json.load(open(f)).get("env", {}).get("CG_PPN") in ("2", "3"), "run metadata without CG_PPN")
names = {}
for line in open(d + "/points.jsonl"):
    r = json.loads(line)
    job, p = plan[r["point_id"]]
    q, e = r["requested"], r["effective"]
    v = job["virtual_ranks_per_node"]
    need("-p4vppn%d-" % v in r["point_id"], "id %s" % r["point_id"])
    need(q["node_shape"] == e["node_shape"] == "virtual (CG_PPN)", "node_shape %s" % e["node_shape"])
    need(q["ranks_per_node"] == e["ranks_per_node"] == v, "ranks_per_node")
    need(q["regular"] == e["regular"] == (v == 2), "regular at %d" % v)
    need(v == 2 or "not a multiple of CG_PPN = 3" in (e["irregular_why"] or ""), "why %s" % e["irregular_why"])
    need(r["diff"] == [], "diff %s" % r["diff"])
    need(r["check"]["verdict"] == "ok" and r["check"]["reference"] == "formula", "check %s" % r["check"])
    need(os.path.exists(os.path.join(d, r["raw"])), "raw file")
    if r["kind"] != "micro":
        need(q["params"] is None and r["kind"] == "native", "native params")
        continue
    need(v == 2, "a micro-benchmark at CG_PPN=3")
    k = q["params"]["k"]
    need(q["params"] == e["params"] == {"k": k} and k in (1, 2), "params %s %s" % (q["params"], e["params"]))
    need(e["algorithm_source"] == "micro" and e["algorithm"] == r["name"] and r["tags"] is None, "micro effective")
    names.setdefault(r["library"], set()).add(r["name"])
    count = q["count"]
    if r["collective"] == "lane_pattern":
        need(r["name"] == "lane_pattern(k=%d)" % k and r["size_B"] == count * 8, "lane_pattern size")
        need(r["bandwidth"]["busbw_factor"] == 1, "lane_pattern busbw")
    else:
        need(r["name"] == "multi_collective(k=%d)" % k, "multi name")
        # One lane's collective: 2 ranks, one per node.
        lane = {"allreduce": (1, 1.0), "bcast": (1, 1.0), "allgather": (2, 0.5)}[r["collective"]]
        need(r["size_B"] == count * 8 * lane[0] and abs(r["bandwidth"]["busbw_factor"] - lane[1]) < 1e-9,
             "%s size %s busbw %s" % (r["collective"], r["size_B"], r["bandwidth"]))
want = {"lane_pattern(k=1)", "lane_pattern(k=2)", "multi_collective(k=1)", "multi_collective(k=2)"}
need(names == {"openmpi": want, "mpich": want}, "micro names %s" % names)
for b in sorted(set(bad))[:10]:
    print("#", b)
sys.exit(1 if bad else 0)
EOF2
    pass "micro_benchmarks_under_virtual_nodes_record_ok_and_shapes ($(planned "$tmp/micro") points, $((SECONDS - t0)) s)"
else
    cat "$tmp/micro.err"
    fail micro_benchmarks_under_virtual_nodes_record_ok_and_shapes "exit status $rc, statuses: $st"
fi

# A micro-benchmark whose data arrive wrong (CG_BENCH_CORRUPT=<benchmark>
# flips a byte of rank 0's result after the checked call) is failed_check,
# untimed; the other points of the job are ok.
for victim in lane_pattern multi_collective; do
    cat >"$tmp/mcorrupt-$victim.json" <<EOF2
{
  "schema_version": 1,
  "libraries": ["openmpi"],
  "collectives": ["allreduce"],
  "sizes": [64],
  "ranks": 4,
  "implementations": ["native:default"],
  "virtual_ranks_per_node": 2,
  "micro": { "lane_pattern": {}, "multi_collective": {} },
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "env": { "CG_BENCH_CORRUPT": "$victim" },
  "timeout_s": 60
}
EOF2
    "$collgen" run "$tmp/mcorrupt-$victim.json" --out "$tmp/mcorrupt-$victim" --quiet --no-report >/dev/null 2>"$tmp/mcorrupt.err"
done
if "$py" - "$tmp" <<'EOF2'; then
import json, sys
bad = 0
for victim in ("lane_pattern", "multi_collective"):
    recs = [json.loads(l) for l in open("%s/mcorrupt-%s/points.jsonl" % (sys.argv[1], victim))]
    hits = [r for r in recs if r["name"].startswith(victim + "(")]
    bad += len(hits) != 2 or len(recs) != 5
    for r in recs:
        hit = r in hits
        ok = r["status"] == ("failed_check" if hit else "ok")
        if hit:
            ok = ok and r["timing"] is None and r["check"]["verdict"] == "wrong"
            ok = ok and r["reason"].startswith("1 element wrong on 1 of 4 ranks")
        if not ok:
            print("#", victim, r["name"], r["status"], r["reason"])
            bad += 1
sys.exit(1 if bad else 0)
EOF2
    pass wrong_micro_benchmark_data_is_recorded_as_failed_check
else
    cat "$tmp/mcorrupt.err"
    fail wrong_micro_benchmark_data_is_recorded_as_failed_check
fi

# bench on its own (a job file written here): a parameter the schedule does
# not have in this build, and more lanes than a node holds, are error
# records with the reason, and the job goes on.
mkdir -p "$tmp/pjob"
cat >"$tmp/pjob/job.json" <<EOF2
{ "schema_version": 1, "campaign": "pjob", "run_id": 1, "library": "openmpi", "ranks": 2,
  "ranks_per_node": 2, "virtual_ranks_per_node": null,
  "timing": { "sync": "barrier", "warmup": 0, "min_reps": 2, "max_reps": 2 },
  "points": [
    { "id": "a", "seq": 1, "collective": "allreduce", "impl": "generated:allreduce_ring(radix=4)",
      "count": 8, "datatype": "double", "op": "sum", "root": 0, "in_place": false },
    { "id": "b", "seq": 2, "collective": "lane_pattern", "impl": "micro:lane_pattern(k=3)",
      "count": 8, "datatype": "double", "op": "sum", "root": 0, "in_place": false },
    { "id": "c", "seq": 3, "collective": "allreduce", "impl": "micro:multi_collective(k=2)",
      "count": 8, "datatype": "double", "op": "sum", "root": 0, "in_place": false } ],
  "out": { "points": "$tmp/pjob/points.jsonl", "raw_dir": "$tmp/pjob/raw", "run_meta": "$tmp/pjob/run-1.json" } }
EOF2
CG_MPIRUN_TIMEOUT=60 tests/mpirun.sh openmpi 2 build/openmpi/bench "$tmp/pjob/job.json" >"$tmp/pjob/log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && "$py" - "$tmp/pjob/points.jsonl" <<'EOF2'; then
import json, sys
r = {x["point_id"]: x for x in map(json.loads, open(sys.argv[1]))}
ok = r["a"]["status"] == "error" and 'schedule allreduce_ring has no tunable parameter "radix"' in r["a"]["reason"]
# requested params: the ones asked for over the schedule's defaults (segments=1)
ok = ok and r["a"]["name"] == "allreduce_ring(radix=4)" and r["a"]["requested"]["params"] == {"radix": 4, "segments": 1}
ok = ok and r["b"]["status"] == "error" and "takes 3 ranks of each node, and the nodes hold 2" in r["b"]["reason"]
ok = ok and r["c"]["status"] == "ok" and r["c"]["effective"]["node_shape"] == "real"
sys.exit(0 if ok else 1)
EOF2
    pass bench_refuses_unknown_parameters_and_lanes_beyond_the_node
else
    cat "$tmp/pjob/log"
    fail bench_refuses_unknown_parameters_and_lanes_beyond_the_node "exit status $rc"
fi

# float16 and bfloat16 are the GPU mode's (collgen run refuses them for an
# MPI library: tests/descriptors/bad/float16_over_mpi.json): bench, given
# them in a job file written here, records their points as skipped with the
# reason, and the job goes on (a double point after them is ok).
mkdir -p "$tmp/hjob"
cat >"$tmp/hjob/job.json" <<EOF2
{ "schema_version": 1, "campaign": "hjob", "run_id": 1, "library": "openmpi", "ranks": 1,
  "ranks_per_node": 1, "virtual_ranks_per_node": null,
  "timing": { "sync": "barrier", "warmup": 0, "min_reps": 2, "max_reps": 2 },
  "points": [
    { "id": "h", "seq": 1, "collective": "allreduce", "impl": "native:default",
      "count": 8, "datatype": "float16", "op": "sum", "root": 0, "in_place": false },
    { "id": "b", "seq": 2, "collective": "allgather", "impl": "generated:allgather_ring",
      "count": 8, "datatype": "bfloat16", "root": 0, "in_place": false },
    { "id": "d", "seq": 3, "collective": "allreduce", "impl": "native:default",
      "count": 8, "datatype": "double", "op": "sum", "root": 0, "in_place": false } ],
  "out": { "points": "$tmp/hjob/points.jsonl", "raw_dir": "$tmp/hjob/raw", "run_meta": "$tmp/hjob/run-1.json" } }
EOF2
CG_MPIRUN_TIMEOUT=60 tests/mpirun.sh openmpi 1 build/openmpi/bench "$tmp/hjob/job.json" >"$tmp/hjob/log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && "$py" - "$tmp/hjob/points.jsonl" <<'EOF2'; then
import json, sys
r = {x["point_id"]: x for x in map(json.loads, open(sys.argv[1]))}
ok = len(r) == 3 and r["d"]["status"] == "ok"
for i, dt in (("h", "float16"), ("b", "bfloat16")):
    x = r[i]
    ok = ok and x["status"] == "skipped" and x["requested"]["datatype"] == dt and x["size_B"] == 16
    ok = ok and x["reason"].startswith("datatype %s: MPI has no standard 16-bit floating-point type" % dt)
    ok = ok and "build/cuda/bench_cuda" in x["reason"] and x["timing"] is None and x["check"] is None
sys.exit(0 if ok else 1)
EOF2
    pass bench_records_float16_and_bfloat16_points_as_skipped
else
    cat "$tmp/hjob/log"
    head -c 2000 "$tmp/hjob/points.jsonl" 2>/dev/null
    fail bench_records_float16_and_bfloat16_points_as_skipped "exit status $rc"
fi

# A real parameter sweep, once the library has a schedule with a ranged
# parameter (emitted/registry.c lists it with .params): its least and
# greatest values at 4 ranks as 2 nodes x 2, both recorded in requested and
# effective.
ranged=$(sed -n 's/^    { "\([a-z_0-9]*\)", \(-\?[0-9]*\), \(-\?[0-9]*\), \(-\?[0-9]*\) },$/\1 \3 \4/p' emitted/registry.c | head -1)
sched=$(grep -B1 -m1 '^    { "[a-z_0-9]*", -\?[0-9]*, -\?[0-9]*, -\?[0-9]* },$' emitted/registry.c |
    sed -n 's/^static const struct cg_param_info params_\([a-z_0-9]*\)\[\] = {$/\1/p')
if [ -z "$ranged" ] || [ -z "$sched" ]; then
    skip real_parameter_sweep_records_requested_and_effective_params "no schedule has a ranged parameter yet (emitted/registry.c)"
else
    read -r pname lo hi <<<"$ranged"
    coll=$("$collgen" list | awk -v s="$sched" '$1 == s { print $2 }')
    cat >"$tmp/psweep.json" <<EOF2
{
  "schema_version": 1,
  "libraries": ["openmpi"],
  "collectives": [{ "name": "$coll", "implementations": ["generated:$sched"] }],
  "sizes": [64],
  "ranks": 4,
  "virtual_ranks_per_node": 2,
  "params": { "$sched": { "$pname": [$lo, $hi] } },
  "timing": { "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.02 },
  "timeout_s": 60
}
EOF2
    "$collgen" run "$tmp/psweep.json" --out "$tmp/psweep" --quiet --no-report >/dev/null 2>"$tmp/psweep.err"
    rc=$?
    if [ "$rc" -eq 0 ] && "$py" - "$tmp/psweep/points.jsonl" "$sched" "$pname" "$lo" "$hi" <<'EOF2'; then
import json, sys
path, sched, pname, lo, hi = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
recs = [json.loads(l) for l in open(path)]
vals = set()
ok = len(recs) == (1 if lo == hi else 2)
for r in recs:
    v = r["requested"]["params"][pname]
    vals.add(v)
    ok = ok and r["status"] == "ok" and r["name"] == "%s(%s=%d)" % (sched, pname, v)
    ok = ok and r["effective"]["params"][pname] == v and r["diff"] == []
    ok = ok and r["schedule_file"] and r["check"]["verdict"] == "ok"
sys.exit(0 if ok and vals == {lo, hi} else 1)
EOF2
        pass "real_parameter_sweep_records_requested_and_effective_params ($sched $pname=$lo,$hi)"
    else
        cat "$tmp/psweep.err"
        fail real_parameter_sweep_records_requested_and_effective_params "exit status $rc"
    fi
fi

# A binary started without its launcher runs as singletons: bench exits 3.
fixture "$tmp/single.json" '["env", "CG_EXPECT_NP={ranks}", "{program}", "{job}"]'
"$collgen" run "$tmp/t2.json" --platform "$tmp/single.json" --out "$tmp/single" --quiet --no-report >/dev/null 2>"$tmp/single.err"
rc=$?
st=$(check_once "$tmp/single" 2>&1)
if [ "$rc" -eq 1 ] && [ "$st" = "error $(planned "$tmp/single")" ] && grep -q '"reason":"wrong launcher (exit status 3)' "$tmp/single/points.jsonl"; then
    pass wrong_launcher_with_real_bench_is_caught
else
    cat "$tmp/single.err"
    fail wrong_launcher_with_real_bench_is_caught "exit status $rc, statuses: $st"
fi

[ "$failed" -eq 0 ]
