#!/usr/bin/python3
"""make_fixture.py - writes tests/report/campaign/, the campaign directory
the report tests read (harness/FORMATS.md, schema_version 1).

A small, hand-designed campaign: allreduce under Open MPI and MPICH at p = 2
and 4, four sizes, the native default, two forced native algorithms (ring,
recursive_doubling) and two generated schedules with phase tags; allgather
under Open MPI at two sizes; one failed_check and one error record. The medians
are chosen by hand (MEDIANS below); every other number follows from them, so
tests/run_report.sh can check the table's winners and ratios by hand.

Raw repetitions: 25 per point, the median exactly as chosen, +-1% around it,
the two slowest stretched into a tail (1.3x, 1.6x) as real runs have. Two
cells are special: at allreduce/openmpi/p4/1 MiB the generated ring (455 us)
and the native ring (520 us) do not overlap (Mann-Whitney: significant); at
allreduce/mpich/p4/64 KiB the generated and the native recursive_doubling
have the same repetitions (not significant, p = 1).

Deterministic: rerunning it rewrites the same bytes. Run it from anywhere:
    /usr/bin/python3 tests/report/make_fixture.py
"""
import json
import math
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "campaign")
CAMPAIGN = "fixture-20261130-120000"
REPS = 25

# Medians in ns: (collective, library, p, size_B) -> {impl: median}.
# impl: "default", "ring", "recursive_doubling" (forced native),
# "g:ring", "g:recursive_doubling" (generated <collective>_<name>).
MEDIANS = {}


def model(lib, p, size):
    """Medians of the cells not chosen by hand: alpha-beta with per-impl factors."""
    a = {"openmpi": 1500.0, "mpich": 1700.0}[lib] * math.log2(2 * p)
    b = 0.55 * (2 * (p - 1) / p)
    base = a + b * size
    return {
        "default": base,
        "ring": a * 1.6 + b * size * 0.8,
        "recursive_doubling": a * 0.95 + b * size * 1.2,
        "g:ring": a * 1.9 + b * size * 0.85,
        "g:recursive_doubling": a * 1.05 + b * size * 1.25,
    }


SIZES = [8, 1024, 65536, 1048576]
for lib in ("openmpi", "mpich"):
    for p in (2, 4):
        for size in SIZES:
            MEDIANS[("allreduce", lib, p, size)] = {
                k: float(round(v)) for k, v in model(lib, p, size).items()}

# The hand-checked cells (tests/run_report.sh).
MEDIANS[("allreduce", "openmpi", 4, 1048576)] = {
    "default": 800000.0, "ring": 520000.0, "recursive_doubling": 910000.0,
    "g:ring": 455000.0, "g:recursive_doubling": 930000.0}
MEDIANS[("allreduce", "mpich", 2, 8)] = {
    "default": 3000.0, "ring": 4100.0, "recursive_doubling": 2700.0,
    "g:ring": 5200.0, "g:recursive_doubling": 3300.0}
MEDIANS[("allreduce", "openmpi", 2, 1024)] = {
    "default": 5000.0, "ring": 6000.0, "recursive_doubling": 5600.0,
    "g:ring": 7000.0, "g:recursive_doubling": 5500.0}
MEDIANS[("allreduce", "mpich", 4, 65536)] = {
    "default": 61000.0, "ring": 52000.0, "recursive_doubling": 70000.0,
    "g:ring": 50000.0, "g:recursive_doubling": 70000.0}

for p in (2, 4):
    for size in (64, 65536):
        a = 1400.0 * math.log2(2 * p)
        b = 0.6 * (p - 1) / p
        MEDIANS[("allgather", "openmpi", p, size)] = {
            "default": float(round(a + b * size)),
            "ring": float(round(a * 1.5 + b * size * 0.9)),
            "g:ring": float(round(a * 1.7 + b * size * 0.95)),
            "g:bruck": float(round(a * 0.9 + b * size * 1.4))}

# Phase shares of the generated schedules (phase tag name suffix -> share).
PHASES = {
    "allreduce_ring": [("reduce_scatter", 0.52), ("allgather", 0.41)],
    "allreduce_recursive_doubling": [("butterfly", 0.93)],
    "allgather_ring": [("ring", 0.95)],
    "allgather_bruck": [("dissemination", 0.88)],
}

