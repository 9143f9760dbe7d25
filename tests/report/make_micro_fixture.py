#!/usr/bin/python3
"""Writes tests/report/micro/: a tiny campaign with two node shapes and
micro-benchmarks, for `collgen report` (tests/run_report.sh,
harness/REPORT.md, "Node shapes" and "Micro-benchmarks").

Medians chosen by hand (MEDIANS and MICRO below, in ns), Open MPI only:

  allreduce / p=4 / double sum under three node shapes
  (virtual_ranks_per_node "real", 2 and 3), so that native:default records
  of one size exist three times and must land in three tables:
      real: 1 node x 4       1 KiB default 5 us; 1 MiB default 800 us,
                             generated ring 600 us, mock-up reduce_bcast
                             760 us (0.95: holds)
      CG_PPN=2: 2 nodes x 2  1 KiB default 9 us, lane 7 us; 1 MiB default
                             1200 us, lane 700 us, reduce_bcast 900 us
                             (0.75: the one guideline VIOLATION)
      CG_PPN=3: irregular    1 KiB default 6 us, lane 6.5 us (its fallback);
                             regular false, irregular_why set (a note)
  bcast / p=4 / double, real only: a parameter sweep, generated
  bcast_knomial(radix=2) 9 us and bcast_knomial(radix=4) 4 us against the
  default 5 us at 1 KiB (winner g:knomial(radix=4)).

  Micro-benchmarks (kind micro):
      lane_pattern, p=4, CG_PPN=2 (2 nodes x 2), double:
          64 KiB  k=1 100 us, k=2 52 us     -> 1.92x the bandwidth: scales
          1 MiB   k=1 1000 us, k=2 800 us   -> 1.25x: partial
          1 KiB   k=2 failed_check          -> listed, never in the profile
      multi_collective allreduce, p=4, CG_PPN=2, 8 B:
                  k=1 10 us, k=2 20 us      -> only one costs as one
      multi_collective allreduce, p=8, CG_PPN=4 (2 nodes x 4), 8 B:
                  k=1 10, k=2 10.5, k=3 10.8, k=4 15 us
                                            -> up to 3 cost no more than one

So profile.json has node_shape and ranks_per_node in its keys (p=4 ran under
three shapes) and, for allreduce: real [0, 32768] native:default, [32769,
null] generated:allreduce_ring; CG_PPN=2 [0, null] generated:allreduce_lane;
CG_PPN=3 [0, null] native:default.

The mock-up's summary comes from this repository's
schedules/allreduce/reduce_bcast.json (campaign.json's cwd does not exist,
and the records carry no schedule_hash).

Deterministic: rerunning it rewrites the same bytes. Run it from anywhere:
    /usr/bin/python3 tests/report/make_micro_fixture.py
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in tests/report/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixture import reps_for, stats  # noqa: E402  (same directory)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "micro")
CAMPAIGN = "micro-fixture-20261202-120000"
IRREGULAR_WHY = "p = 4 is not a multiple of CG_PPN = 3 (the last node holds 1 ranks)"

# (collective, p, shape, size_B) -> {impl: median ns}; shape "real" or the
# virtual ranks per node; impl "default" or "g:<schedule>".
MEDIANS = {
    ("allreduce", 4, "real", 1024): {"default": 5000, "g:allreduce_ring": 6000},
    ("allreduce", 4, "real", 1048576): {
        "default": 800000, "g:allreduce_ring": 600000, "g:allreduce_reduce_bcast": 760000},
    ("allreduce", 4, 2, 1024): {"default": 9000, "g:allreduce_lane": 7000},
    ("allreduce", 4, 2, 1048576): {
        "default": 1200000, "g:allreduce_lane": 700000, "g:allreduce_reduce_bcast": 900000},
    ("allreduce", 4, 3, 1024): {"default": 6000, "g:allreduce_lane": 6500},
    ("bcast", 4, "real", 1024): {
        "default": 5000, "g:bcast_knomial(radix=2)": 9000, "g:bcast_knomial(radix=4)": 4000},
}

# (benchmark, collective, p, ranks per node, size_B) -> {k: median ns}.
MICRO = {
    ("lane_pattern", "lane_pattern", 4, 2, 65536): {1: 100000, 2: 52000},
    ("lane_pattern", "lane_pattern", 4, 2, 1048576): {1: 1000000, 2: 800000},
    ("multi_collective", "allreduce", 4, 2, 8): {1: 10000, 2: 20000},
    ("multi_collective", "allreduce", 8, 4, 8): {1: 10000, 2: 10500, 3: 10800, 4: 15000},
}


def shape_fields(p, shape):
    """requested and effective node-shape fields (FORMATS.md)."""
    virtual = shape != "real"
    rpn = shape if virtual else p
    regular = p % rpn == 0
    req = {"ranks_per_node": rpn, "node_shape": "virtual (CG_PPN)" if virtual else "real",
           "regular": regular}
    eff = dict(req)
    eff["irregular_why"] = None if regular else IRREGULAR_WHY
    return req, eff


def bandwidth(size, median, factor):
    algbw = size / median
    return {"algbw_GBps": round(algbw, 6), "busbw_GBps": round(algbw * factor, 6),
            "busbw_factor": factor}


def record(seq, coll, p, shape, size, kind, name, vals, status="ok", reason=None,
           params=None, factor=1.0, sfile=None, count=None):
    tag = "p%d" % p if shape == "real" else "p%dvppn%d" % (p, shape)
    safe = name.replace("(", ".").replace(")", "").replace("=", "_")
    pid = "%s-openmpi-%s-%s_%s-double-sum-r0-ip0-%dB" % (coll, tag, kind, safe, size)
    sreq, seff = shape_fields(p, shape)
    req = {"algorithm": name if kind == "micro" else None, "forced_by": None,
           "count": count if count is not None else size // 8, "datatype": "double",
           "op": "sum", "root": 0, "in_place": False, "ranks": p}
    req.update(sreq)
    req.update({"params": params, "knobs": {"env": {}}, "reps": None})
    rec = {"schema_version": 1, "campaign": CAMPAIGN, "run_id": 1, "point_id": pid,
           "seq": seq, "status": status, "reason": reason, "collective": coll,
           "backend": "mpi", "library": "openmpi", "kind": kind, "name": name,
           "schedule_file": sfile, "schedule_hash": None, "requested": req,
           "effective": None, "diff": [], "size_B": size, "timing": None,
           "bandwidth": None, "check": None, "tags": None if kind == "micro" else [],
           "raw": None}
    if status == "ok":
        eff = dict(req)
        eff.update(seff)
        eff["reps"] = len(vals)
        eff["algorithm_source"] = {"micro": "micro", "generated": "generated"}.get(kind, "mpi_t")
        if kind == "native":
            eff["algorithm"] = "default"
        rec["effective"] = eff
        rec["diff"] = ["reps"]
        rec["timing"] = stats(vals)
        rec["bandwidth"] = bandwidth(size, rec["timing"]["median_ns"], factor)
        rec["check"] = {"reference": "native" if kind == "generated" else "formula",
                        "elements_wrong": 0, "max_error": 0, "verdict": "ok"}
        rec["raw"] = "raw/%s.txt" % pid
    else:
        rec["check"] = {"reference": "formula", "elements_wrong": 2, "max_error": 1,
                        "verdict": "wrong"}
    return rec, pid


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "raw"))
    lines = []
    seq = 0

    def emit(rec, pid, vals):
        lines.append(json.dumps(rec))
        if vals is not None:
            with open(os.path.join(OUT, "raw", pid + ".txt"), "w") as f:
                f.write("".join("%d\n" % v for v in vals))

    for (coll, p, shape, size), meds in sorted(MEDIANS.items(), key=str):
        for impl in sorted(meds):
            seq += 1
            vals = reps_for(float(meds[impl]), seq * 7919 + size)
            gen = impl.startswith("g:")
            name = impl[2:] if gen else impl
            params = None
            if gen:
                params = {"radix": int(name[-2])} if "(radix=" in name else {}
            sfile = None
            if gen:
                base = name.split("(")[0]
                sfile = "schedules/%s/%s.json" % (coll, base[len(coll) + 1:])
            factor = 2 * (p - 1) / p if coll == "allreduce" else 1.0
            rec, pid = record(seq, coll, p, shape, size, "generated" if gen else "native",
                              name, vals, params=params, factor=factor, sfile=sfile)
            emit(rec, pid, vals)
    for (bench, coll, p, rpn, size), meds in sorted(MICRO.items(), key=str):
        nodes = p // rpn
        for k in sorted(meds):
            seq += 1
            vals = reps_for(float(meds[k]), seq * 7919 + size)
            # lane_pattern: factor 1; one lane's allreduce over the nodes.
            factor = 1.0 if bench == "lane_pattern" else 2 * (nodes - 1) / nodes
            rec, pid = record(seq, coll, p, rpn, size, "micro", "%s(k=%d)" % (bench, k), vals,
                              params={"k": k}, factor=factor)
            emit(rec, pid, vals)
    seq += 1
    rec, pid = record(seq, "lane_pattern", 4, 2, 1024, "micro", "lane_pattern(k=2)", None,
                      status="failed_check", params={"k": 2},
                      reason="2 of 128 elements differ from the exact data (max error 1)")
    emit(rec, pid, None)
    with open(os.path.join(OUT, "points.jsonl"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    campaign = {"schema_version": 1, "campaign": CAMPAIGN, "created_utc": "2026-12-02T12:00:00Z",
                "command_line": ["build/collgen", "run", "micro-fixture"],
                "cwd": "/nonexistent/micro-fixture",
                "test": {"name": "micro-fixture", "virtual_ranks_per_node": ["real", 2, 3]},
                "platform": {"name": "local"}}
    with open(os.path.join(OUT, "campaign.json"), "w") as f:
        json.dump(campaign, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
