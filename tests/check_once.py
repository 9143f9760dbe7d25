"""tests/check_once.py DIR: every point of the campaign in DIR (its
campaign.json plan) has exactly one record in DIR/points.jsonl. Prints the
statuses as "status count" lines, sorted, and exits 0; else prints one "#"
line with the records, extra, repeated and missing point ids (three of
each) and exits 1. Used by tests/run_harness.sh and tests/run_slurm.sh."""
import collections
import json
import sys

d = sys.argv[1]
plan = [p["id"] for j in json.load(open(d + "/campaign.json"))["plan"]["jobs"] for p in j["points"]]
recs = [json.loads(line) for line in open(d + "/points.jsonl")]
ids = collections.Counter(r["point_id"] for r in recs)
extra = [i for i in ids if i not in set(plan)]
twice = [i for i, n in ids.items() if n > 1]
missing = [i for i in plan if i not in ids]
if extra or twice or missing:
    print("# %d records: extra %s twice %s missing %s" % (len(recs), extra[:3], twice[:3], missing[:3]))
    sys.exit(1)
for s, n in sorted(collections.Counter(r["status"] for r in recs).items()):
    print(s, n)
