#!/usr/bin/python3
"""Writes tests/report/guideline/: a tiny campaign for the guideline report
and the profile of `collgen report` (tests/run_report.sh, harness/REPORT.md).

Two tables, medians chosen by hand (MEDIANS below, in ns):

  allreduce / openmpi / p=4 / double sum: native default, forced native ring,
  the mock-ups allreduce_reduce_bcast ("Allreduce <= Reduce + Bcast") and
  allreduce_rsb_allgather, and the generated allreduce_ring (not a mock-up).
      8 B    the mock-ups are slower than the default         -> holds
      1 KiB  reduce_bcast 0.95 of the default, 25 reps each   -> faster by < 10%: holds
      64 KiB reduce_bcast 0.75, but 3 noisy reps each         -> not significant
      1 MiB  reduce_bcast 0.625 (rsb_allgather 0.9875)        -> VIOLATION (rsb: holds)
      4 MiB  reduce_bcast 0.625                               -> VIOLATION
  allgather / mpich / p=4 / double: native default, forced native ring, the
  mock-up allgather_gather_bcast, and allgather_mystery, whose schedule file
  exists nowhere (cannot tell whether it is a mock-up: a note).
      64 B   gather_bcast 2x slower                           -> holds
      2 KiB  gather_bcast failed_check, native ring error     -> listed, not compared
      64 KiB gather_bcast 0.85                                -> VIOLATION

So guidelines.txt lists exactly three violations, and profile.json has, for
allreduce/openmpi/4: [0, 90] native:default, [91, 8192]
generated:allreduce_reduce_bcast, [8193, 262144] native:default, [262145,
null] native:ring; for allgather/mpich/4: [0, 11585] native:default, [11586,
null] generated:allgather_gather_bcast (boundaries floor(sqrt(a b))).

The schedules' summaries come from schedules/<collective>/<name>.json inside
the fixture (the campaign's "cwd" is written as @CWD@; the test puts the
copy's path there), and the records' schedule_hash is the FNV-1a 64 of those
files, as bench writes it.

Deterministic: rerunning it rewrites the same bytes. Run it from anywhere:
    /usr/bin/python3 tests/report/make_guideline_fixture.py
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/report/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixture import hash_name, reps_for, stats  # noqa: E402  (same directory)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "guideline")
CAMPAIGN = "guideline-fixture-20261201-120000"

SUMMARIES = {
    "allreduce_reduce_bcast": "Mock-up: Allreduce <= Reduce + Bcast. The library's reduce to "
                              "rank 0 (in place there), then its bcast.",
    "allreduce_rsb_allgather": "Mock-up: Allreduce <= Reduce_scatter_block + Allgather. Uneven "
                               "counts use MPI_Reduce_scatter and MPI_Allgatherv.",
    "allreduce_ring": "Reduce-scatter then allgather around a ring; 2(p-1) rounds, "
                      "bandwidth-optimal.",
    "allgather_gather_bcast": "Mock-up: Allgather <= Gather + Bcast. The library's gather to "
                              "rank 0, then its bcast of all p blocks.",
    # allgather_mystery: no file anywhere, on purpose.
}

# (collective, library, p, size_B) -> {impl: median ns or a list of raw reps}.
# impl: "default", "ring" (forced native), "g:<schedule>" (generated).
NOISY_DEFAULT = [50000, 60000, 75000]
NOISY_MOCK = [40000, 45000, 80000]
MEDIANS = {
    ("allreduce", "openmpi", 4, 8): {
        "default": 4500, "ring": 7000, "g:allreduce_reduce_bcast": 9000,
        "g:allreduce_rsb_allgather": 10000},
    ("allreduce", "openmpi", 4, 1024): {
        "default": 5000, "ring": 6000, "g:allreduce_reduce_bcast": 4750},
    ("allreduce", "openmpi", 4, 65536): {
        "default": NOISY_DEFAULT, "ring": 70000, "g:allreduce_reduce_bcast": NOISY_MOCK},
    ("allreduce", "openmpi", 4, 1048576): {
        "default": 800000, "ring": 450000, "g:allreduce_reduce_bcast": 500000,
        "g:allreduce_rsb_allgather": 790000, "g:allreduce_ring": 600000},
    ("allreduce", "openmpi", 4, 4194304): {
        "default": 3200000, "ring": 1900000, "g:allreduce_reduce_bcast": 2000000},
    ("allgather", "mpich", 4, 64): {
        "default": 10000, "g:allgather_gather_bcast": 20000, "g:allgather_mystery": 50000},
    ("allgather", "mpich", 4, 2048): {"default": 30000},
    ("allgather", "mpich", 4, 65536): {
        "default": 100000, "ring": 90000, "g:allgather_gather_bcast": 85000},
}


def fnv_file(path):
    with open(path, "rb") as f:
        data = f.read()
    h = 0xcbf29ce484222325
    for c in data:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def schedule_file(name):
    coll = "allgather" if name.startswith("allgather_") else "allreduce"
    return "schedules/%s/%s.json" % (coll, name[len(coll) + 1:])


def record(seq, coll, lib, p, size, impl, status="ok", reason=None, vals=None):
    gen = impl.startswith("g:")
    name = impl[2:] if gen else impl
    kind = "generated" if gen else "native"
    count = size // 8 if coll == "allreduce" else size // (8 * p)
    pid = "%s-%s-p%d-%s_%s-double-sum-r0-ip0-%dB" % (coll, lib, p, kind, name, size)
    forced = kind == "native" and name != "default"
    req = {"algorithm": name if forced else None, "forced_by": None, "count": count,
           "datatype": "double", "op": "sum", "root": 0, "in_place": False, "ranks": p,
           "ranks_per_node": p, "knobs": {"env": {}}, "reps": None}
    sfile = schedule_file(name) if gen and status != "error" else None
    shash = None
    if sfile is not None:
        path = os.path.join(OUT, sfile)
        shash = fnv_file(path) if os.path.exists(path) else "%016x" % hash_name(name)
    rec = {"schema_version": 1, "campaign": CAMPAIGN, "run_id": 1, "point_id": pid,
           "seq": seq, "status": status, "reason": reason, "collective": coll,
           "backend": "mpi", "library": lib, "kind": kind, "name": name,
           "schedule_file": sfile, "schedule_hash": shash, "requested": req,
           "effective": None, "diff": [], "size_B": size, "timing": None,
           "bandwidth": None, "check": None, "tags": [], "raw": None}
    if status == "ok":
        eff = dict(req)
        eff["reps"] = len(vals)
        eff["algorithm_source"] = "generated" if gen else "unobservable"
        rec["effective"] = eff
        rec["diff"] = ["reps"]
        rec["timing"] = stats(vals)
        rec["check"] = {"reference": "native" if gen else "formula", "elements_wrong": 0,
                        "max_error": 0, "verdict": "ok"}
        rec["raw"] = "raw/%s.txt" % pid
    elif status == "failed_check":
        rec["check"] = {"reference": "native", "elements_wrong": 3, "max_error": 1,
                        "verdict": "wrong"}
    return rec, pid


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "raw"))
    for name, summary in sorted(SUMMARIES.items()):
        coll = "allgather" if name.startswith("allgather_") else "allreduce"
        path = os.path.join(OUT, schedule_file(name))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"schedule": name, "collective": coll, "summary": summary,
                       "comment": "A stub for tests/run_report.sh: only the summary is read."},
                      f, indent=2)
            f.write("\n")
    lines = []
    seq = 0
    for (coll, lib, p, size), meds in sorted(MEDIANS.items()):
        for impl in sorted(meds):
            seq += 1
            m = meds[impl]
            vals = list(m) if isinstance(m, list) else reps_for(float(m), seq * 7919 + size)
            rec, pid = record(seq, coll, lib, p, size, impl, vals=vals)
            lines.append(json.dumps(rec))
            with open(os.path.join(OUT, "raw", pid + ".txt"), "w") as f:
                f.write("".join("%d\n" % v for v in vals))
    seq += 1
    rec, _ = record(seq, "allgather", "mpich", 4, 2048, "g:allgather_gather_bcast",
                    status="failed_check",
                    reason="3 of 256 elements differ from the native result (max error 1)")
    lines.append(json.dumps(rec))
    seq += 1
    rec, _ = record(seq, "allgather", "mpich", 4, 2048, "ring", status="error",
                    reason="the job exited with status 11: Segmentation fault")
    lines.append(json.dumps(rec))
    with open(os.path.join(OUT, "points.jsonl"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    campaign = {"schema_version": 1, "campaign": CAMPAIGN, "created_utc": "2026-12-01T12:00:00Z",
                "command_line": ["build/collgen", "run", "guideline-fixture"],
                "cwd": "@CWD@",
                "test": {"name": "guideline-fixture"},
                "platform": {"name": "local"}}
    with open(os.path.join(OUT, "campaign.json"), "w") as f:
        json.dump(campaign, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
