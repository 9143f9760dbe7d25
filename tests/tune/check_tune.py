#!/usr/bin/python3
"""Checks of collgen tune's outputs for tests/run_tune.sh; prints one
"PASS tune <name>" or "FAIL tune <name> (why)" line per check.

  check_tune.py synth CAMPAIGN OUT   the synthetic campaign (make_synth.py):
                                     every held-out cell's best is the known
                                     one, every score is recomputed from the
                                     cells, the default baseline's regret is
                                     the known 2x, the tree is exact
  check_tune.py real CAMPAIGN OUT    a measured campaign: each held-out
                                     cell's best recomputed from points.jsonl
                                     (valid records only), scores recomputed
  check_tune.py selection CAMPAIGN OUT   every selection-<library>.json: the
                                     format, the campaign's hash, ranges that
                                     cover every call once, the same choice as
                                     the tree at every held-out cell
"""
import glob
import json
import math
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

failed = 0


def check(name, ok, why=""):
    global failed
    if ok:
        print("PASS tune %s" % name)
    else:
        failed += 1
        print("FAIL tune %s%s" % (name, " (%s)" % why if why else ""))


def load(out):
    with open(os.path.join(out, "dispatcher.json")) as f:
        return json.load(f)


def rescore(cells, key):
    """(n, correct, unmeasured, geomean, worst) of choice `key` over cells."""
    n = correct = unmeasured = 0
    logs = []
    for c in cells:
        n += 1
        ns = c[key]["ns"]
        if ns is None:
            unmeasured += 1
            continue
        r = max(ns / c["best_ns"], 1.0)
        correct += r <= 1.0
        logs.append(math.log(r))
    gm = math.exp(sum(logs) / len(logs)) if logs else None
    worst = math.exp(max(logs)) if logs else 1.0
    return n, correct, unmeasured, gm, worst


def same_score(name, reported, cells, key):
    n, correct, unmeasured, gm, worst = rescore(cells, key)
    ok = (reported["n"] == n and reported["correct"] == correct and
          reported["unmeasured"] == unmeasured and
          (gm is None) == (reported["regret_geomean"] is None) and
          (gm is None or abs(reported["regret_geomean"] - gm) < 1e-9) and
          (gm is None or abs(reported["regret_worst"] - worst) < 1e-9))
    check(name, ok, "reported %s, recomputed n=%d correct=%d unmeasured=%d geomean=%s worst=%s"
          % (reported, n, correct, unmeasured, gm, worst))


def synth(campaign, out):
    from make_synth import EXPECTED
    d = load(out)
    groups = {(g["library"], g["collective"]): g for g in d["groups"]}
    want = sorted({(k[0], k[1]) for k in EXPECTED})
    check("synth_groups", sorted(groups) == want, "%s != %s" % (sorted(groups), want))
    total = {"model": [0, 0], "nearest_size": [0, 0]}
    for key in want:
        g = groups.get(key)
        if g is None:
            continue
        name = "%s_%s" % key
        ncells = sum(1 for k in EXPECTED if (k[0], k[1]) == key)
        check("synth_%s_cells_and_split" % name,
              g["cells"] == ncells and len(g["held_out"]) == (ncells + 2) // 5,
              "%d cells, %d held out" % (g["cells"], len(g["held_out"])))
        bad = []
        for c in g["held_out"]:
            best, times = EXPECTED[(key[0], key[1], c["p"], c["ppn"], int(c["bytes"]))]
            if c["best"] != best or c["best_ns"] != times[best]:
                bad.append("%s at %d B: best %s, known %s" % (c["p"], c["bytes"], c["best"], best))
            for k in ("model", "nearest_size"):
                ch = c[k]["choice"]
                if c[k]["ns"] != times.get(ch):
                    bad.append("%s %s ns %s, known %s" % (k, ch, c[k]["ns"], times.get(ch)))
        check("synth_%s_best_is_the_known_one" % name, not bad, "; ".join(bad[:3]))
        same_score("synth_%s_model_score" % name, g["model"], g["held_out"], "model")
        same_score("synth_%s_nearest_score" % name, g["nearest_size"], g["held_out"],
                   "nearest_size")
        # The default is 2x the best everywhere (to the ns of rounding).
        regrets = []
        for c in g["held_out"]:
            best, times = EXPECTED[(key[0], key[1], c["p"], c["ppn"], int(c["bytes"]))]
            regrets.append(times["native:default"] / times[best])
        gm = math.exp(sum(map(math.log, regrets)) / len(regrets))
        dflt = g["always_default"]
        check("synth_%s_default_baseline" % name,
              dflt["correct"] == 0 and abs(dflt["regret_geomean"] - gm) < 1e-9 and
              abs(dflt["regret_worst"] - max(regrets)) < 1e-9 and 1.99 < gm < 2.01,
              "%s, known geomean %.6f worst %.6f" % (dflt, gm, max(regrets)))
        check("synth_%s_tree_exact" % name,
              g["model"]["correct"] == g["model"]["n"] and g["model"]["regret_worst"] == 1.0,
              str(g["model"]))
        for k in total:
            total[k][0] += g[k]["correct"]
            total[k][1] += g[k]["n"]
    # The numbers of this seed (a change of the split or the model shows here).
    check("synth_totals_of_seed",
          total == {"model": [36, 36], "nearest_size": [35, 36]}, str(total))


