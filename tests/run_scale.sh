#!/usr/bin/env bash
# tests/run_scale.sh - machines collgen cannot run on: topologies and
# placements (gen/topo.c), `collgen traffic`, `collgen simulate` and
# `collgen goal` (gen/traffic.c, gen/simulate.c, gen/goal.c).
#
#   tests/scale/tiny-fat-tree.json   2 groups x 2 switches x 2 nodes (hand-computed traffic)
#   tests/scale/one-switch.json      one link level, no overheads (alpha-beta closed form)
#   tests/scale/no-latency.json      zero latencies: time is bandwidth alone (contention)
#   tests/scale/bad-taper.json       a broken topology (located errors)
#   tests/scale/run-record*.json     a run record's placement, and a broken one
#   tests/scale/goal_check.py        a parser of the GOAL text and its checks
#
# One line per case: "PASS scale <name>" or "FAIL scale <name> (why)";
# tests/run_all.sh counts them. No timing assertions. Exit status: 0 when
# nothing failed.
set -u
cd "$(dirname "$0")/.."

collgen=build/collgen
failed=0
tmp=$(mktemp -d)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
trap 'rm -rf "$tmp"' EXIT

pass() { echo "PASS scale $1"; }
fail() {
    echo "FAIL scale $1${2:+ ($2)}"
    failed=$((failed + 1))
}
check() { # check NAME CONDITION-STATUS [WHY]
    if [ "$2" = 0 ]; then pass "$1"; else fail "$1" "${3:-}"; fi
}

tiny=tests/scale/tiny-fat-tree.json

# The bytes row of traffic's totals: intra-node intra-switch intra-group inter-group total.
totals() {
    "$collgen" traffic "$@" 2>"$tmp/err" | awk '/^totals:/ { t = 1 } t && $1 == "bytes" { print $2, $3, $4, $5, $6; exit }'
}

# ---- traffic: hand-computed cases on the tiny fat tree (node n: switch n/2, group n/4) ----
# ring allgather p = 8, count 3 (m = 24 B a message): each round the pairs
# (r, r+1) are 4 intra-switch, 2 intra-group, 2 inter-group; 7 rounds.
got=$(totals schedules/allgather/ring.json --p 8 --topology $tiny --count 3)
[ "$got" = "0 672 336 336 1344" ]; check "traffic ring allgather p=8 (4/2/2 pairs x 7 rounds x 24 B)" $? "$got"
# binomial bcast p = 8, count 3 (n = 24 B): doubling 0->1 | 0->2, 1->3 | 0..3 -> 4..7;
# halving 0->4 | 0->2, 4->6 | four to the neighbour.
got=$(totals schedules/bcast/binomial_doubling.json --p 8 --topology $tiny --count 3)
[ "$got" = "0 24 48 96 168" ]; check "traffic binomial doubling p=8 (1n switch, 2n group, 4n global)" $? "$got"
got=$(totals schedules/bcast/binomial_halving.json --p 8 --topology $tiny --count 3)
[ "$got" = "0 96 48 24 168" ]; check "traffic binomial halving p=8 (4n switch, 2n group, 1n global)" $? "$got"
# recursive doubling allreduce p = 8: 8 full vectors (24 B) at distance 1, 2, 4.
got=$(totals schedules/allreduce/recursive_doubling.json --p 8 --topology $tiny --count 3)
[ "$got" = "0 192 192 192 576" ]; check "traffic recursive doubling allreduce p=8 (8 vectors per level)" $? "$got"
# hierarchical: two-level ring allgather, 4 nodes x 2 ranks (--ppn 2 places
# and shapes it): inter 3 rounds x (4 switch + 4 group) blocks, intra 8 x 4 blocks.
got=$(totals schedules/allgather/two_level_ring.json --p 8 --ppn 2 --topology $tiny --count 3)
[ "$got" = "768 288 288 0 1344" ]; check "traffic two-level ring allgather p=8 ppn=2 (32m node, 12m switch, 12m group)" $? "$got"
# a run record's placement: hostA holds ranks 0, 1, hostB 2, 3 (node 0, 1).
got=$(totals schedules/allgather/ring.json --p 4 --topology $tiny --count 1 --placement run:tests/scale/run-record.json)
[ "$got" = "48 48 0 0 96" ]; check "traffic placement from a run record (2 hosts x 2 ranks)" $? "$got"
# cyclic over 4 nodes at 2 per node: rank r on node r % 4, so every ring
# pair (r, r+1) crosses nodes: 4 intra-switch and 4 intra-group a round.
got=$(totals schedules/allgather/ring.json --p 8 --ppn 2 --placement cyclic --topology $tiny --count 3)
[ "$got" = "0 672 672 0 1344" ]; check "traffic cyclic placement p=8 on 4 nodes" $? "$got"
# The most loaded global link: every rank of group 0 sends its vector out in round 3.
"$collgen" traffic schedules/allreduce/recursive_doubling.json --p 8 --topology $tiny --count 3 >"$tmp/rd" 2>&1
grep -Eq '^ +group 0 -> core +96 B =  +4\.00n' "$tmp/rd"; check "traffic most loaded link (group 0 -> core, 4 vectors)" $?

