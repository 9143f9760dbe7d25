#!/usr/bin/env python3
"""tests/trace/check_trace.py - checks a campaign's timelines (harness/FORMATS.md,
"Trace file") against its records, the tag table and `collgen tags`.

usage: check_trace.py CAMPAIGN_DIR COLLGEN REGISTRY_JSON [--expect N]

For every DIR/trace/<point id>.json:
  json        valid JSON, an object with a "traceEvents" array and otherData
              naming the point; every "X" event has name, cat, pid, tid, ts
              and dur >= 0
  tracks      every rank 0..p-1 has a thread_name and a repetition region in
              each traced repetition; no other tid
  span        every region lies inside its rank's repetition region, and that
              inside the repetition's span in otherData (earliest start to
              latest end)
  nesting     per rank, regions are properly nested (no partial overlap); the
              region directly around a tag region is the tag's parent in the
              tag table (emitted/registry.json), a call tag's is the
              repetition or a step (a call step's callee); args.tag agrees
              with the name (its index in the schedule's table)
  names       generated points: per rank and repetition, every region name
              occurs exactly as often as `collgen tags FILE --p P` predicts
              for that rank (so the set of names is the predicted set; a
              trace whose buffer filled, dropped_events > 0: at most as often);
              native points: no region but the repetitions; baselines (collgen
              tag's tags): not checked
  records     each file's point has an ok record in points.jsonl
--expect N: exactly N trace files.
Prints "PASS trace file <file>" when every check passes, else "FAIL trace <check>
<file>: why" (the first check that fails); exit 1 on any failure.
"""
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

failures = 0


def fail(check, name, why):
    global failures
    failures += 1
    print(f"FAIL trace {check} {name}: {why}")


def ok(check, name):
    pass  # one PASS line per file, from check_file's caller


def ns(x):
    """ts and dur are microseconds with ns resolution: back to integer ns."""
    return int(round(float(x) * 1000.0))


def predicted(collgen, sched_file, p, cache={}):
    key = (sched_file, p)
    if key not in cache:
        out = subprocess.run([collgen, "tags", sched_file, "--p", str(p)], check=True,
                             capture_output=True, text=True).stdout
        want = defaultdict(Counter)
        for line in out.splitlines():
            rank, name, calls = line.split()
            want[int(rank)][name] += int(calls)
        cache[key] = want
    return cache[key]


