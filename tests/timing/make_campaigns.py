#!/usr/bin/python3
"""Writes the synthetic campaigns of tests/run_timing.sh into OUTDIR:

  base/      schema-2 records, one launch: allreduce / openmpi / p=4 at 8 B,
             1 KiB and 64 KiB (native default, native ring, generated
             allreduce_ring), and a point only it has; run-1.json says Open
             MPI v4.1.4, UCX_TLS=sm
  new/       the same points, every median 2 % above base's (noise), except
             native ring at 64 KiB: 30 % above (the injected slowdown); a
             point only it has; run-1.json says v4.1.5, UCX_TLS=tcp
  noise/     base with every median 2 % above: no slowdown beyond 10 %
  base5/     base's points in 5 launches each (launch medians 1 % apart)
  new5/      new's in 5 launches each: ring 64 KiB 30 % slower in every one
  v1/        base written as schema 1 (no launch, no validity)
  v4/        one record of schema_version 4 (unknown: records are at 3)
  other/     points base does not have
  floor/     a report fixture: allreduce / openmpi / p=4 whose fastest
             (native ring at 8 B, 0.2 us) is below the latency floor (2 us),
             the mock-up allreduce_reduce_bcast below the floor at 1 KiB
             (0.5 of the default: no violation), and oversubscribed records
             (4 ranks on 2 cores); allgather / mpich / p=2 not
             oversubscribed, nothing below the floor

Repetitions: 40 per point, the median exact, spread +-1 %, shuffled
deterministically. Schedule files and hashes are this repository's
(schedules/allreduce/*.json), so the report finds the mock-up.

    /usr/bin/python3 tests/timing/make_campaigns.py OUTDIR
"""
import json
import math
import os
import shutil
import sys