KNOB_ENV = {
    "openmpi": lambda coll, alg: {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_%s_algorithm" % coll: alg},
    "mpich": lambda coll, alg: {
        "MPIR_CVAR_%s_INTRA_ALGORITHM" % coll.upper(): alg},
}
VERSIONS = {
    "openmpi": "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
    "mpich": "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\nMPICH ABI:\t14:2:2",
}


def reps_for(median, seed):
    """REPS repetitions whose median is exactly `median`, shuffled by seed."""
    half = REPS // 2
    vals = [round(median * (1 + 0.01 * k / half)) for k in range(-half, half + 1)]
    vals[-2] = round(vals[-2] * 1.3)
    vals[-1] = round(vals[-1] * 1.6)
    order = list(range(REPS))
    state = seed & 0x7FFFFFFF or 1
    for i in range(REPS - 1, 0, -1):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        j = state % (i + 1)
        order[i], order[j] = order[j], order[i]
    return [vals[i] for i in order]


def quantile(sorted_vals, q):
    pos = q * (len(sorted_vals) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_vals) - 1)
    return round(sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo), 1)


def stats(vals):
    s = sorted(vals)
    n = len(s)
    mean = sum(s) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in s) / (n - 1))
    med = quantile(s, 0.5)
    lo = max(0, int(math.floor(n / 2 - 0.98 * math.sqrt(n))))
    hi = min(n - 1, int(math.ceil(n / 2 + 0.98 * math.sqrt(n))))
    return {"aggregation": "max_over_ranks_per_rep", "sync": "barrier",
            "n": n, "warmup": 3, "stop": "rse",
            "min_ns": s[0], "median_ns": med, "mean_ns": round(mean, 1),
            "stdev_ns": round(sd, 1),
            "p5_ns": quantile(s, 0.05), "p25_ns": quantile(s, 0.25),
            "p75_ns": quantile(s, 0.75), "p95_ns": quantile(s, 0.95),
            "ci95_median_lo_ns": s[lo], "ci95_median_hi_ns": s[hi],
            "rse": round(1.2533 * sd / math.sqrt(n) / med, 5)}