def check_file(path, records, registry, collgen):
    name = os.path.basename(path)
    pid = name[:-len(".json")]
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("json", name, f"not valid JSON: {e}")
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("json", name, "no traceEvents array")
        return
    other = doc.get("otherData", {})
    if other.get("point_id") != pid:
        fail("json", name, f"otherData.point_id {other.get('point_id')!r} is not the file's name")
        return
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    for e in xs:
        for k in ("name", "cat", "pid", "tid", "ts", "dur", "args"):
            if k not in e:
                fail("json", name, f"an X event without {k}: {e}")
                return
        if float(e["dur"]) < 0:
            fail("json", name, f"negative dur: {e}")
            return
    ok("json", name)

    rec = records.get(pid)
    if rec is None or rec.get("status") != "ok":
        fail("records", name, "no ok record of this point in points.jsonl")
        return
    ok("records", name)

    p = int(other["ranks"])
    reps = other["repetitions"]
    nreps = int(other["reps_traced"])
    if nreps != len(reps) or nreps < 1:
        fail("tracks", name, f"reps_traced {nreps}, {len(reps)} repetitions listed")
        return
    named = {e["tid"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tids = {e["tid"] for e in xs}
    if named != set(range(p)) or tids != set(range(p)):
        fail("tracks", name, f"thread names for {sorted(named)}, events on {sorted(tids)}, "
             f"ranks 0..{p - 1}")
        return
    per = defaultdict(list)  # (rank, rep) -> regions
    repx = {}
    for e in xs:
        k = (e["tid"], e["args"].get("rep"))
        if e["cat"] == "repetition":
            if k in repx:
                fail("tracks", name, f"two repetition regions for rank/rep {k}")
                return
            repx[k] = e
        else:
            per[k].append(e)
    missing = [(r, k) for r in range(p) for k in range(nreps) if (r, k) not in repx]
    if missing:
        fail("tracks", name, f"no repetition region for rank/rep {missing[:3]}")
        return
    ok("tracks", name)

    bad = None
    for (r, k), regions in per.items():
        if k is None or not (0 <= k < nreps):
            bad = f"rank {r}: a region of repetition {k}"
            break
        lo, hi = ns(reps[k]["start_us"]), ns(reps[k]["end_us"])
        rx = repx[(r, k)]
        rb, re_ = ns(rx["ts"]), ns(rx["ts"]) + ns(rx["dur"])
        if rb < lo or re_ > hi:
            bad = f"rank {r} repetition {k} [{rb}, {re_}] ns outside its span [{lo}, {hi}]"
            break
        for e in regions:
            b, en = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            if b < rb or en > re_:
                bad = (f"rank {r} repetition {k}: {e['name']} [{b}, {en}] ns outside the "
                       f"repetition [{rb}, {re_}]")
                break
        if bad:
            break
    if bad:
        fail("span", name, bad)
        return
    ok("span", name)

    impl = rec["name"] if rec.get("kind") == "generated" else None
    sched = registry.get(impl) if impl else None
    index = {t["path"]: (i, t) for i, t in enumerate(sched["tags"])} if sched else {}
    bad = None
    for (r, k), regions in sorted(per.items(), key=lambda kv: kv[0]):
        rx = repx[(r, k)]
        items = sorted(regions, key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
        stack = [(ns(rx["ts"]), ns(rx["ts"]) + ns(rx["dur"]), rx)]
        call_id = None
        for e in items:
            b, en = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while len(stack) > 1 and stack[-1][1] <= b:
                stack.pop()  # ended before this one began
            top = stack[-1]
            if not (top[0] <= b and en <= top[1]):
                bad = (f"rank {r} repetition {k}: {e['name']} [{b}, {en}] overlaps "
                       f"{top[2]['name']} [{top[0]}, {top[1]}] without nesting in it")
                break
            if sched is not None:
                if e["name"] not in index:
                    bad = f"rank {r}: {e['name']} is not a tag of {impl}"
                    break
                i, t = index[e["name"]]
                if call_id is None:  # the call tag's id; a full buffer may have cut it
                    call_id = e["args"]["tag"] - i
                if e["args"]["tag"] - call_id != i:
                    bad = f"rank {r}: {e['name']} has tag id {e['args']['tag']}, not call + {i}"
                    break
                parent = top[2]
                if t["parent"] < 0:
                    if parent["cat"] not in ("repetition", "comm", "reduce", "copy"):
                        bad = f"rank {r}: call {e['name']} directly inside {parent['name']}"
                        break
                elif parent["name"] != sched["tags"][t["parent"]]["path"]:
                    bad = (f"rank {r} repetition {k}: {e['name']} directly inside "
                           f"{parent['name']}, its parent is "
                           f"{sched['tags'][t['parent']]['path']}")
                    break
            stack.append((b, en, e))
        if bad:
            break
    if bad:
        fail("nesting", name, bad)
        return
    ok("nesting", name)

    if rec.get("kind") == "baseline":
        return  # its tags are collgen tag's (emitted/baselines/tags.c), not the registry's
    if sched is None:
        extra = [e["name"] for rs in per.values() for e in rs]
        if extra:
            fail("names", name, f"a point without tags has regions: {sorted(set(extra))[:3]}")
        else:
            ok("names", name)
        return
    want = predicted(collgen, sched["file"], p)
    # A full buffer (otherData.dropped_events) keeps a prefix of the events:
    # then no name may occur more often than predicted.
    cut = int(other.get("dropped_events", 0)) > 0 or int(other.get("unmatched_events", 0)) > 0
    for r in range(p):
        for k in range(nreps):
            got = Counter(e["name"] for e in per.get((r, k), []))
            if (got != want[r]) if not cut else any(got[n] > want[r][n] for n in got):
                diff = sorted(set(got) ^ set(want[r])) or sorted(
                    n for n in got if got[n] != want[r][n])
                fail("names", name, f"rank {r} repetition {k}: regions differ from collgen "
                     f"tags at {diff[:3]} (got {dict(got)}, want {dict(want[r])})")
                return
    ok("names", name)


def main():
    args = sys.argv[1:]
    expect = None
    if "--expect" in args:
        i = args.index("--expect")
        expect = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    camp, collgen, reg = args
    records = {}
    with open(os.path.join(camp, "points.jsonl")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                records.setdefault(r["point_id"], r)
    with open(reg) as f:
        registry = {s["name"]: s for s in json.load(f)["schedules"]}
    tdir = os.path.join(camp, "trace")
    files = sorted(os.path.join(tdir, n) for n in os.listdir(tdir)
                   if n.endswith(".json")) if os.path.isdir(tdir) else []
    if expect is not None:
        if len(files) != expect:
            fail("files", camp, f"{len(files)} trace files, expected {expect}")
        else:
            ok("files", f"{camp} ({expect})")
    for path in files:
        before = failures
        check_file(path, records, registry, collgen)
        if failures == before:
            print(f"PASS trace file {os.path.basename(path)} (json, records, tracks, span, "
                  "nesting, names)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