# ---- traffic totals equal the analysis pass's, every schedule without calls ----
bad=""
n=0
for f in schedules/*/*.json; do
    grep -q '"call"' "$f" && continue
    for p in 7 16; do
        ppn=""
        grep -q '"topology"' "$f" && { [ $p = 16 ] && ppn="--ppn 4" || continue; }
        want=$("$collgen" explain "$f" --p $p $ppn --count 5 2>/dev/null | sed -n 's/.*bytes sent per rank: .*sum over ranks \([0-9]*\)$/\1/p')
        out=$("$collgen" traffic "$f" --p $p $ppn --count 5 --topology descriptors/topologies/dragonfly-1024.json --placement random:3 2>&1)
        got=$(echo "$out" | sed -n 's/.*equal to the analysis pass.s bytes sent, sum over ranks: \([0-9]*\) B$/\1/p')
        sum=$(echo "$out" | awk '/^totals:/ { t = 1 } t && $1 == "bytes" { print $6; exit }')
        n=$((n + 1))
        if [ -z "$want" ] || [ "$got" != "$want" ] || [ "$sum" != "$want" ]; then bad="$bad $f@$p($sum/$want)"; fi
    done
done
[ -z "$bad" ]; check "traffic totals equal explain's bytes sent ($n schedule x p cases)" $? "$bad"

# ---- the seed's finding: 128-node dragonfly allocation (harness/measurements/2026-12-03-traffic.md) ----
alloc=$(cat tests/scale/seed-allocation.txt)
dbl=$(totals schedules/bcast/binomial_doubling.json --p 128 --count 1 --topology descriptors/topologies/dragonfly-1024.json --nodes "$alloc")
hlv=$(totals schedules/bcast/binomial_halving.json --p 128 --count 1 --topology descriptors/topologies/dragonfly-1024.json --nodes "$alloc")
echo "$dbl $hlv" | awk '{ din = $1 + $2 + $3; hin = $6 + $7 + $8;
    exit !($5 == 1016 && $10 == 1016 && $4 > din && hin > $9) }'
check "seed: both bcasts 127n; doubling mostly inter-group, halving mostly inside" $? "$dbl | $hlv"

# ---- simulate ----
# ring allgather p = 8, one link level (1 us, 10 GB/s), no overheads: 7 (alpha + m beta),
# m = 8000 B: 7 x 1.8 = 12.6 us, and explain's alpha-beta prediction says the same.
sim=$("$collgen" simulate schedules/allgather/ring.json --p 8 --topology tests/scale/one-switch.json --count 1000 | sed -n 's/^total: \([0-9.]*\) us.*/\1/p')
ab=$("$collgen" explain schedules/allgather/ring.json --p 8 --count 1000 --alpha 1 --beta 0.1 | sed -n 's/^  \([0-9.]*\) us = .*/\1/p')
[ "$sim" = "12.600" ] && [ "$ab" = "12.6" ]; check "simulate ring p=8, one level = 7 (alpha + m beta) = 12.6 us (explain: $ab)" $? "$sim"
# contention: recursive doubling allgather p = 4 on 2 nodes (list:0,0,1,1), no
# latency: round 0 two flows share a node's memory, round 1 two share each
# node's uplink: with --contention every rate halves, so the time doubles.
free=$("$collgen" simulate schedules/allgather/recursive_doubling.json --p 4 --topology tests/scale/no-latency.json --placement list:0,0,1,1 --count 1000 | sed -n 's/^total: \([0-9.]*\) us.*/\1/p')
cont=$("$collgen" simulate schedules/allgather/recursive_doubling.json --p 4 --topology tests/scale/no-latency.json --placement list:0,0,1,1 --count 1000 --contention | sed -n 's/^total: \([0-9.]*\) us.*/\1/p')
[ "$free" = "2.400" ] && [ "$cont" = "4.800" ]; check "simulate contention halves a shared link's rate (2.4 -> 4.8 us)" $? "$free $cont"
# determinism, and the seed matters
for k in 1 2; do
    "$collgen" simulate schedules/allreduce/rabenseifner.json --p 48 --topology descriptors/topologies/fat-tree-2048.json --placement random:7 --contention --count 999 | grep -v '^simulated in' >"$tmp/sim$k"
