/* cgtune_nccl.h - the part of NCCL 2.28's tuner plugin interface (version 5,
 * symbol ncclTunerPlugin_v5) that collgen's plugin implements and its loader
 * test calls, written from NCCL's documented plugin API (NCCL ships no
 * header for it; shared/design/NATIVE.md).
 *
 * Why our own declarations: the plugin then builds without NCCL installed;
 * only the layout of the function table and the values below must match
 * NCCL's, and the loader test (tests/tune/nccl_tuner_load.c) calls it
 * exactly as NCCL does: dlopen, dlsym("ncclTunerPlugin_v5"), init, then
 * getCollInfo with a cost table of numAlgo x numProto floats (row-major;
 * -1 marks a combination NCCL cannot run), then finalize.
 */
#ifndef CG_TUNE_NCCL_H
#define CG_TUNE_NCCL_H

#include <stddef.h>
#include <stdint.h>

/* ncclResult_t's values used here (nccl.h). */
typedef int cg_nccl_result_t;
#define CG_NCCL_SUCCESS 0
#define CG_NCCL_INTERNAL_ERROR 3
#define CG_NCCL_INVALID_ARGUMENT 4

/* ncclFunc_t: the collective of a getCollInfo call. */
enum { CG_NCCL_BROADCAST = 0, CG_NCCL_REDUCE = 1, CG_NCCL_ALLGATHER = 2,
       CG_NCCL_REDUCESCATTER = 3, CG_NCCL_ALLREDUCE = 4 };

/* Rows and columns of the cost table: NCCL_ALGO_* and NCCL_PROTO_*. */
enum { CG_NCCL_ALGO_TREE = 0, CG_NCCL_ALGO_RING = 1, CG_NCCL_ALGO_COLLNET_DIRECT = 2,
       CG_NCCL_ALGO_COLLNET_CHAIN = 3, CG_NCCL_ALGO_NVLS = 4, CG_NCCL_ALGO_NVLS_TREE = 5,
       CG_NCCL_ALGO_PAT = 6 };
enum { CG_NCCL_PROTO_LL = 0, CG_NCCL_PROTO_LL128 = 1, CG_NCCL_PROTO_SIMPLE = 2 };
#define CG_NCCL_ALGO_PROTO_IGNORE (-1.0f)

/* ncclDebugLogger_t: level, subsystem flags, file, line, printf format. */
typedef void (*cg_nccl_logger_t)(int level, unsigned long flags, const char *file, int line,
                                 const char *fmt, ...);

/* ncclTuner_v5_t. nvl_domain_info and constants are only passed through. */
typedef struct {
    const char *name;
    cg_nccl_result_t (*init)(void **ctx, uint64_t comm_id, size_t n_ranks, size_t n_nodes,
                             cg_nccl_logger_t log, void *nvl_domain_info, void *constants);
    cg_nccl_result_t (*get_coll_info)(void *ctx, int coll_type, size_t n_bytes,
                                      int num_pipe_ops, float **cost_table, int num_algo,
                                      int num_proto, int reg_buff, int *n_channels);
    cg_nccl_result_t (*finalize)(void *ctx);
} cg_nccl_tuner_v5_t;

#endif