REPS = 40
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def fnv_file(path):
    h = 0xcbf29ce484222325
    with open(path, "rb") as f:
        for c in f.read():
            h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def reps_for(median, seed):
    half = REPS // 2
    vals = [median * (1 + 0.01 * k / half) for k in range(-half, half)]
    vals.append(median)
    vals.sort()
    # The median of an even count is the mean of the middle two: make both it.
    vals[REPS // 2 - 1] = vals[REPS // 2] = median
    vals = [round(v) for v in vals[:REPS]]
    state = seed & 0x7FFFFFFF or 1
    for i in range(REPS - 1, 0, -1):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        j = state % (i + 1)
        vals[i], vals[j] = vals[j], vals[i]
    return vals


def quantile(s, q):
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def record(camp, seq, pid, coll, lib, p, size, kind, name, median, raw_dir, schema=2,
           launch=(1, 1), floor=2000.0, over=False):
    vals = reps_for(median, seq * 7919 + size + launch[0] * 31)
    s = sorted(vals)
    n = len(s)
    med = (s[n // 2 - 1] + s[n // 2]) / 2.0
    mean = sum(s) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in s) / (n - 1))
    rid = launch[0]
    lid = pid if launch[1] == 1 else "%s-L%d" % (pid, launch[0])
    count = size // 8
    gen = kind == "generated"
    sched = "schedules/%s/%s.json" % (coll, name[len(coll) + 1:]) if gen else None
    req = {"algorithm": name, "forced_by": None, "count": count, "datatype": "double",
           "op": "sum", "root": 0, "in_place": False, "ranks": p, "ranks_per_node": p,
           "node_shape": "real", "regular": True, "params": {} if gen else None,
           "knobs": {}, "reps": None}
    eff = dict(req)
    eff["reps"] = n
    eff["algorithm_source"] = "generated" if gen else "mpi_t"
    timing = {"aggregation": "latest_end_minus_window_start", "figure": "window",
              "sync": "window", "policy": "rse", "n": n, "warmup": 2, "stop": "rse",
              "min_ns": s[0], "median_ns": med, "mean_ns": mean, "stdev_ns": sd,
              "p5_ns": quantile(s, 0.05), "p25_ns": quantile(s, 0.25),
              "p75_ns": quantile(s, 0.75), "p95_ns": quantile(s, 0.95),
              "ci95_median_lo_ns": s[0], "ci95_median_hi_ns": s[-1],
              "rse": 1.2533 * sd / math.sqrt(n) / med, "span": None, "invalid": 0,
              "late_starts": 0, "window_ns": 100000, "clock_error_ns": 20.0,
              "clock_age_s": 0.1}
    factor = 2 * (p - 1) / p if coll == "allreduce" else (p - 1) / p
    rec = {"schema_version": schema, "campaign": camp, "run_id": rid, "point_id": lid,
           "seq": seq, "launch": {"index": launch[0], "of": launch[1], "point_id": pid},
           "status": "ok", "reason": None, "collective": coll, "backend": "mpi",
           "library": lib, "kind": kind, "name": name, "schedule_file": sched,
           "schedule_hash": fnv_file(os.path.join(REPO, sched)) if gen else None,
           "requested": req, "effective": eff, "diff": ["reps"], "size_B": size * (
               p if coll == "allgather" else 1), "timing": timing,
           "validity": {"latency_floor_ns": floor, "below_latency_floor": p > 1 and med < floor,
                        "oversubscribed": over, "host_ranks": p, "host_cores": 2 if over else p},
           "bandwidth": {"algbw_GBps": size / med, "busbw_GBps": size / med * factor,
                         "busbw_factor": factor},
           "check": {"reference": "native" if gen else "formula", "elements_wrong": 0,
                     "max_error": 0, "verdict": "ok"},
           "tags": None, "raw": "raw/%s.txt" % lid}
    if schema == 1:
        for k in ("launch", "validity"):
            del rec[k]
        for k in ("figure", "policy", "span", "invalid", "late_starts", "window_ns",
                  "clock_error_ns", "clock_age_s"):
            del rec["timing"][k]
        rec["timing"]["aggregation"] = "max_over_ranks_per_rep"
        rec["timing"]["sync"] = "barrier"
    with open(os.path.join(raw_dir, "%s.txt" % lid), "w") as f:
        f.write("".join("%d\n" % v for v in vals))
    return rec


POINTS = [  # (kind, name, size, base median ns)
    ("native", "default", 8, 5000), ("native", "ring", 8, 7000),
    ("generated", "allreduce_ring", 8, 8000),
    ("native", "default", 1024, 6000), ("native", "ring", 1024, 6500),
    ("generated", "allreduce_ring", 1024, 7000),
    ("native", "default", 65536, 60000), ("native", "ring", 65536, 50000),
    ("generated", "allreduce_ring", 65536, 55000),
]


def pid_of(coll, lib, p, kind, name, size):
    return "%s-%s-p%d-%s_%s-double-sum-r0-ip0-%dB" % (coll, lib, p, kind, name, size)


def write(d, camp, recs, version="Open MPI v4.1.4", ucx="sm", launches=1):
    with open(os.path.join(d, "points.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    for k in range(1, launches + 1):
        run = {"schema_version": 1, "run_id": k, "campaign": camp,
               "job_file": "%s/jobs/job-%d.json" % (camp, k), "started_utc": "2026-12-02T00:00:0%dZ" % k,
               "harness": {"program": "bench", "git_commit": "abc"},
               "mpi": {"library": "openmpi", "library_version": version, "standard": "3.1"},
               "ranks": 4, "ranks_per_node": 4, "hosts": ["vm"],
               "placement": [{"rank": r, "host": "vm", "local_rank": r, "core": r % 2,
                              "affinity_cpus": 2} for r in range(4)],
               "env": {"UCX_TLS": ucx, "OMPI_ARGV": "%s/jobs/job-%d.json" % (camp, k)},
               "timer": {"name": "CLOCK_MONOTONIC"}, "sync": "window",
               "latency": {"floor_ns": 2000.0}, "loadavg": [0.1 * k, 0.2, 0.3],
               "launch": {"index": k, "of": launches}}
        with open(os.path.join(d, "run-%d.json" % k), "w") as f:
            json.dump(run, f, indent=1)
    with open(os.path.join(d, "campaign.json"), "w") as f:
        json.dump({"schema_version": 1, "campaign": camp, "cwd": REPO,
                   "test": {"name": "fixture", "fnv1a64": "0"},
                   "platform": {"name": "local", "fnv1a64": "0"},
                   "resolved": {"launches": launches}}, f, indent=1)


def campaign(out, name, scale, extra=None, launches=1, schema=2, version="Open MPI v4.1.4",
             ucx="sm", points=POINTS, coll="allreduce"):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "raw"))
    recs, seq = [], 0
    for k in range(1, launches + 1):
        for kind, nm, size, med in points + (extra or []):
            seq += 1
            m = scale(kind, nm, size, med) * (1 + 0.005 * (k - (launches + 1) / 2)
                                               if launches > 1 else 1)
            recs.append(record(name, seq, pid_of(coll, "openmpi", 4, kind, nm, size), coll,
                               "openmpi", 4, size, kind, nm, m, os.path.join(d, "raw"),
                               schema=schema, launch=(k, launches)))
    write(d, name, recs, version=version, ucx=ucx, launches=launches)


def noise(kind, name, size, med):
    return med * 1.02


def slowdown(kind, name, size, med):
    return med * (1.30 if (name, size) == ("ring", 65536) else 1.02)


def floor_fixture(out):
    d = os.path.join(out, "floor")
    os.makedirs(os.path.join(d, "raw"))
    recs, seq = [], 0
    # allreduce / openmpi / p=4, oversubscribed; the fastest at 8 B below the floor.
    for kind, nm, size, med in [("native", "default", 8, 5000), ("native", "ring", 8, 200),
                                ("generated", "allreduce_ring", 8, 6000),
                                ("native", "default", 1024, 6000),
                                ("generated", "allreduce_reduce_bcast", 1024, 1500),
                                ("native", "ring", 1024, 5500)]:
        seq += 1
        recs.append(record("floor", seq, pid_of("allreduce", "openmpi", 4, kind, nm, size),
                           "allreduce", "openmpi", 4, size, kind, nm, med,
                           os.path.join(d, "raw"), over=True))
    # allgather / mpich / p=2, not oversubscribed, nothing below the floor.
    for kind, nm, size, med in [("native", "default", 64, 5000), ("native", "ring", 64, 4000)]:
        seq += 1
        recs.append(record("floor", seq, pid_of("allgather", "mpich", 2, kind, nm, size),
                           "allgather", "mpich", 2, size, kind, nm, med, os.path.join(d, "raw")))
    write(d, "floor", recs)


def main():
    out = sys.argv[1]
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    same = lambda kind, name, size, med: med  # noqa: E731
    campaign(out, "base", same, extra=[("native", "recursive_doubling", 8, 4000)])
    campaign(out, "new", slowdown, extra=[("native", "basic_linear", 8, 9000)],
             version="Open MPI v4.1.5", ucx="tcp")
    campaign(out, "noise", noise)
    campaign(out, "base5", same, launches=5)
    campaign(out, "new5", slowdown, launches=5)
    campaign(out, "v1", same, schema=1)
    campaign(out, "other", same, coll="allgather")
    d = os.path.join(out, "v4")
    shutil.copytree(os.path.join(out, "base"), d)
    lines = open(os.path.join(d, "points.jsonl")).read().splitlines()
    r = json.loads(lines[0])
    r["schema_version"] = 4
    lines[0] = json.dumps(r, separators=(",", ":"))
    open(os.path.join(d, "points.jsonl"), "w").write("\n".join(lines) + "\n")
    floor_fixture(out)


if __name__ == "__main__":
    main()