done
"$collgen" simulate schedules/allreduce/rabenseifner.json --p 48 --topology descriptors/topologies/fat-tree-2048.json --placement random:8 --contention --count 999 | grep -v '^simulated in' >"$tmp/sim3"
cmp -s "$tmp/sim1" "$tmp/sim2" && ! cmp -s "$tmp/sim1" "$tmp/sim3"; check "simulate deterministic (random:7 twice the same; random:8 differs)" $?
# rounds agree with explain
bad=""
# (--ppn 2: up to 16 ranks on the 8 nodes; a flat schedule's shape is only its placement)
for spec in "allreduce/ring 6" "allreduce/rabenseifner 12" "bcast/knomial 9" "alltoall/bruck 7" "gather/binomial 10" "barrier/dissemination 5" "allgather/two_level_bruck 8 --ppn 2" "scan/recursive_doubling 6"; do
    set -- $spec
    [ -f schedules/$1.json ] || { bad="$bad missing:$1"; continue; }
    e=$("$collgen" explain schedules/$1.json --p $2 ${3:-} ${4:-} --count 4 | sed -n 's/.*rounds (exchange steps that move data): *\([0-9]*\)/\1/p')
    s=$("$collgen" simulate schedules/$1.json --p $2 --ppn 2 --count 4 --topology $tiny 2>&1 | sed -n 's/^rounds: \([0-9]*\) .*/\1/p')
    [ -n "$e" ] && [ "$e" = "$s" ] || bad="$bad $1($s/$e)"
done
[ -z "$bad" ]; check "simulate rounds equal explain's" $? "$bad"

# ---- goal ----
bad=""
for spec in "allreduce/recursive_doubling 5" "allgather/ring 4" "reduce/binomial 6 --root 2" "alltoall/pairwise 4" "allgather/two_level_ring 8 --ppn 2" "barrier/dissemination 5" "reduce_scatter_block/recursive_halving 6" "allreduce/rabenseifner 7"; do
    set -- $spec
    f=schedules/$1.json
    ex=$("$collgen" explain $f --p $2 ${3:-} ${4:-} --count 11)
    b=$(echo "$ex" | sed -n 's/.*bytes sent per rank: .*sum over ranks \([0-9]*\)$/\1/p')
    m=$(echo "$ex" | sed -n 's/^  messages: *\([0-9]*\)$/\1/p')
    "$collgen" goal $f --p $2 ${3:-} ${4:-} --count 11 >"$tmp/g.goal" 2>"$tmp/g.err" || { bad="$bad $1(exit)"; continue; }
    head -1 "$tmp/g.goal" | grep -q "^// collgen goal: $f" || bad="$bad $1(header)"
    grep -q "^// schedule hash: fnv1a64:[0-9a-f]\{16\}" "$tmp/g.goal" || bad="$bad $1(hash)"
    out=$("$py" tests/scale/goal_check.py "$tmp/g.goal" "$b" "$m" 2>&1) || bad="$bad $1($out)"
