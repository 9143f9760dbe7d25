#!/usr/bin/env bash
# tests/run_slurm.sh - campaigns through real Slurm on this machine.
#
# Starts a private Slurm 22.05 of one node (../shared/design/NATIVE.md has
# the facts): munged as the munge user on a socket of its own, slurmctld and
# slurmd as root, all with a slurm.conf in a scratch directory and ports
# nobody uses, then runs descriptors/platforms/slurm-example.json as it is
# shipped:
#
#   - a small campaign (tests/descriptors/slurm-run.json: 2 ranks, Open MPI
#     through srun --mpi=pmix, MPICH through --mpi=pmi2, four batch jobs)
#     whose records are those of the same test run locally;
#   - the runner killed with SIGKILL in the middle of a job, and resumed at
#     once: the supervisor cancels the batch job, and every point ends with
#     exactly one record;
#   - the runner and its supervisor killed together, so the batch job stays
#     in the queue: the resume waits for it (squeue) before it runs anything;
#   - a batch script that fails (a `module` line, which plain Slurm lacks):
#     the points' reason is the job log's line, not "could not be executed".
#
# The daemons are stopped by their pids at the end, whatever happens.
# `tests/run_slurm.sh --why-not` prints why the tests cannot run here (not
# root, Slurm or munge not installed: harness/setup.sh installs them) and
# exits 0, or exits 1 when they can; tests/run_all.sh skips with that line.
# One line per case: "PASS slurm <name>" or "FAIL slurm <name> (why)".
# No timing assertions.
set -u
cd "$(dirname "$0")/.."

why_not() {
    local b
    [ "$(id -u)" = 0 ] || { echo "not root: slurmd and munged (as the munge user) need root"; return 0; }
    for b in munged mungekey slurmctld slurmd sbatch squeue scancel srun setpriv; do
        command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$b" >/dev/null 2>&1 || {
            echo "$b is not installed (harness/setup.sh installs slurm-wlm and munge)"
            return 0
        }
    done
    id munge >/dev/null 2>&1 || { echo "there is no munge user (the munge package makes it)"; return 0; }
    return 1
}

if [ "${1:-}" = "--why-not" ]; then
    why_not && exit 0
    exit 1
fi
if reason=$(why_not); then
    echo "SKIP slurm all ($reason)"
    exit 0
fi
export PATH=$PATH:/usr/sbin

collgen=build/collgen
py=/usr/bin/python3
[ -x "$py" ] || py=python3
failed=0
pass() { echo "PASS slurm $1"; }
fail() {
    echo "FAIL slurm $1${2:+ ($2)}"
    failed=$((failed + 1))
}

if [ ! -x "$collgen" ] || [ ! -x build/openmpi/bench ] || [ ! -x build/mpich/bench ]; then
    fail built "run ninja first ($collgen, build/openmpi/bench, build/mpich/bench)"
    exit 1
fi

# Scratch: the munge socket's directory must be reachable by the munge user.
sd=$(mktemp -d /tmp/cg-slurm.XXXXXX)
chmod 755 "$sd"
pids=()
stop_daemons() {
    local p i
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    for i in $(seq 50); do
        local alive=0
        for p in "${pids[@]}"; do
            kill -0 "$p" 2>/dev/null && alive=1
        done
        [ "$alive" = 0 ] && break
        sleep 0.2
    done
    for p in "${pids[@]}"; do
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    pids=()
}
cleanup() {
    stop_daemons
    rm -rf "$sd"
}
trap cleanup EXIT

