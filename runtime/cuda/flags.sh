#!/bin/sh
# runtime/cuda/flags.sh cc|nvcc|ld|nccl|cjson - the flags runtime/cuda.ninja's
# commands need, found once per command from the environment:
#
#   CUDA_HOME      the CUDA toolkit (default: /usr/local/cuda)
#   CG_NCCL_HOME   where include/nccl.h and lib/ or lib64/libnccl.so.2 are
#                  (default: CUDA_HOME, then /usr); "none" builds without
#                  NCCL (-DCG_CUDA_NO_NCCL), as does a NCCL found nowhere
#   CG_CU_ARCH     the GPU architecture for nvcc (default: sm_90)
#   CG_CJSON_HOME  where include/cjson/cJSON.h and lib/libcjson.so.1 are, for
#                  build/cuda/bench_cuda (default: the system's, -lcjson);
#                  harness/device_check.sh points it at the copy that
#                  harness/pack_device.sh carries
#
# Why a script: the device machine's CUDA and NCCL are not where they are
# here (NCCL may come only with a Python wheel there), and ninja has no way
# to take a variable from the environment or the command line.
set -eu

cuda=${CUDA_HOME:-/usr/local/cuda}
nccl_home=${CG_NCCL_HOME:-}
nccl_inc=
nccl_lib=

find_nccl() {
    for d in "$@"; do
        [ -f "$d/include/nccl.h" ] || continue
        for l in lib64 lib; do
            if [ -e "$d/$l/libnccl.so.2" ]; then
                nccl_inc=$d/include
                nccl_lib=$d/$l
                return 0
            fi
        done
    done
    return 1
}

if [ "$nccl_home" != none ]; then
    if [ -n "$nccl_home" ]; then
        find_nccl "$nccl_home" || true
    else
        find_nccl "$cuda" /usr || true
    fi
fi

case ${1:-} in
cc)
    printf -- '-I%s/include' "$cuda"
    if [ -n "$nccl_inc" ]; then printf -- ' -I%s' "$nccl_inc"; else printf ' -DCG_CUDA_NO_NCCL'; fi
    if [ -n "${CG_CJSON_HOME:-}" ]; then printf -- ' -I%s/include' "$CG_CJSON_HOME"; fi
    printf '\n'
    ;;
nvcc)
    printf -- '-arch=%s' "${CG_CU_ARCH:-sm_90}"
    if [ -n "$nccl_inc" ]; then printf -- ' -I%s' "$nccl_inc"; else printf ' -DCG_CUDA_NO_NCCL'; fi
    printf '\n'
    ;;
ld)
    for l in lib64 lib targets/x86_64-linux/lib; do
        if [ -f "$cuda/$l/libcudart_static.a" ]; then
            printf -- '-L%s/%s ' "$cuda" "$l"
            break
        fi
    done
    if [ -n "$nccl_lib" ]; then
        printf -- '-L%s -Wl,-rpath,%s -l:libnccl.so.2 ' "$nccl_lib" "$nccl_lib"
    fi
    printf -- '-lcudart_static -ldl -lrt -lpthread -lm\n'
    ;;

cjson)
    # cJSON, which only bench_cuda links (the job file's reader is bench's)
    if [ -n "${CG_CJSON_HOME:-}" ]; then
        printf -- '-L%s/lib -Wl,-rpath,%s/lib -l:libcjson.so.1\n' "$CG_CJSON_HOME" "$CG_CJSON_HOME"
    else
        printf -- '-lcjson\n'
    fi
    ;;
nccl)
    # where NCCL was found, for messages: "INC LIB" or "none"
    if [ -n "$nccl_inc" ]; then echo "$nccl_inc $nccl_lib"; else echo none; fi
    ;;
*)
    echo "usage: $0 cc|nvcc|ld|nccl|cjson" >&2
    exit 2
    ;;
esac
