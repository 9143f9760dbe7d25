#!/usr/bin/env bash
# tests/run_mutation.sh - mutation testing of the verifier.
#
# `collgen mutate` makes small mutants of every schedule (peer, block or stride off by
# one, a stride dropped, a round short, a step dropped, reduce operands swapped or their order
# flipped, a scatter send staged through out, which breaks only in place) and
# verifies each. A mutant the verifier accepts computes the
# collective for every p tried: an equivalent mutant. Each one must be listed,
# with the reason it really is equivalent, in tests/mutants.equivalent:
#
#   schedules/allreduce/ring.json:15:9: equivalent mutant: reduce operand order flipped # <reason>
#
# An unlisted survivor is either a verifier gap or a mutant nobody has
# reasoned about yet; a listed one that no longer survives is stale. Both fail
# the schedule's line. Prints collgen's kill-rate line and one
# "PASS mutation <collective>/<name>" or "FAIL mutation <collective>/<name>"
# line per schedule. Exit status: 0 when every schedule passed.
set -u
cd "$(dirname "$0")/.."

collgen=${CG_COLLGEN:-build/collgen} # CG_COLLGEN: another build to test (tests/run_sanitize.sh runs it on the sanitized tree)
list=tests/mutants.equivalent
p_range=1..24,32,33,64
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$collgen" ]; then
    echo "FAIL mutation collgen_is_built ($collgen is missing: run ninja build/collgen)"
    exit 1
fi
if [ ! -f "$list" ]; then
    echo "MISSING $list"
    echo "FAIL mutation equivalent_list_exists"
    exit 1
fi

# Lines of stdin that start with $1 (no pattern characters).
starts_with() {
    awk -v s="$1" 'index($0, s) == 1'
}

find schedules -name '*.json' | LC_ALL=C sort >"$tmp/schedules"
t0=$SECONDS
timeout 600 "$collgen" mutate --p "$p_range" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$tmp/err"
    echo "FAIL mutation collgen_mutate_runs (exit status $rc)"
    failed=$((failed + 1))
fi
grep '^kill rate: ' "$tmp/out" || echo "# no kill rate line from collgen mutate"
echo "# collgen mutate --p $p_range took $((SECONDS - t0)) s"

# The reviewed list without comment lines, blank lines and reasons. An entry
# without a reason is an error: the reason is the review.
grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$list" >"$tmp/entries" || true
while IFS= read -r entry; do
    case $entry in
    *" # "?*) ;;
    *)
        echo "  $list: entry without ' # reason': $entry"
        echo "FAIL mutation reasons_given"
        failed=$((failed + 1))
        ;;
    esac
done <"$tmp/entries"
sed 's/ # .*$//' "$tmp/entries" | LC_ALL=C sort -u >"$tmp/listed"

while IFS= read -r file; do
    name=${file#schedules/}
    name=${name%.json}
    ok=1
    summary=$(starts_with "$file: " <"$tmp/out" | grep -E ': [0-9]+ mutants, ' | head -n 1)
    if [ -z "$summary" ]; then
        echo "  $file: collgen mutate printed no summary (the schedule did not load or verify)"
        ok=0
    fi
    starts_with "$file:" <"$tmp/out" | grep ': equivalent mutant: ' | LC_ALL=C sort -u >"$tmp/found"
    starts_with "$file:" <"$tmp/listed" >"$tmp/want"
    while IFS= read -r survivor; do
        if ! grep -qxF "$survivor" "$tmp/want"; then
            echo "  UNLISTED $survivor"
            echo "    (reason it through: if it is equivalent, add it to $list with ' # why';"
            echo "     if it is not, the verifier has a gap)"
            ok=0
        fi
    done <"$tmp/found"
    while IFS= read -r listed; do
        if ! grep -qxF "$listed" "$tmp/found"; then
            echo "  STALE $listed (listed in $list, but the verifier now kills it or it moved)"
            ok=0
        fi
    done <"$tmp/want"
    if [ "$ok" = 1 ]; then
        echo "PASS mutation $name"
    else
        [ -n "$summary" ] && echo "  $summary"
        echo "FAIL mutation $name"
        failed=$((failed + 1))
    fi
done <"$tmp/schedules"

# Entries for schedules that no longer exist.
while IFS= read -r listed; do
    file=${listed%%:*}
    if ! grep -qxF "$file" "$tmp/schedules"; then
        echo "  STALE $listed (no such schedule)"
        echo "FAIL mutation list_names_existing_schedules"
        failed=$((failed + 1))
    fi
done <"$tmp/listed"

[ "$failed" -eq 0 ]
