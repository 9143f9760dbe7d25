"""slow_down.py DIR NAME LIBRARY SIZE_B RANKS FACTOR: makes one record of the
campaign DIR FACTOR times slower, its median and every raw repetition
(tests/run_report.sh: a known difference for the pooled and FDR cases)."""
import json
import os
import sys

d, name, lib = sys.argv[1], sys.argv[2], sys.argv[3]
size, ranks, factor = float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
path = os.path.join(d, "points.jsonl")
recs = [json.loads(l) for l in open(path)]
hits = 0
for r in recs:
    if (r["name"] == name and r["library"] == lib and r["size_B"] == size
            and r["requested"]["ranks"] == ranks):
        r["timing"]["median_ns"] *= factor
        raw = os.path.join(d, r["raw"])
        vals = [float(x) * factor for x in open(raw).read().split()]
        open(raw, "w").write("".join("%d\n" % v for v in vals))
        hits += 1
if hits != 1:
    sys.exit("slow_down.py: %d records match, not 1" % hits)
with open(path, "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
