#!/usr/bin/env bash
# Installs the Debian packages collgen needs, only those missing; silent when all are present.
# Idempotent: safe to run before every build (README Quick start does).
set -euo pipefail
pkgs=(
  build-essential ninja-build pkg-config
  openmpi-bin libopenmpi-dev          # Open MPI: mpicc.openmpi, mpirun.openmpi
  mpich libmpich-dev                  # MPICH:    mpicc.mpich,   mpirun.mpich
  libcjson-dev                        # JSON parser used by the generator
  libclang-14-dev                     # libclang: collgen tag (gen/ctag.c) reads hand-written C
  hwloc libhwloc-dev                  # topology for run metadata
  python3-numpy python3-matplotlib    # plots, through /usr/bin/python3
  binutils                            # nm (the tags-off symbol tests), objcopy (tests/tag/tag.ninja)
  slurm-wlm munge                     # real Slurm for tests/run_slurm.sh (started by the test, not here)
  clang-14 libclang-rt-14-dev         # libFuzzer and ASan/UBSan: tests/fuzz/, tests/run_sanitize.sh
)
missing=()
for p in "${pkgs[@]}"; do
  case "$p" in \#*) continue ;; esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
