# shellcheck shell=bash
# harness/gpu/job.sh - shell helpers that write job files for
# build/cuda/bench_cuda by hand (harness/FORMATS.md, "Job file"), for
# tests/run_cuda.sh and harness/device_check.sh, which run bench_cuda
# without `collgen run` (the device machine does not build the generator).
# Source it: . harness/gpu/job.sh

# bc_point ID SEQ COLLECTIVE IMPL COUNT DATATYPE OP ROOT IN_PLACE: one point
# of a job file, on one line; OP "-" for none (collectives that do not reduce).
bc_point() {
    local op=
    [ "$7" != - ] && op="\"op\": \"$7\", "
    printf '{ "id": "%s", "seq": %s, "collective": "%s", "impl": "%s", "count": %s, "datatype": "%s", %s"root": %s, "in_place": %s }\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "$op" "$8" "$9"
}

# bc_id COLLECTIVE NP IMPL DATATYPE OP ROOT IN_PLACE BYTES: the point id as
# `collgen run` makes it (descriptors/README.md), library nccl.
bc_id() {
    local impl=${3//:/_}
    impl=${impl//[()=,]/_} # generated:bcast_knomial(radix=2): no brackets in file names
    printf '%s-nccl-p%s-%s-%s-%s-r%s-ip%s-%sB\n' "$1" "$2" "${impl//\//_}" "$4" "${5/-/sum}" \
        "$6" "$([ "$7" = true ] && echo 1 || echo 0)" "$8"
}

# bc_job FILE DIR RUN_ID NP [CAMPAIGN [TIMING [KNOBS]]] < POINTS: a job file
# with the points on stdin (one per line, from bc_point), its outputs under
# DIR (points.jsonl, raw/, run-RUN_ID.json). TIMING and KNOBS are JSON
# (defaults: a short policy, null).
bc_job() {
    local file=$1 dir=$2 id=$3 np=$4 campaign=${5:-bench_cuda} pts
    local timing=${6:-'{ "sync": "barrier", "warmup": 1, "min_reps": 3, "max_reps": 10, "rse_target": 0.05, "budget_s": 0.05 }'}
    local knobs=${7:-null}
    pts=$(sed '$!s/$/,/')
    mkdir -p "$(dirname "$file")" "$dir"
    cat >"$file" <<EOF
{ "schema_version": 1, "campaign": "$campaign", "run_id": $id, "library": "nccl",
  "ranks": $np, "ranks_per_node": $np, "knobs": $knobs,
  "timing": $timing,
  "verbosity": "minimal",
  "points": [
$pts
  ],
  "out": { "points": "$dir/points.jsonl", "raw_dir": "$dir/raw", "run_meta": "$dir/run-$id.json" } }
EOF
}

# bc_status FILE ID: the status of point ID's record in points.jsonl FILE.
bc_status() {
    grep -F "\"point_id\":\"$2\"" "$1" | sed -n 's/.*"status":"\([a-z_]*\)".*/\1/p' | head -1
}