done
[ -z "$bad" ]; check "goal round-trips; every send has its receive; bytes and messages = explain; requires follow rounds" $? "$bad"
h=$(sed -n 's|^// schedule hash: \(fnv1a64:[0-9a-f]*\).*|\1|p' <("$collgen" goal schedules/allgather/ring.json --p 3 --count 1))
grep -A12 '"allgather_ring"' emitted/registry.json | grep -q "\"file_hash\":.*\"$h\""; check "goal header hash = registry.json's file_hash" $? "$h"

# ---- bad input: located errors, exit 2, nothing on stdout ----
expect_err() { # NAME PATTERN ARGS...
    local name=$1 pat=$2
    shift 2
    "$collgen" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q -- "$pat" "$tmp/err"; then pass "$name"; else
        fail "$name" "rc=$rc: $(head -c 300 "$tmp/err")"; fi
}
ring=schedules/allgather/ring.json
expect_err "bad: unknown topology file" "^tests/scale/nope.json: error: cannot read" traffic $ring --p 4 --topology tests/scale/nope.json
expect_err "bad: topology errors located (unknown key)" "^tests/scale/bad-taper.json:9:3: error: unknown key 'colour'" traffic $ring --p 4 --topology tests/scale/bad-taper.json
expect_err "bad: topology errors located (taper below 1)" "^tests/scale/bad-taper.json:13:43: error: \"taper\" must be at least 1" simulate $ring --p 4 --topology tests/scale/bad-taper.json
expect_err "bad: no --topology" "needs --topology FILE" traffic $ring --p 4
expect_err "bad: p = 0" "needs --p N (1 <= N <= 1048576)" traffic $ring --p 0 --topology $tiny
expect_err "bad: p beyond range" "needs --p N (1 <= N <= 1048576)" goal $ring --p 2000000
expect_err "bad: more ranks than the machine's nodes" "need 9 nodes; tests/scale/tiny-fat-tree.json has 8" traffic $ring --p 9 --topology $tiny
expect_err "bad: more ranks per node than slots" "nodes hold 1 to 4" simulate $ring --p 8 --ppn 8 --topology $tiny
expect_err "bad: unknown placement" "bad --placement 'spread': expected block, cyclic" traffic $ring --p 4 --topology $tiny --placement spread
expect_err "bad: random without a seed" "random:SEED takes a whole number" traffic $ring --p 4 --topology $tiny --placement random:x
expect_err "bad: node list of the wrong length" "its length is not --p" traffic $ring --p 4 --topology $tiny --placement list:0,1,2
expect_err "bad: node beyond the machine" "a node beyond the topology's last node" traffic $ring --p 4 --topology $tiny --nodes 0-8
expect_err "bad: run record entry located" "^tests/scale/run-record-bad.json:3:3: error: a placement entry needs" traffic $ring --p 4 --topology $tiny --placement run:tests/scale/run-record-bad.json
expect_err "bad: run record of another p" "the run placed 4 ranks; --p is 6" traffic $ring --p 6 --topology $tiny --placement run:tests/scale/run-record.json
expect_err "bad: call steps refused by simulate" "has call steps" simulate schedules/bcast/hier.json --p 4 --topology $tiny
expect_err "bad: call steps refused by goal" "has call steps" goal schedules/bcast/hier.json --p 4

echo "scale: $failed failed"
[ $failed = 0 ]
