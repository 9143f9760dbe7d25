#!/usr/bin/python3
"""tests/run_tune.sh: from an Open MPI coll_tuned rules file (collgen tune's
export) and a communicator size P, the calls that prove it, one line each:
"<collective> <count> <algorithm as the spy logs it>": for every boundary
of P's message-size list the count on each side (bytes as the file measures
them: count x 8, x P for alltoall), and count 0 for barrier.

  spy_plan.py RULES P
"""
import re, sys
# coll_tuned's names (ompi_info) -> the function names the spy logs.
SPY = {"modified_bruck": "bruck", "double_ring": "doublering", "two_proc": "two_procs",
       "linear": "basic_linear", "recursive_doubling": "recursivedoubling"}
p = int(sys.argv[2])
coll, rules = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"^\d+\s+#\s+(\w+)$", line)
    if m and m.group(1) not in ("collectives", "communicator", "message"):
        coll = m.group(1)
    m = re.match(r"^(\d+)\s+#\s+from (\d+) ranks$", line)
    if m:
        lo_p = int(m.group(2))
    m = re.match(r"^(\d+) (\d+) 0 0\s+# from \d+ bytes: (\w+)$", line)
    if m and lo_p <= p:
        rules.setdefault(coll, {})[lo_p] = rules.get(coll, {}).get(lo_p, []) + [(int(m.group(1)), m.group(3))]
for coll, byp in sorted(rules.items()):
    rs = byp[max(byp)]
    unit = 8 * p if coll == "alltoall" else 8
    for i, (b, alg) in enumerate(rs):
        if coll == "barrier":
            print(coll, 0, SPY.get(alg, alg))
            continue
        if b > 0:
            print(coll, -(-b // unit), SPY.get(alg, alg))
        if i + 1 < len(rs):
            print(coll, (rs[i + 1][0] - 1) // unit, SPY.get(alg, alg))
