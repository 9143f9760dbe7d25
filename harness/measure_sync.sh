#!/usr/bin/env bash
# harness/measure_sync.sh - the quickstart's small sizes (8 B, 128 B, 2 KiB)
# timed under each sync method side by side (harness/README.md, "Timing";
# harness/measurements/2026-12-02-timing.md). Run after `ninja`:
#
#   harness/measure_sync.sh [--runs N] [--report] [OUTDIR]
#                             (N default 2; OUTDIR default results/sync-<UTC>;
#                             --report: analyse OUTDIR's N runs again, run nothing)
#
# Runs descriptors/tests/quickstart.json at sizes 8, 128 and 2048 with "sync"
# barrier, dissemination and window (the rest of its timing as is), N times
# each, interleaved (barrier 1, dissemination 1, window 1, barrier 2, ...), as
# OUTDIR/<sync>-<run>. Then prints, per collective, library and size, the
# one-way latency floor and each method's fastest implementation with its
# median ("<": below the floor) in run 1; and per method: the wall time of a
# run, the records below the floor, the repetitions dropped, how often the
# winner (the report's rule: never below the floor) is the same in every run,
# and the mean Spearman correlation between runs of the implementations'
# medians at each point (1: the same ranking every time). Last, within the
# same repetitions of barrier and dissemination, the slowest rank's own time
# against the global span (latest end less earliest start, one clock): how
# much smaller the first is, and in how many cells the two rank a different
# winner (no run-to-run noise in that comparison). Needs
# /usr/bin/python3. The machine should be otherwise idle.
set -eu
cd "$(dirname "$0")/.."
runs=2
only_report=0
if [ "${1:-}" = --runs ]; then
    runs=$2
    shift 2
fi
if [ "${1:-}" = --report ]; then
    only_report=1 # the analysis of OUTDIR again, no campaign
    shift