def valid_records(campaign, max_skew=1.5):
    """{cell key: {implementation key: median}} of the valid records.

    A record whose launch's transport (roofline.p2p_ns) was more than
    max_skew times faster than that of its cell's native default is not
    valid (collgen tune's launch-skew check, written again here)."""
    cells, gauges = {}, {}
    with open(os.path.join(campaign, "points.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r["status"] != "ok" or r["kind"] not in ("native", "generated", "baseline"):
                continue
            v = r.get("validity") or {}
            # "unobservable": the library cannot tell what it ran, which is
            # not a fallback (harness/report_data.c); any other source with
            # "algorithm" in diff ran something else.
            ran_other = ("algorithm" in (r.get("diff") or []) and
                         (r.get("effective") or {}).get("algorithm_source") != "unobservable")
            if v.get("below_latency_floor") or ran_other:
                continue
            q = r["requested"]
            key = (r["library"], r["collective"], q["ranks"], q.get("ranks_per_node") or q["ranks"],
                   r["size_B"], q.get("datatype") or "")
            impl = "%s:%s" % (r["kind"], r["name"])
            cells.setdefault(key, {})[impl] = r["timing"]["median_ns"]
            gauges.setdefault(key, {})[impl] = ((r.get("roofline") or {}).get("p2p_ns"),
                                                (r.get("launch") or {}).get("of", 1))
    for key, g in gauges.items():
        d, dl = g.get("native:default", (None, 1))
        if not max_skew or not d or dl > 1:
            continue
        for impl, (x, xl) in g.items():
            if impl != "native:default" and x and xl == 1 and d > max_skew * x:
                del cells[key][impl]
    return cells


def real(campaign, out):
    d = load(out)
    cells = valid_records(campaign)
    check("real_has_groups", len(d["groups"]) >= 2, "%d groups" % len(d["groups"]))
    nheld = 0
    for g in d["groups"]:
        name = "%s_%s" % (g["library"], g["collective"])
        bad = []
        for c in g["held_out"]:
            nheld += 1
            times = cells.get((g["library"], g["collective"], c["p"], c["ppn"], c["bytes"],
                               c["datatype"]), {})
            best = min(times.values()) if times else None
            if best is None or c["best_ns"] != best or times.get(c["best"]) != best:
                bad.append("%d B: best %s %s, records say %s" % (c["bytes"], c["best"],
                                                                 c["best_ns"], best))
            for k in ("model", "nearest_size"):
                if c[k]["ns"] != times.get(c[k]["choice"]):
                    bad.append("%d B %s: %s" % (c["bytes"], k, c[k]))
        check("real_%s_best_from_the_records" % name, not bad, "; ".join(bad[:3]))
        same_score("real_%s_model_score" % name, g["model"], g["held_out"], "model")
        same_score("real_%s_nearest_score" % name, g["nearest_size"], g["held_out"],
                   "nearest_size")
    check("real_has_held_out_cells", nheld > 0, "none held out")


def fnv(path):
    h = 0xcbf29ce484222325
    with open(path, "rb") as f:
        for b in f.read():
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def selection(campaign, out):
    d = load(out)
    files = sorted(glob.glob(os.path.join(out, "selection-*.json")))
    libs = sorted({g["library"] for g in d["groups"]})
    check("selection_one_file_per_library",
          [os.path.basename(f) for f in files] == ["selection-%s.json" % l for l in libs],
          str(files))
    prefixes = ("native:", "generated:", "baseline:")
    for path in files:
        lib = os.path.basename(path)[len("selection-"):-len(".json")]
        with open(path) as f:
            s = json.load(f)
        ok = (s.get("schema") == 1 and s.get("kind") == "collgen-selection" and
              s.get("library") == lib and
              s.get("campaign") == os.path.basename(os.path.normpath(campaign)) and
              s.get("campaign_hash") == fnv(os.path.join(campaign, "points.jsonl")))
        check("selection_%s_header" % lib, ok, str({k: v for k, v in s.items() if k != "rules"}))
        bad = []
        for r in s["rules"]:
            if sorted(r) != ["bytes", "collective", "implementation", "p", "params", "ppn"]:
                bad.append("fields %s" % sorted(r))
            if not r["implementation"].startswith(prefixes) or "(" in r["implementation"]:
                bad.append(r["implementation"])
            for k in ("p", "ppn", "bytes"):
                if not (isinstance(r[k], list) and len(r[k]) == 2 and r[k][0] <= r[k][1] and
                        all(isinstance(x, int) for x in r[k])):
                    bad.append("%s %s" % (k, r[k]))
        check("selection_%s_rules_well_formed" % lib, not bad, "; ".join(bad[:3]))

        def find(coll, p, q, b):
            return [r for r in s["rules"] if r["collective"] == coll and
                    r["p"][0] <= p <= r["p"][1] and r["ppn"][0] <= q <= r["ppn"][1] and
                    r["bytes"][0] <= b <= r["bytes"][1]]
        bad = []
        for g in d["groups"]:
            if g["library"] != lib:
                continue
            # Probes at and between the ranges' corners: exactly one rule.
            rules = [r for r in s["rules"] if r["collective"] == g["collective"]]
            ps = sorted({x for r in rules for x in (r["p"][0], r["p"][1])} | {3, 5})
            bs = sorted({x for r in rules for x in (r["bytes"][0], r["bytes"][1])} | {1000})
            for p in ps:
                for b in bs:
                    n = len(find(g["collective"], p, min(p, 64), b))
                    if n != 1:
                        bad.append("%s p=%d %d B: %d rules" % (g["collective"], p, b, n))
            for c in g["held_out"]:
                m = find(g["collective"], c["p"], c["ppn"], c["bytes"])
                if len(m) == 1:
                    impl = m[0]["implementation"]
                    par = m[0]["params"]
                    key = impl + ("(%s)" % ",".join("%s=%s" % kv for kv in par.items())
                                  if par else "")
                    if key != c["model"]["choice"]:
                        bad.append("%s %d B: rule %s, tree %s" % (g["collective"], c["bytes"],
                                                                  key, c["model"]["choice"]))
        check("selection_%s_ranges_cover_once_and_match_the_tree" % lib, not bad,
              "; ".join(bad[:3]))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("synth", "real", "selection"):
        sys.exit(__doc__)
    {"synth": synth, "real": real, "selection": selection}[sys.argv[1]](sys.argv[2], sys.argv[3])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
