#!/usr/bin/env bash
# harness/measure_tune.sh - collgen tune's held-out scores over many splits
# (harness/README.md, "collgen tune"; harness/measurements/2026-12-03-dispatcher.md).
# Run after `ninja`:
#
#   harness/measure_tune.sh CAMPAIGN [SEEDS] [-- TUNE OPTIONS...]
#                             (SEEDS default 20: seeds 1..SEEDS)
#
# Runs `collgen tune CAMPAIGN --seed s` for every seed into a scratch
# directory (CAMPAIGN is only read) and prints, for the tree and the two
# baselines, the held-out cells of all splits and groups summed: accuracy,
# geometric-mean regret (over the cells whose choice was measured), the
# worst regret, and the choices the cell did not measure. One split holds
# out only 20 % of each group's cells, a few dozen on a small campaign, so
# one split's figures swing by many points; their sum over splits does not.
# Needs /usr/bin/python3.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 CAMPAIGN [SEEDS] [-- TUNE OPTIONS...]" >&2; exit 2; }
campaign=$1
shift
seeds=20
if [ $# -gt 0 ] && [ "$1" != -- ]; then
    seeds=$1
    shift
fi
[ "${1:-}" = -- ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in $(seq 1 "$seeds"); do
    build/collgen tune -q "$campaign" --seed "$s" --out "$tmp/$s" "$@"
done
/usr/bin/python3 - "$tmp" "$seeds" <<'PY'
import json, math, sys
tmp, seeds = sys.argv[1], int(sys.argv[2])
names = {"model": "dispatcher (tree)", "always_default": "always native default",
         "nearest_size": "winner at nearest size"}
tot = {k: {"n": 0, "correct": 0, "unmeasured": 0, "logs": 0.0, "nr": 0, "worst": 1.0}
       for k in names}
for s in range(1, seeds + 1):
    with open("%s/%d/dispatcher.json" % (tmp, s)) as f:
        d = json.load(f)
    for g in d["groups"]:
        for k, t in tot.items():
            sc = g[k]
            t["n"] += sc["n"]
            t["correct"] += sc["correct"]
            t["unmeasured"] += sc["unmeasured"]
            nr = sc["n"] - sc["unmeasured"]
            if nr > 0:
                t["logs"] += nr * math.log(sc["regret_geomean"])
                t["nr"] += nr
                t["worst"] = max(t["worst"], sc["regret_worst"])
print("%d splits, %s" % (seeds, ", ".join("%s %s" % (g["library"], g["collective"])
                                         for g in d["groups"])))
print("| choice | right | accuracy | regret geomean | regret worst | not measured |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for k, t in tot.items():
    gm = math.exp(t["logs"] / t["nr"]) if t["nr"] else float("nan")
    print("| %s | %d/%d | %.1f %% | %.3f | %.3f | %d |" % (
        names[k], t["correct"], t["n"], 100.0 * t["correct"] / max(t["n"], 1), gm,
        t["worst"], t["unmeasured"]))
PY
