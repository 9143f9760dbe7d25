/* tests/cuda/cu_ref.h - test data unique per rank and position, and the
 * host reference of the reduction kernel (C++, host code only).
 *
 * The reference is the kernel's arithmetic, element by element, on the host:
 * fp16/bf16 widened to fp32 with the CUDA headers' host conversions,
 * combined in fp32 and rounded to nearest even once; fp32 and fp64 in their
 * own type (x86-64 SSE, no excess precision, no contraction: one operation
 * per element); integers wrapping through the unsigned type; min and max as
 * (y < x ? y : x) and (y > x ? y : x). Tests compare results bit for bit.
 */
#ifndef CG_TESTS_CUDA_CU_REF_H
#define CG_TESTS_CUDA_CU_REF_H

#include "cg_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

/* ---- data ------------------------------------------------------------------ */

static inline uint64_t cu_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Element `pos` of rank `rank`'s input in test `salt`: floats in [0.5, 1.5)
 * (products stay finite and nonzero), integers anywhere (they wrap). */
static inline void cu_gen(cg_cu_dtype t, int rank, size_t pos, uint64_t salt, void *dst)
{
    uint64_t h = cu_hash((uint64_t)rank * 0x9e3779b97f4a7c15ull + (uint64_t)pos * 0x632be59bd9b4e019ull + salt);
    double f = 0.5 + (double)(h % 1048576u) / 1048576.0;
    switch (t) {
    case CG_CU_FLOAT32: {
        float v = (float)f;
        memcpy(dst, &v, 4);
        break;
    }
    case CG_CU_FLOAT64:
        memcpy(dst, &f, 8);
        break;
    case CG_CU_FLOAT16: {
        __half v = __float2half_rn((float)f);
        memcpy(dst, &v, 2);
        break;
    }
    case CG_CU_BFLOAT16: {
        __nv_bfloat16 v = __float2bfloat16_rn((float)f);
        memcpy(dst, &v, 2);
        break;
    }
    case CG_CU_INT32: {
        int32_t v = (int32_t)(uint32_t)h;
        memcpy(dst, &v, 4);
        break;
    }
    default: {
        int64_t v = (int64_t)h;
        memcpy(dst, &v, 8);
        break;
    }
    }
}

static inline void cu_gen_n(cg_cu_dtype t, int rank, size_t n, uint64_t salt, void *dst)
{
    size_t es = cg_cu_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        cu_gen(t, rank, i, salt, (char *)dst + i * es);
    }
}

/* ---- the host reference ----------------------------------------------------- */

template <typename W> static inline W cu_combine(W x, W y, cg_cu_op op)
{
    switch (op) {
    case CG_CU_SUM:
        return x + y;
    case CG_CU_PROD:
        return x * y;
    case CG_CU_MIN:
        return (y < x) ? y : x;
    default:
        return (y > x) ? y : x;
    }
}

template <typename I, typename U> static inline I cu_combine_int(I x, I y, cg_cu_op op)
{
    switch (op) {
    case CG_CU_SUM:
        return (I)((U)x + (U)y);
    case CG_CU_PROD:
        return (I)((U)x * (U)y);
    case CG_CU_MIN:
        return (y < x) ? y : x;
    default:
        return (y > x) ? y : x;
    }
}

/* into = into op from (CG_INTO_FROM) or from op into, one element. */
static inline void cu_ref1(cg_cu_dtype t, cg_cu_op op, int order, void *into, const void *from)
{
    switch (t) {
    case CG_CU_FLOAT32: {
        float a, b;
        memcpy(&a, into, 4);
        memcpy(&b, from, 4);
        float r = (order == CG_INTO_FROM) ? cu_combine<float>(a, b, op) : cu_combine<float>(b, a, op);
        memcpy(into, &r, 4);
        break;
    }
    case CG_CU_FLOAT64: {
        double a, b;
        memcpy(&a, into, 8);
        memcpy(&b, from, 8);
        double r = (order == CG_INTO_FROM) ? cu_combine<double>(a, b, op) : cu_combine<double>(b, a, op);
        memcpy(into, &r, 8);
        break;
    }
    case CG_CU_FLOAT16: {
        __half ha, hb;
        memcpy(&ha, into, 2);
        memcpy(&hb, from, 2);
        float a = __half2float(ha), b = __half2float(hb);
        float r = (order == CG_INTO_FROM) ? cu_combine<float>(a, b, op) : cu_combine<float>(b, a, op);
        __half hr = __float2half_rn(r);
        memcpy(into, &hr, 2);
        break;
    }
    case CG_CU_BFLOAT16: {
        __nv_bfloat16 ha, hb;
        memcpy(&ha, into, 2);
        memcpy(&hb, from, 2);
        float a = __bfloat162float(ha), b = __bfloat162float(hb);
        float r = (order == CG_INTO_FROM) ? cu_combine<float>(a, b, op) : cu_combine<float>(b, a, op);
        __nv_bfloat16 hr = __float2bfloat16_rn(r);
        memcpy(into, &hr, 2);
        break;
    }
    case CG_CU_INT32: {
        int32_t a, b;
        memcpy(&a, into, 4);
        memcpy(&b, from, 4);
        int32_t r = (order == CG_INTO_FROM) ? cu_combine_int<int32_t, uint32_t>(a, b, op)
                                            : cu_combine_int<int32_t, uint32_t>(b, a, op);
        memcpy(into, &r, 4);
        break;
    }
    default: {
        int64_t a, b;
        memcpy(&a, into, 8);
        memcpy(&b, from, 8);
        int64_t r = (order == CG_INTO_FROM) ? cu_combine_int<int64_t, uint64_t>(a, b, op)
                                            : cu_combine_int<int64_t, uint64_t>(b, a, op);
        memcpy(into, &r, 8);
        break;
    }
    }
}

/* First index where two element arrays differ in bits, or n. */
static inline size_t cu_first_diff(const void *a, const void *b, size_t n, size_t es)
{
    const char *x = (const char *)a, *y = (const char *)b;
    if (memcmp(x, y, n * es) == 0) {
        return n;
    }
    for (size_t i = 0; i < n; i++) {
        if (memcmp(x + i * es, y + i * es, es) != 0) {
            return i;
        }
    }
    return n;
}

/* Element bits as hex, for messages. */
static inline const char *cu_hex(const void *e, size_t es, char *buf)
{
    const unsigned char *b = (const unsigned char *)e;
    char *o = buf;
    for (size_t i = es; i-- > 0;) {
        o += sprintf(o, "%02x", b[i]);
    }
    return buf;
}

#endif
