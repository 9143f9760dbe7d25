#!/usr/bin/env python3
"""harness/calibrate_sim.py CAMPAIGN_DIR [--out TOPOLOGY.json] [--fit-p 2,4] - fits
`collgen simulate`'s parameters for one machine (every rank on one node:
the intra-node latency L, the intra-node bandwidth, the overhead o and the
reduction cost gamma) from a campaign's per-tag times, then prints, per
point and tag, the prediction against the measurement and the error.

How: for each ok point of generated schedules (points.jsonl: schedule_file,
effective ranks and count, tags with median_ns), `collgen simulate` runs
four times on one-node machines where one parameter is 1 and the others 0
(bandwidth: 1 GB/s against a bandwidth so high it costs nothing), so each
tag's time splits into the parts L, 1/bandwidth, o and gamma multiply. A
least-squares fit on relative error (each tag weighted by 1 / its measured
time; only the points of the process counts --fit-p lists, when given)
gives the four numbers, clipped at zero; the fitted machine is written
to --out (default: a temporary file) and simulated once more per point for
the comparison. The model is linear in the parameters only where no rank
waits on another (symmetric schedules); the comparison uses the real
simulation, not the linear form.

Prints a table (point, tag, measured us, predicted us, error %) and the
median and largest absolute error. Run from the repository root; needs
build/collgen and numpy.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

COLLGEN = "build/collgen"


def machine(path, lat, bw, o, gamma):
    lv = {"latency_us": lat, "bandwidth_GBs": bw}
    doc = {
        "schema_version": 1,
        "name": "one-node",
        "description": "calibration machine: every rank on one node",
        "kind": "dragonfly",
        "nodes_per_switch": 1, "switches_per_group": 1, "groups": 1,
        "slots_per_node": 1024,
        "levels": {k: dict(lv) for k in ("node", "switch", "group", "global")},
        "host": {"overhead_us": o, "gap_us": 0, "gamma_ns_B": gamma},
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def simulate(topo, pt):
    cmd = [COLLGEN, "simulate", pt["file"], "--p", str(pt["p"]), "--ppn", str(pt["p"]),
           "--count", str(pt["count"]), "--elem-size", str(pt["elem"]), "--topology", topo]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    tags, on = {}, False
    for line in out.splitlines():
        if line.startswith("  tag "):
            on = True
            continue
        if on and line.strip() == "":
            break
        if on:
            f = line.split()
            tags[f[0]] = float(f[2])  # max over ranks, us
    return tags


def points(campaign):
    elem = {"double": 8, "float": 4, "int32": 4, "int64": 8}
    out = []
    for line in open(os.path.join(campaign, "points.jsonl")):
        r = json.loads(line)
        if r.get("status") != "ok" or r.get("kind") != "generated" or not r.get("tags"):
            continue
        e = r["effective"]
        out.append({"id": r["point_id"], "file": r["schedule_file"], "p": e["ranks"],
                    "count": e["count"], "elem": elem[e["datatype"]],
                    "tags": {t["name"]: t["median_ns"] / 1000.0 for t in r["tags"]}})
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    campaign = sys.argv[1]
    out_topo = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    fit_p = None
    if "--fit-p" in sys.argv:
        fit_p = {int(v) for v in sys.argv[sys.argv.index("--fit-p") + 1].split(",")}
    pts = points(campaign)
    tmp = tempfile.mkdtemp()
    units = [("L_us", (1, 1e9, 0, 0)), ("inv_bw", (0, 1, 0, 0)), ("o_us", (0, 1e9, 1, 0)),
             ("gamma", (0, 1e9, 0, 1))]
    feats = []
    for name, args in units:
        path = os.path.join(tmp, name + ".json")
        machine(path, *args)
        feats.append([simulate(path, pt) for pt in pts])
    rows, rhs = [], []
    for i, pt in enumerate(pts):
        if fit_p is not None and pt["p"] not in fit_p:
            continue
        for tag, meas in pt["tags"].items():
            if tag not in feats[0][i] or meas <= 0:
                continue
            w = 1.0 / meas
            rows.append([feats[k][i][tag] * w for k in range(4)])
            rhs.append(1.0)
    a = np.array(rows)
    b = np.array(rhs)
    x, *_ = np.linalg.lstsq(a, b, rcond=None)
    x = np.clip(x, 0, None)
    lat, inv_bw, o, gamma = x
    bw = 1.0 / inv_bw if inv_bw > 0 else 1e9
    path = out_topo or os.path.join(tmp, "fitted.json")
    machine(path, round(lat, 4), round(bw, 4), round(o, 4), round(gamma, 4))
    print(f"fitted from {len(rows)} tag times of {len(pts)} points: L = {lat:.3f} us, "
          f"bandwidth = {bw:.3f} GB/s, o = {o:.3f} us, gamma = {gamma:.4f} ns/B ({path})")
    errs, by_p = [], {}
    print(f"{'point':72} {'tag':52} {'measured us':>12} {'predicted us':>12} {'error':>8}")
    for pt in pts:
        pred = simulate(path, pt)
        for tag, meas in pt["tags"].items():
            if tag not in pred or meas <= 0:
                continue
            err = (pred[tag] - meas) / meas
            errs.append(abs(err))
            by_p.setdefault(pt["p"], []).append(abs(err))
            print(f"{pt['id']:72} {tag:52} {meas:12.2f} {pred[tag]:12.2f} {100 * err:+7.1f}%")
    for p in sorted(by_p):
        e = sorted(by_p[p])
        print(f"p = {p}: median absolute error {100 * e[len(e) // 2]:.1f} %, largest "
              f"{100 * e[-1]:.1f} % over {len(e)} tags")
    errs.sort()
    print(f"absolute error: median {100 * errs[len(errs) // 2]:.1f} %, largest {100 * errs[-1]:.1f} % "
          f"over {len(errs)} tags")


main()