# Two free TCP ports for slurmctld and slurmd.
read -r ctld_port d_port < <("$py" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

mkdir -p "$sd/munge/key.d" "$sd/state" "$sd/spool"
chown -R munge:munge "$sd/munge"
chmod 755 "$sd/munge"
chmod 700 "$sd/munge/key.d"
asmunge() { setpriv --reuid=munge --regid=munge --init-groups "$@"; }
if ! asmunge mungekey --create --keyfile="$sd/munge/key.d/key" 2>"$sd/mungekey.err"; then
    fail daemons_start "mungekey: $(head -1 "$sd/mungekey.err")"
    exit 1
fi
# setpriv execs munged, so $! is munged's own pid (a shell function would
# put a subshell in between).
setpriv --reuid=munge --regid=munge --init-groups munged -F --socket="$sd/munge/sock" --key-file="$sd/munge/key.d/key" \
    --pid-file="$sd/munge/pid" --log-file="$sd/munge/log" --seed-file="$sd/munge/seed" \
    >"$sd/munged.out" 2>&1 &
pids+=($!)

cat >"$sd/slurm.conf" <<EOF
ClusterName=cgtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$sd/munge/sock
CredType=cred/munge
StateSaveLocation=$sd/state
SlurmdSpoolDir=$sd/spool
SlurmctldPidFile=$sd/slurmctld.pid
SlurmdPidFile=$sd/slurmd.pid
SlurmctldLogFile=$sd/slurmctld.log
SlurmdLogFile=$sd/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$sd/slurm.conf
for i in $(seq 50); do
    [ -S "$sd/munge/sock" ] && break
    sleep 0.1
done
slurmctld -D -i >"$sd/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost >"$sd/slurmd.out" 2>&1 &
pids+=($!)
state=
for i in $(seq 100); do
    state=$(sinfo --noheader --format=%T 2>/dev/null | head -1)
    [ "$state" = idle ] && break
    sleep 0.3
done
if [ "$state" != idle ]; then
    tail -3 "$sd/munged.out" "$sd/slurmctld.out" "$sd/slurmd.out"
    fail daemons_start "the node is '${state:-not listed}', not idle, after 30 s"
    exit 1
fi
pass "daemons_start (munged, slurmctld, slurmd; pids ${pids[*]})"

# check_once DIR: every point of the plan has exactly one record; prints the
# statuses as "status count" lines.
check_once() {
    "$py" tests/check_once.py "$1"
}

test=tests/descriptors/slurm-run.json
out=$sd/results
mkdir -p "$out"
npoints=$("$collgen" run "$test" --platform slurm-example --dry-run | awk '/^plan:/ { print $4 }')

# ---- a campaign, and the same one run locally --------------------------------

"$collgen" run "$test" --platform slurm-example --out "$out/slurm" --quiet --no-report \
    >"$sd/slurm.out" 2>"$sd/slurm.err"
rc=$?
st=$(check_once "$out/slurm" 2>&1)
if [ "$rc" -eq 0 ] && [ "$st" = "ok $npoints" ] && [ "$(ls "$out/slurm/jobs"/*.sbatch | wc -l)" -eq 4 ]; then
    pass "campaign_runs_through_sbatch_and_srun ($npoints points, 4 batch jobs)"
else
    cat "$sd/slurm.err"
    tail -3 "$out/slurm/logs/"*.slurm.log
    fail campaign_runs_through_sbatch_and_srun "exit status $rc, statuses: $st"
fi

"$collgen" run "$test" --out "$out/local" --quiet --no-report >"$sd/local.out" 2>"$sd/local.err"
rc=$?
why=$("$py" - "$out/slurm" "$out/local" <<'EOF'
import json, sys
def load(d):
    return {r["point_id"]: r for r in map(json.loads, open(d + "/points.jsonl"))}
def keys(r, pre=""):
    out = set()
    for k, v in r.items():
        out.add(pre + k)
        if isinstance(v, dict):
            out |= keys(v, pre + k + ".")
    return out
s, l = load(sys.argv[1]), load(sys.argv[2])
if sorted(s) != sorted(l):
    print("different point ids")
for i in s:
    if i not in l:
        continue
    a, b = s[i], l[i]
    if keys(a) != keys(b):
        print("%s: keys %s" % (i, sorted(keys(a) ^ keys(b))[:4]))
        break
    # Everything but what timing decides (repetitions, times, tag shares).
    same = ("status", "reason", "collective", "backend", "library", "kind", "name",
            "schedule_hash", "requested", "diff", "size_B", "check")
    bad = [k for k in same if a.get(k) != b.get(k)]
    ea = {k: v for k, v in a["effective"].items() if k != "reps"}
    eb = {k: v for k, v in b["effective"].items() if k != "reps"}
    if ea != eb:
        bad.append("effective")
    if bad:
        print("%s: %s differ" % (i, ", ".join(bad)))
        break
EOF
)
if [ "$rc" -eq 0 ] && [ -z "$why" ]; then
    pass records_are_those_of_a_local_run
else
    fail records_are_those_of_a_local_run "exit status $rc: $(echo "$why" | head -2 | tr '\n' ' ')"
fi

# ---- killed mid-job and resumed at once ------------------------------------------

# kill_during_job DIR N [SUPERVISOR_TOO]: starts the campaign in DIR, waits until
# batch job N is in the queue, then SIGKILLs the runner (and its supervisor).
kill_during_job() {
    local dir=$1 n=$2 both=${3:-} pid sup i
    "$collgen" run "$test" --platform slurm-example --out "$dir" --quiet --no-report \
        >"$dir.out" 2>"$dir.err" &
    pid=$!
    # Job N's script is written, and the queue holds it (by file and queue,
    # not by name: the name is what is tested).
    for i in $(seq 600); do
        [ -e "$dir/jobs/job-$n.sbatch" ] && [ -n "$(squeue --noheader 2>/dev/null)" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -n "$both" ]; then
        sup=$(pgrep -P "$pid")
        kill -KILL $sup "$pid"
    else
        kill -KILL "$pid"
    fi
    wait "$pid" 2>/dev/null
}

kill_during_job "$out/killed" 3
"$collgen" run --resume "$out/killed" --quiet --no-report >"$sd/killed.out" 2>"$sd/killed.err"
rc=$?
st=$(check_once "$out/killed" 2>&1)
if [ "$rc" -eq 0 ] && [ "$st" = "ok $npoints" ] && grep -q 'cancelled Slurm job' "$out/killed/logs/job-3.log" &&
    [ -z "$(squeue --noheader)" ]; then
    pass "killed_runner_resumes_across_batch_jobs_with_each_point_once ($(ls "$out/killed/jobs"/*.sbatch | wc -l) batch jobs)"
else
    cat "$sd/killed.err"
    fail killed_runner_resumes_across_batch_jobs_with_each_point_once "exit status $rc, statuses: $st"
fi

kill_during_job "$out/orphan" 3 both
left=$(squeue --noheader --format=%j | tr '\n' ' ')
"$collgen" run --resume "$out/orphan" --no-report >"$sd/orphan.out" 2>"$sd/orphan.err"
rc=$?
st=$(check_once "$out/orphan" 2>&1)
if [ -z "$left" ]; then
    fail resume_waits_for_a_batch_job_left_in_the_queue "the batch job ended before the resume started: nothing was tested"
elif [ "$rc" -eq 0 ] && [ "$st" = "ok $npoints" ] &&
    grep -q 'waiting for the Slurm job.* an earlier run of this campaign submitted' "$sd/orphan.err"; then
    pass "resume_waits_for_a_batch_job_left_in_the_queue (queue at resume: $left)"
else
    cat "$sd/orphan.err"
    fail resume_waits_for_a_batch_job_left_in_the_queue "exit status $rc, statuses: $st, queue: $left"
fi

# ---- a batch script that fails --------------------------------------------------

"$py" - "$sd/module.json" <<'EOF'
import json, sys
p = json.load(open("descriptors/platforms/slurm-example.json"))
p["setup"] = ["module load openmpi/4.1.4"]
json.dump(p, open(sys.argv[1], "w"), indent=1)
EOF
"$collgen" run "$test" --platform "$sd/module.json" --out "$out/module" --quiet --no-report \
    >"$sd/module.out" 2>"$sd/module.err"
rc=$?
st=$(check_once "$out/module" 2>&1)
reason=$("$py" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["reason"])' "$out/module/points.jsonl" 2>/dev/null)
case $reason in
"the batch job exited with status 127 (a command of its script was not found): "*"module: command not found") ok=1 ;;
*) ok=0 ;;
esac
if [ "$rc" -eq 1 ] && [ "$st" = "error $npoints" ] && [ "$ok" = 1 ] && grep -q "not ok: $npoints of $npoints" "$sd/module.out"; then
    pass failed_batch_script_is_reported_with_its_log_line
else
    fail failed_batch_script_is_reported_with_its_log_line "exit status $rc, statuses: $st, reason: $reason"
fi

stop_daemons
left=0
for p in $(cat "$sd/slurmctld.pid" "$sd/slurmd.pid" "$sd/munge/pid" 2>/dev/null); do
    kill -0 "$p" 2>/dev/null && left=1
done
if [ "$left" = 0 ]; then pass daemons_stopped_by_pid; else fail daemons_stopped_by_pid "a daemon is still running"; fi
[ "$failed" -eq 0 ]