fi
out=${1:-results/sync-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
for r in $(seq 1 "$runs"); do
    [ "$only_report" = 1 ] && break
    for sync in barrier dissemination window; do
        /usr/bin/python3 - "$sync" "$out/quickstart-small-$sync.json" <<'EOF'
import json, sys
t = json.load(open("descriptors/tests/quickstart.json"))
t["description"] = "quickstart.json at 8 B, 128 B and 2 KiB with sync " + sys.argv[1]
t["sizes"] = [8, 128, 2048]
t["timing"]["sync"] = sys.argv[1]
json.dump(t, open(sys.argv[2], "w"), indent=2)
EOF
        t0=$(date +%s.%N)
        build/collgen run "$out/quickstart-small-$sync.json" --out "$out/$sync-$r" --quiet \
            --no-report >/dev/null
        t1=$(date +%s.%N)
        echo "$sync $r $(echo "$t1 - $t0" | bc)" >>"$out/wall.txt"
        echo "== sync $sync, run $r: $(echo "$t1 - $t0" | bc) s"
    done
done
/usr/bin/python3 - "$out" "$runs" <<'EOF'
import json, os, sys
out, runs = sys.argv[1], int(sys.argv[2])
methods = ["barrier", "dissemination", "window"]

def load(d):
    recs = {}
    for line in open(os.path.join(d, "points.jsonl")):
        r = json.loads(line)
        if r["status"] == "ok" and r["kind"] != "bound":
            recs.setdefault((r["collective"], r["library"], r["size_B"]), []).append(r)
    return recs

def name(r):
    if r["kind"] == "generated":
        return "g:" + r["name"][len(r["collective"]) + 1:]
    fell = "algorithm" in (r.get("diff") or []) and \
        r["effective"].get("algorithm_source") != "unobservable"
    return r["name"] + ("!" if fell else "")

def med(r):
    return r["timing"]["median_ns"]

def below(r):
    return r["validity"]["below_latency_floor"]

def winner(rs):
    """The report's rule: never below the floor; the default unless another
    is strictly faster."""
    ok = [r for r in rs if not below(r)]
    d = [r for r in ok if r["kind"] == "native" and r["name"] == "default"]
    o = [r for r in ok if not (r["kind"] == "native" and r["name"] == "default")]
    best = min(o, key=med) if o else None
    if d and (best is None or not med(best) < med(d[0])):
        return d[0]
    return best

def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    rk = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            rk[order[k]] = (i + j) / 2.0
        i = j + 1
    return rk

def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den > 0 else 1.0

data = {m: [load(os.path.join(out, "%s-%d" % (m, r))) for r in range(1, runs + 1)]
        for m in methods}
wall = {}
for line in open(os.path.join(out, "wall.txt")):
    m, _, s = line.split()
    wall.setdefault(m, []).append(float(s))
keys = sorted(set().union(*[set(d) for m in methods for d in data[m]]))

def us(r):
    return "-" if r is None else "%s %.2f%s" % (name(r), med(r) / 1e3, "<" if below(r) else "")

print()
print("Run 1: the fastest implementation (us; < below the floor) and the winner by the report's")
print("rule (never below the floor)")
print()
print("| collective | library | size B | floor us | barrier: fastest | dissemination: fastest | "
      "window: fastest | winners (barrier / dissemination / window) |")
print("| --- | --- | ---: | ---: | --- | --- | --- | --- |")
for k in keys:
    row, ws, floor = [], [], None
    for m in methods:
        rs = data[m][0].get(k, [])
        if rs and floor is None:
            floor = rs[0]["validity"]["latency_floor_ns"]
        row.append(us(min(rs, key=med) if rs else None))
        w = winner(rs)
        ws.append("-" if w is None else name(w))
    print("| %s | %s | %d | %s | %s | %s | %s | %s |" % (k[0], k[1], k[2],
          "%.2f" % (floor / 1e3) if floor else "-", row[0], row[1], row[2], " / ".join(ws)))
print()
print("| sync | wall s per run | ok records | below floor | dropped reps | same winner in all "
      "%d runs | mean Spearman between runs |" % runs)
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for m in methods:
    n = sum(len(v) for d in data[m] for v in d.values())
    b = sum(1 for d in data[m] for v in d.values() for r in v if below(r))
    inv = sum(r["timing"].get("invalid") or 0 for d in data[m] for v in d.values() for r in v)
    same = total = 0
    rho = []
    for k in keys:
        per = [d.get(k, []) for d in data[m]]
        if any(not rs for rs in per):
            continue
        total += 1
        wn = {None if winner(rs) is None else name(winner(rs)) for rs in per}
        same += len(wn) == 1
        names = set.intersection(*[{name(r) for r in rs} for rs in per])
        names = sorted(names)
        if len(names) > 2:
            vecs = [[med(next(r for r in rs if name(r) == x)) for x in names] for rs in per]
            for i in range(len(vecs)):
                for j in range(i + 1, len(vecs)):
                    rho.append(spearman(vecs[i], vecs[j]))
    print("| %s | %.0f | %d | %d | %d | %d of %d | %s |" % (m, sum(wall[m]) / len(wall[m]),
          n // runs, b, inv, same, total, "%.2f" % (sum(rho) / len(rho)) if rho else "-"))

print()
print("Within the same repetitions (every run): the slowest rank's own time (the figure of")
print("barrier and dissemination) against the global span of those repetitions")
print()
print("| sync | cells | own / span, median over records | records with own < half the span | "
      "winner by own != winner by span | Spearman own vs span |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
def span(r):
    return (r["timing"].get("span") or {}).get("median_ns")
for m in ("barrier", "dissemination"):
    ratios, half, differ, cells, rho = [], 0, 0, 0, []
    for d in data[m]:
        for k in keys:
            rs = [r for r in d.get(k, []) if span(r)]
            if not rs:
                continue
            cells += 1
            for r in rs:
                ratios.append(med(r) / span(r))
                half += med(r) < span(r) / 2
            wo = winner(rs)
            d2 = [r for r in rs if r["kind"] == "native" and r["name"] == "default"]
            o2 = [r for r in rs if r not in d2]
            bs = min(o2, key=span) if o2 else None
            ws = d2[0] if d2 and (bs is None or not span(bs) < span(d2[0])) else bs
            differ += (wo is None) or (name(wo) != name(ws))
            if len(rs) > 2:
                rho.append(spearman([med(r) for r in rs], [span(r) for r in rs]))
    ratios.sort()
    print("| %s | %d | %.2f | %d of %d | %d of %d | %.2f |" % (m, cells, ratios[len(ratios) // 2],
          half, len(ratios), differ, cells, sum(rho) / len(rho)))
EOF