def busbw_factor(coll, p):
    return {"allreduce": 2 * (p - 1) / p, "allgather": (p - 1) / p}[coll]


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "raw"))
    lines = []
    runs = {}
    seq = 0
    identical = None

    def run_id(lib, p, knob):
        key = (lib, p, knob)
        if key not in runs:
            runs[key] = len(runs) + 1
        return runs[key]

    for (coll, lib, p, size), meds in sorted(MEDIANS.items()):
        count = size // 8 if coll == "allreduce" else size // (8 * p)
        for impl in sorted(meds):
            seq += 1
            gen = impl.startswith("g:")
            alg = impl[2:] if gen else impl
            name = "%s_%s" % (coll, alg) if gen else alg
            kind = "generated" if gen else "native"
            knob = "default" if gen or impl == "default" else alg
            rid = run_id(lib, p, knob)
            pid = "%s-%s-p%d-%s_%s-double-sum-r0-ip0-%dB" % (
                coll, lib, p, kind, name, size)
            vals = reps_for(meds[impl], seq * 7919 + size)
            if (coll, lib, p, size) == ("allreduce", "mpich", 4, 65536) and \
                    alg == "recursive_doubling":
                # Same repetitions for generated and native: not significant.
                identical = identical or vals
                vals = identical
            t = stats(vals)
            bwf = busbw_factor(coll, p)
            algbw = size / t["median_ns"]
            env = {} if knob == "default" else KNOB_ENV[lib](coll, alg)
            forced_by = None if knob == "default" else " ".join(
                "%s=%s" % kv for kv in sorted(env.items()))
            req = {"algorithm": None if impl == "default" else name,
                   "forced_by": forced_by, "count": count, "datatype": "double",
                   "op": "sum", "root": 0, "in_place": False, "ranks": p,
                   "ranks_per_node": p, "knobs": {"env": env}, "reps": None}
            eff = dict(req)
            eff["reps"] = REPS
            diff = ["reps"]
            if gen:
                eff["algorithm_source"] = "generated"
            elif impl == "default":
                eff["algorithm_source"] = "unobservable"
            elif coll == "allreduce" and lib == "openmpi" and alg == "ring" and count < p:
                # Open MPI's ring falls back to recursive doubling when count < p.
                eff["algorithm"] = "recursive_doubling"
                eff["algorithm_source"] = "known_fallback"
                diff = ["algorithm", "reps"]
            else:
                eff["algorithm_source"] = "requested+verified" if lib == "openmpi" \
                    else "unobservable"
            tags = []
            if gen:
                tags.append({"name": name, "kind": "call",
                             "median_ns": t["median_ns"], "share": 1.0})
                for ph, share in PHASES[name]:
                    tags.append({"name": "%s/%s" % (name, ph), "kind": "phase",
                                 "median_ns": round(t["median_ns"] * share, 1),
                                 "share": share})
                    tags.append({"name": "%s/%s/round" % (name, ph), "kind": "round",
                                 "median_ns": round(t["median_ns"] * share, 1),
                                 "share": share})
            rec = {"schema_version": 1, "campaign": CAMPAIGN, "run_id": rid,
                   "point_id": pid, "seq": seq, "status": "ok", "reason": None,
                   "collective": coll, "backend": "mpi", "library": lib,
                   "kind": kind, "name": name,
                   "schedule_file": "schedules/%s/%s.json" % (coll, alg) if gen else None,
                   "schedule_hash": "%016x" % (hash_name(name)) if gen else None,
                   "requested": req, "effective": eff, "diff": diff,
                   "size_B": size, "timing": t,
                   "bandwidth": {"algbw_GBps": round(algbw, 6),
                                 "busbw_GBps": round(algbw * bwf, 6),
                                 "busbw_factor": round(bwf, 6)},
                   "check": {"reference": "formula" if kind == "native" and knob != "default"
                             else "native",
                             "elements_wrong": 0, "max_error": 0, "verdict": "ok"},
                   "tags": tags, "raw": "raw/%s.txt" % pid}
            lines.append(json.dumps(rec))
            with open(os.path.join(OUT, "raw", pid + ".txt"), "w") as f:
                f.write("".join("%d\n" % v for v in vals))

    # The two records that were not measured.
    seq += 1
    fail_id = "allreduce-mpich-p4-generated_allreduce_rabenseifner-double-sum-r0-ip0-65536B"
    lines.append(json.dumps(bad_record(
        seq, run_id("mpich", 4, "default"), fail_id, "mpich", 4, 65536, "generated",
        "allreduce_rabenseifner", "failed_check",
        "12 of 8192 elements differ from the native result (max error 3)")))
    seq += 1
    err_id = "allreduce-openmpi-p2-native_rabenseifner-double-sum-r0-ip0-1024B"
    lines.append(json.dumps(bad_record(
        seq, run_id("openmpi", 2, "rabenseifner"), err_id, "openmpi", 2, 1024, "native",
        "rabenseifner", "error",
        "MPI_Allreduce returned MPI_ERR_ARG: invalid argument of some other kind")))

    with open(os.path.join(OUT, "points.jsonl"), "w") as f:
        f.write("".join(line + "\n" for line in lines))

    for (lib, p, knob), rid in sorted(runs.items(), key=lambda kv: kv[1]):
        env = {} if knob == "default" else KNOB_ENV[lib]("allreduce", knob)
        meta = {"schema_version": 1, "run_id": rid, "git_commit": "7b0f226",
                "build": {"tags": True, "cflags": "-std=c11 -O2 -g -DCG_TAGS"},
                "compiler": "gcc (Debian 12.2.0-14) 12.2.0",
                "library": lib, "library_version": VERSIONS[lib],
                "hosts": ["node01"], "cpu_model": "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz",
                "memory_B": 8589934592,
                "placement": [{"rank": r, "host": "node01", "local_rank": r, "core": r}
                              for r in range(p)],
                "env": env, "timer": {"name": "MPI_Wtime", "tick_s": 1e-09},
                "sync": "barrier", "verbosity": "minimal"}
        with open(os.path.join(OUT, "run-%d.json" % rid), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")

    campaign = {"schema_version": 1, "campaign": CAMPAIGN,
                "command_line": ["build/collgen", "run", "descriptors/tests/fixture.json",
                                 "--platform", "local"],
                "test_hash": "0f3a5c9e1d2b4a68",
                "test": {"schema_version": 1, "name": "fixture",
                         "collectives": ["allreduce", "allgather"],
                         "ranks": [2, 4], "sizes_B": SIZES,
                         "implementations": ["native:default", "native:ring",
                                             "native:recursive_doubling", "generated:*"]},
                "platform": {"schema_version": 1, "name": "local"},
                "jobs": len(runs)}
    with open(os.path.join(OUT, "campaign.json"), "w") as f:
        json.dump(campaign, f, indent=2)
        f.write("\n")


def hash_name(s):
    h = 0xcbf29ce484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def bad_record(seq, rid, pid, lib, p, size, kind, name, status, reason):
    req = {"algorithm": name if kind == "native" else None, "forced_by": None,
           "count": size // 8, "datatype": "double", "op": "sum", "root": 0,
           "in_place": False, "ranks": p, "ranks_per_node": p, "knobs": {"env": {}},
           "reps": None}
    return {"schema_version": 1, "campaign": CAMPAIGN, "run_id": rid, "point_id": pid,
            "seq": seq, "status": status, "reason": reason, "collective": "allreduce",
            "backend": "mpi", "library": lib, "kind": kind, "name": name,
            "schedule_file": None, "schedule_hash": None, "requested": req,
            "effective": None, "diff": [], "size_B": size, "timing": None,
            "bandwidth": None,
            "check": {"reference": "native", "elements_wrong": 12, "max_error": 3,
                      "verdict": "wrong"} if status == "failed_check" else None,
            "tags": [], "raw": None}


if __name__ == "__main__":
    main()
