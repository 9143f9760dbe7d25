#!/usr/bin/env python3
"""tests/scale/goal_check.py GOAL_FILE BYTES MESSAGES - a parser of
LogGOPSim's GOAL text as `collgen goal` writes it, and the checks of
tests/run_scale.sh: the text round-trips (parsed and written again it is the
same text); labels are l1, l2, ... per rank; every `requires` names an
earlier label of the same rank; every send has exactly one receive (same
ranks, tag and size) and the other way round; the bytes sent and the
messages equal explain's (BYTES, MESSAGES); dependencies follow rounds:
an operation of step instance i (tag // 16) requires, directly or through a
`calc 0` join, only operations of earlier instances, and every operation
after a rank's first instance requires one of its previous instance.
Prints what is wrong and exits 1, else prints "ok N ranks, S sends"."""
import re
import sys

OP = re.compile(r"^l(\d+): (send (\d+)b to (\d+) tag (\d+)|recv (\d+)b from (\d+) tag (\d+)|calc (\d+))$")
REQ = re.compile(r"^l(\d+) requires l(\d+)$")


def parse(text):
    header, ranks, n = [], {}, None
    cur = None
    for no, line in enumerate(text.split("\n"), 1):
        if line.startswith("//"):
            header.append(line)
        elif line.startswith("num_ranks "):
            n = int(line.split()[1])
        elif line == "":
            continue
        elif re.match(r"^rank \d+ \{$", line):
            cur = int(line.split()[1])
            if cur in ranks:
                raise SystemExit(f"line {no}: rank {cur} twice")
            ranks[cur] = {"ops": [], "req": []}
        elif line == "}":
            cur = None
        elif cur is not None and OP.match(line):
            m = OP.match(line)
            lab = int(m.group(1))
            if lab != len(ranks[cur]["ops"]) + 1:
                raise SystemExit(f"line {no}: label l{lab} out of order")
            if m.group(3):
                op = ("send", int(m.group(3)), int(m.group(4)), int(m.group(5)))
            elif m.group(6):
                op = ("recv", int(m.group(6)), int(m.group(7)), int(m.group(8)))
            else:
                op = ("calc", int(m.group(9)), None, None)
            ranks[cur]["ops"].append(op)
        elif cur is not None and REQ.match(line):
            a, b = map(int, REQ.match(line).groups())
            if not (b < a <= len(ranks[cur]["ops"])):
                raise SystemExit(f"line {no}: l{a} requires l{b}: not an earlier label")
            ranks[cur]["req"].append((a, b))
        else:
            raise SystemExit(f"line {no}: not GOAL: {line!r}")
    return header, n, ranks


def write(header, n, ranks):
    out = header + [f"num_ranks {n}"]
    for r in sorted(ranks):
        out += ["", f"rank {r} {{"]
        deps = {}
        for a, b in ranks[r]["req"]:
            deps.setdefault(a, []).append(b)
        for i, op in enumerate(ranks[r]["ops"], 1):
            if op[0] == "send":
                out.append(f"l{i}: send {op[1]}b to {op[2]} tag {op[3]}")
            elif op[0] == "recv":
                out.append(f"l{i}: recv {op[1]}b from {op[2]} tag {op[3]}")
            else:
                out.append(f"l{i}: calc {op[1]}")
            out += [f"l{i} requires l{b}" for b in deps.get(i, [])]
        out.append("}")
    return "\n".join(out) + "\n"


def main():
    text = open(sys.argv[1]).read()
    want_bytes, want_msgs = int(sys.argv[2]), int(sys.argv[3])
    header, n, ranks = parse(text)
    bad = []
    if write(header, n, ranks) != text:
        bad.append("the text does not round-trip")
    if n is None or sorted(ranks) != list(range(n)):
        bad.append(f"num_ranks {n} but ranks {sorted(ranks)[:5]}...")
    sends, recvs = {}, {}
    total = 0
    for r, rk in ranks.items():
        for op in rk["ops"]:
            if op[0] == "send":
                key = (r, op[2], op[3])
                sends.setdefault(key, []).append(op[1])
                total += op[1]
            elif op[0] == "recv":
                key = (op[2], r, op[3])
                recvs.setdefault(key, []).append(op[1])
    for key in set(sends) | set(recvs):
        if sorted(sends.get(key, [])) != sorted(recvs.get(key, [])) or len(sends.get(key, [])) != 1:
            bad.append(f"send/recv {key}: sends {sends.get(key)} receives {recvs.get(key)}")
    nsends = sum(len(v) for v in sends.values())
    if total != want_bytes or nsends != want_msgs:
        bad.append(f"{total} B in {nsends} sends; explain says {want_bytes} B in {want_msgs}")
    # Dependencies follow rounds. A calc's instance: the one after what it
    # requires (a join, or a reduction after the exchange it follows).
    for r, rk in ranks.items():
        ops = rk["ops"]
        deps = {i: [] for i in range(1, len(ops) + 1)}
        for a, b in rk["req"]:
            deps[a].append(b)
        inst = {}
        for i, op in enumerate(ops, 1):
            if op[0] != "calc":
                inst[i] = op[3] // 16
            else:
                inst[i] = max([inst[b] for b in deps[i]], default=-1) + 0.5
        first = None
        for i, op in enumerate(ops, 1):
            if op[0] == "calc":
                continue
            if first is None:
                first = inst[i]
            for b in deps[i]:
                if inst[b] >= inst[i]:
                    bad.append(f"rank {r} l{i} (instance {inst[i]}) requires l{b} (instance {inst[b]})")
            if inst[i] != first and not deps[i]:
                bad.append(f"rank {r} l{i}: after the first instance but requires nothing")
    if bad:
        print("\n".join(bad[:10]))
        sys.exit(1)
    print(f"ok {n} ranks, {nsends} sends")


main()
