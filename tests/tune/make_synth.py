#!/usr/bin/python3
"""Writes a synthetic campaign for tests/run_tune.sh into DIR (argument):
a known best implementation per cell, and records that must never win.

Every time is a factor of a base time T(size) = 1000 + size / 10 ns:

  openmpi allreduce, p = 2, 4, 8 (one node), sizes 2^3 .. 2^20:
      native:default 1.0, native:recursive_doubling (coll_tuned 3) 0.5 up to
      4096 B and 2.0 above, native:ring (4) 2.0 up to 4096 B and 0.5 above,
      generated:allreduce_reduce_bcast 0.8.
  openmpi bcast, p = 2, 4, 8: native:default 1.0, native:binomial (6) 0.5 at
      p = 2 and 1.5 above, generated:bcast_knomial(radix=4) 1.5 at p = 2 and
      0.5 above.
  mpich allreduce, p = 4: native:default 1.0, native:recursive_doubling 0.5
      up to 4096 B and 2.0 above, native:smp the reverse,
      native:reduce_scatter_allgather 2.0 up to 4096 B and 0.6 above.
  mpich reduce, p = 4: native:default 1.0, native:binomial 0.5 up to 4096 B
      and 2.0 above, native:reduce_scatter_gather the reverse.
  nccl allreduce, p = 8 (1 node) and 16 (2 nodes of 8), sizes 2^10 .. 2^24:
      native:default 1.0, native:tree 0.5 up to 1 MiB and 2.0 above,
      native:ring the reverse.

Never winners, in every openmpi allreduce cell: generated:allreduce_fast
failed its check; native:basic_linear (1) is 0.01 but below the latency
floor; native:nonoverlapping (2) is 0.02 but ran ring (diff "algorithm");
native:segmented_ring (5) is 0.03 but ran in a launch whose transport
(roofline.p2p_ns) was 4x faster than the default's (collgen tune's launch
skew check; with --max-launch-skew 0 it wins every openmpi allreduce
cell). The other records of those cells carry the default's roofline.

So the best is: openmpi allreduce recursive_doubling <= 4096 B < ring;
openmpi bcast binomial at p = 2, bcast_knomial(radix=4) above; mpich
allreduce recursive_doubling <= 4096 B < smp; mpich reduce binomial <= 4096
B < reduce_scatter_gather; nccl
tree <= 1 MiB < ring; and the native default is 2x the best everywhere.
EXPECTED (below) is that table, for the test to import.

With --exports it writes instead a campaign for the Open MPI rules file's
other collectives (tests/run_tune.sh proves each under the spy), p = 2 and
4, the best 2x faster than the default, never coll_tuned's own choice:
bcast chain (2) up to 4096 B, scatter_allgather (8) above; reduce binary
(4) up to 4096 B, pipeline (3) above; alltoall pairwise (2) up to 4096 B,
modified_bruck (3) above (bytes: count x 8 x ranks); barrier tree (6) at
p = 2, double_ring (2) at p = 4.

Deterministic: rerunning it writes the same bytes.
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
from make_fixture import reps_for, stats  # noqa: E402

CAMPAIGN = "tune-synth-20261203-120000"
OMPI_IDS = {"recursive_doubling": 3, "ring": 4, "basic_linear": 1, "nonoverlapping": 2,
            "binomial": 6, "segmented_ring": 5}
# --exports: (collective, algorithm) -> coll_tuned's number (ompi_info).
OMPI_IDS_EXPORTS = {("bcast", "chain"): 2, ("bcast", "scatter_allgather"): 8,
                    ("reduce", "binary"): 4, ("reduce", "pipeline"): 3,
                    ("alltoall", "pairwise"): 2, ("alltoall", "modified_bruck"): 3,
                    ("barrier", "tree"): 6, ("barrier", "double_ring"): 2}
EXPORTS = "--exports" in sys.argv


def base(size):
    return 1000 + size / 10


def groups_exports():
    small = [2 ** k for k in range(3, 17)]
    out = []
    for p in (2, 4):
        for coll, lo, hi in (("bcast", "chain", "scatter_allgather"),
                             ("reduce", "binary", "pipeline"),
                             ("alltoall", "pairwise", "modified_bruck")):
            out.append(("openmpi", coll, p, p, small, {
                "native:default": lambda p, s: 1.0,
                "native:" + lo: lambda p, s: 0.5 if s <= 4096 else 2.0,
                "native:" + hi: lambda p, s: 2.0 if s <= 4096 else 0.5}))
        out.append(("openmpi", "barrier", p, p, [0], {
            "native:default": lambda p, s: 1.0,
            "native:tree": lambda p, s: 0.5 if p == 2 else 2.0,
            "native:double_ring": lambda p, s: 2.0 if p == 2 else 0.5}))
    return out


def groups():
    """(library, collective, p, ppn, sizes, {impl: factor function of (p, size)})."""
    if EXPORTS:
        return groups_exports()
    small = [2 ** k for k in range(3, 21)]
    big = [2 ** k for k in range(10, 25)]
    out = []
    for p in (2, 4, 8):
        out.append(("openmpi", "allreduce", p, p, small, {
            "native:default": lambda p, s: 1.0,
            "native:recursive_doubling": lambda p, s: 0.5 if s <= 4096 else 2.0,
            "native:ring": lambda p, s: 2.0 if s <= 4096 else 0.5,
            "generated:allreduce_reduce_bcast": lambda p, s: 0.8}))
    for p in (2, 4, 8):
        out.append(("openmpi", "bcast", p, p, small, {
            "native:default": lambda p, s: 1.0,
            "native:binomial": lambda p, s: 0.5 if p == 2 else 1.5,
            "generated:bcast_knomial(radix=4)": lambda p, s: 1.5 if p == 2 else 0.5}))
    out.append(("mpich", "allreduce", 4, 4, small, {
        "native:default": lambda p, s: 1.0,
        "native:recursive_doubling": lambda p, s: 0.5 if s <= 4096 else 2.0,
        "native:smp": lambda p, s: 2.0 if s <= 4096 else 0.5,
        "native:reduce_scatter_allgather": lambda p, s: 2.0 if s <= 4096 else 0.6}))
    out.append(("mpich", "reduce", 4, 4, small, {
        "native:default": lambda p, s: 1.0,
        "native:binomial": lambda p, s: 0.5 if s <= 4096 else 2.0,
        "native:reduce_scatter_gather": lambda p, s: 2.0 if s <= 4096 else 0.5}))
    for p in (8, 16):
        out.append(("nccl", "allreduce", p, 8, big, {
            "native:default": lambda p, s: 1.0,
            "native:tree": lambda p, s: 0.5 if s <= 1048576 else 2.0,
            "native:ring": lambda p, s: 2.0 if s <= 1048576 else 0.5}))
    return out


def expected():
    """{(library, collective, p, ppn, bytes): (best implementation key, {key: ns})}."""
    e = {}
    for lib, coll, p, ppn, sizes, impls in groups():
        for s in sizes:
            times = {k: round(base(s) * f(p, s)) for k, f in impls.items()}
            best = min(sorted(times), key=lambda k: times[k])
            e[(lib, coll, p, ppn, s)] = (best, times)
    return e


EXPECTED = None


def record(seq, lib, coll, p, ppn, size, key, median=None, status="ok", floor=False,
           ran=None, p2p=None):
    kind, name = key.split(":", 1)
    backend = "cuda" if lib == "nccl" else "mpi"
    pid = "%s-%s-p%d-q%d-%s_%s-double-sum-r0-ip0-%dB" % (coll, lib, p, ppn, kind,
                                                          name.replace("(", "_").replace(")", "").replace("=", ""), size)
    forced = kind == "native" and name != "default"
    env = {}
    if forced and lib == "openmpi":
        env = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
               "OMPI_MCA_coll_tuned_%s_algorithm" % coll:
               str(OMPI_IDS_EXPORTS[(coll, name)] if EXPORTS else OMPI_IDS[name])}
    elif forced and lib == "mpich":
        env = {"MPIR_CVAR_%s_INTRA_ALGORITHM" % coll.upper(): name}
    elif forced and lib == "nccl":
        env = {"NCCL_ALGO": name.capitalize()}
    params = {"radix": 4} if "(" in name else {}
    count = size // (8 * p) if coll == "alltoall" else size // 8
    req = {"algorithm": name if forced else ("default" if kind == "native" else name),
           "forced_by": None, "count": count, "datatype": "double", "op": "sum",
           "root": 0, "in_place": False, "ranks": p, "ranks_per_node": ppn,
           "node_shape": "real", "regular": True, "params": params,
           "knobs": {"algorithm": name if forced else None, "forced_by": None, "env": env,
                     "settings": {}}, "reps": None}
    rec = {"schema_version": 2, "campaign": CAMPAIGN, "run_id": 1, "point_id": pid,
           "seq": seq, "launch": {"index": 1, "of": 1, "point_id": pid},
           "status": status, "reason": None if status == "ok" else "3 elements wrong",
           "collective": coll, "backend": backend, "library": lib, "kind": kind,
           "name": name, "schedule_file": None, "schedule_hash": None,
           "requested": req, "effective": None, "diff": [], "size_B": size,
           "timing": None, "validity": None, "bandwidth": None, "check": None,
           "tags": None, "raw": None}
    if status == "ok":
        vals = reps_for(float(median), seq * 7919 + size)
        eff = dict(req)
        eff["reps"] = len(vals)
        eff["algorithm_source"] = "generated" if kind == "generated" else "mpi_t"
        rec["diff"] = []
        if ran is not None:
            eff["algorithm"] = ran
            eff["algorithm_source"] = "known_fallback"
            rec["diff"] = ["algorithm"]
        rec["effective"] = eff
        rec["timing"] = stats(vals)
        rec["validity"] = {"latency_floor_ns": 1000 if floor else 10,
                           "below_latency_floor": bool(floor), "oversubscribed": False,
                           "host_ranks": p, "host_cores": 16}
        rec["check"] = {"reference": "formula", "elements_wrong": 0, "max_error": 0,
                        "verdict": "ok"}
        rec["raw"] = "raw/%s.txt" % pid
        if p2p is not None:
            rec["roofline"] = {"recv_B": size, "reduce_B": size // 2, "copy_B": 0,
                               "p2p_ns": p2p, "p2p_GBps": size / p2p, "reduce_ns": 0,
                               "reduce_GBps": None, "copy_ns": 0, "copy_GBps": None,
                               "limit_ns": p2p, "overlap_limit_ns": p2p}
        return rec, pid, vals
    rec["check"] = {"reference": "formula", "elements_wrong": 3, "max_error": 1,
                    "verdict": "wrong"}
    return rec, pid, None


def main(out):
    os.makedirs(os.path.join(out, "raw"), exist_ok=True)
    lines = []
    seq = 0
    for lib, coll, p, ppn, sizes, impls in groups():
        for s in sizes:
            todo = [(k, round(base(s) * f(p, s)), {}) for k, f in sorted(impls.items())]
            if lib == "openmpi" and coll == "allreduce":
                gauge = round(base(s) * 0.8)
                todo = [(k, m, {"p2p": gauge}) for k, m, _ in todo]
                todo.append(("generated:allreduce_fast", None, {"status": "failed_check"}))
                todo.append(("native:basic_linear", round(base(s) * 0.01), {"floor": True}))
                todo.append(("native:nonoverlapping", round(base(s) * 0.02), {"ran": "ring"}))
                todo.append(("native:segmented_ring", round(base(s) * 0.03),
                             {"p2p": round(gauge / 4)}))
            for key, med, extra in todo:
                seq += 1
                rec, pid, vals = record(seq, lib, coll, p, ppn, s, key, med, **extra)
                lines.append(json.dumps(rec, sort_keys=True))
                if vals is not None:
                    with open(os.path.join(out, "raw", pid + ".txt"), "w") as f:
                        f.write("".join("%d\n" % v for v in vals))
    with open(os.path.join(out, "points.jsonl"), "w") as f:
        f.write("".join(line + "\n" for line in lines))
    with open(os.path.join(out, "campaign.json"), "w") as f:
        json.dump({"schema_version": 1, "campaign": CAMPAIGN,
                   "created_utc": "2026-12-03T12:00:00Z",
                   "command_line": ["tests/tune/make_synth.py"], "cwd": ".",
                   "test": {"name": "tune-synth"}, "platform": {"name": "local"}}, f, indent=2)
        f.write("\n")


EXPECTED = expected()

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--exports"]
    if len(args) != 1:
        sys.exit("usage: make_synth.py [--exports] DIR")
    main(args[0])
