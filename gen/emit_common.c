/* emit_common.c - what emit_mpi.c and emit_cuda.c share (see emit_common.h):
 * a phase, its rounds, lets and steps are written once, through the
 * backend's table of runtime names, so that the two backends' code for one
 * schedule differs only in its signature, its prologue and those names.
 * Reports no user errors: an impossible state is a generator bug (cg_panic).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emit_common.h"

static void mark(struct cg_expr *e, void *arg)
{
    struct cg_emitter *em = arg;
    if (e->slot >= 0 && e->slot < 256) {
        em->used[e->slot] = 1;
    }
}

static void mark_expr(struct cg_emitter *em, const struct cg_expr *e)
{
    if (e != NULL) {
        cg_expr_walk_names((struct cg_expr *)e, mark, em);
    }
}

static void mark_ref(struct cg_emitter *em, const struct cg_ref *r)
{
    mark_expr(em, r->first);
    mark_expr(em, r->count);
    mark_expr(em, r->stride);
}

/* Which names the emitted code mentions, so that it declares only those
 * (-Wunused-variable is an error in emitted code). */
static void mark_schedule(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    mark_expr(em, s->blocks);
    mark_expr(em, s->scratch);
    for (int pi = 0; pi < s->nphases; pi++) {
        const struct cg_phase *ph = &s->phases[pi];
        mark_expr(em, ph->when);
        mark_expr(em, ph->from);
        mark_expr(em, ph->to);
        for (int si = 0; si < ph->nsteps; si++) {
            const struct cg_step *st = &ph->steps[si];
            mark_expr(em, st->when);
            if (em->api->xchg_begin_seg != NULL) {
                mark_expr(em, st->segments);
            }
            for (int k = 0; k < st->nsends; k++) {
                mark_expr(em, st->sends[k].when);
                mark_expr(em, st->sends[k].peer);
                mark_ref(em, &st->sends[k].ref);
            }
            for (int k = 0; k < st->nrecvs; k++) {
                mark_expr(em, st->recvs[k].when);
                mark_expr(em, st->recvs[k].peer);
                mark_ref(em, &st->recvs[k].ref);
            }
            mark_ref(em, &st->dst);
            mark_ref(em, &st->src);
            mark_expr(em, st->call_root);
            mark_expr(em, st->call_color);
        }
        /* A let is needed when something needed mentions it: walk back. */
        for (int i = ph->nlets - 1; i >= 0; i--) {
            if (em->used[ph->lets[i].slot]) {
                mark_expr(em, ph->lets[i].expr);
            }
        }
    }
    /* Tables come after the lets and may read them and earlier tables. */
    for (int i = s->ntables - 1; i >= 0; i--) {
        const struct cg_table *t = &s->tables[i];
        if (t->slot >= 0 && em->used[t->slot]) {
            /* A group is filled by one loop: all its columns or none. */
            for (int c = t->first; c < t->first + t->ncols; c++) {
                em->used[s->tables[c].slot] = 1;
                mark_expr(em, s->tables[c].size);
                mark_expr(em, s->tables[c].value);
            }
        }
    }
    for (int i = s->nlets - 1; i >= 0; i--) {
        if (em->used[s->lets[i].slot]) {
            mark_expr(em, s->lets[i].expr);
        }
    }
}

/* Expression as C. The text lives in a rotating set of buffers so that a
 * few can be used in one printf. */
const char *cg_emit_c_expr(const struct cg_expr *e)
{
    static _Thread_local char bufs[8][1024];
    static _Thread_local int next;
    char *b = bufs[next++ % 8];
    if (cg_expr_print_c(e, b, sizeof(bufs[0])) >= sizeof(bufs[0])) {
        cg_panic("expression too long to print");
    }
    return b;
}

const char *cg_emit_src_expr(const struct cg_expr *e)
{
    static _Thread_local char bufs[8][1024];
    static _Thread_local int next;
    char *b = bufs[next++ % 8];
    if (cg_expr_print(e, b, sizeof(bufs[0])) >= sizeof(bufs[0])) {
        cg_panic("expression too long to print");
    }
    return b;
}

void cg_emit_upper(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) {
        dst[i] = (char)toupper((unsigned char)src[i]);
    }
    dst[i] = '\0';
}

void cg_emit_tag_name(const struct cg_emitter *em, char *buf, size_t cap,
                      const struct cg_phase *ph, const char *leaf)
{
    char p[64] = "", l[64] = "";
    if (ph == NULL) {
        snprintf(buf, cap, "CG_TAG_%s", em->upper);
        return;
    }
    cg_emit_upper(p, sizeof(p), ph->name);
    if (leaf == NULL) {
        snprintf(buf, cap, "CG_TAG_%s__%s", em->upper, p);
        return;
    }
    cg_emit_upper(l, sizeof(l), leaf);
    snprintf(buf, cap, "CG_TAG_%s__%s__%s", em->upper, p, l);
}

/* "(first, n)" arguments for a block range of buffer `b`. */
static void range_args(const struct cg_ref *r, char *buf, size_t cap)
{
    const char *b = cg_buf_names[r->buf];
    switch (r->kind) {
    case CG_RANGE_ALL:
        snprintf(buf, cap, "&%s, 0, %s.nblocks", b, b);
        break;
    case CG_RANGE_BLOCK:
        snprintf(buf, cap, "&%s, %s, 1", b, cg_emit_c_expr(r->first));
        break;
    case CG_RANGE_SPAN:
        snprintf(buf, cap, "&%s, cg_mod(%s, %s.nblocks), %s", b, cg_emit_c_expr(r->first), b,
                 cg_emit_c_expr(r->count));
        break;
    }
}

/* "out[(rank - r) % p]" in schedule syntax, for comments. */
static void range_words(const struct cg_ref *r, char *buf, size_t cap)
{
    const char *b = cg_buf_names[r->buf];
    switch (r->kind) {
    case CG_RANGE_ALL:
        snprintf(buf, cap, "all of %s", b);
        break;
    case CG_RANGE_BLOCK:
        snprintf(buf, cap, "%s block %s", b, cg_emit_src_expr(r->first));
        break;
    case CG_RANGE_SPAN:
        if (r->stride != NULL) {
            snprintf(buf, cap, "%s blocks %s, step %s, %s of them", b, cg_emit_src_expr(r->first),
                     cg_emit_src_expr(r->stride), cg_emit_src_expr(r->count));
            break;
        }
        snprintf(buf, cap, "%s blocks %s .. +%s", b, cg_emit_src_expr(r->first), cg_emit_src_expr(r->count));
        break;
    }
}

/* Strided ranges (a span with "stride") go to the runtime's _strided
 * variant of the same call, which takes the stride after the count:
 * (&c, peer, &buf, first, n, stride) for a send or a receive, (&c, &to,
 * tfirst, tstride, &from, ffirst, fstride, n[, order]) for a reduce or a
 * copy. Why a name suffix, not new table entries: the variants exist for
 * every backend, and schedules without strides never mention them. */
static int strided_ref(const struct cg_ref *r)
{
    return r->kind == CG_RANGE_SPAN && r->stride != NULL;
}

/* "&b, cg_mod(first, b.nblocks)" and the stride of a range (1 unless strided). */
static void strided_args(const struct cg_ref *r, char *buf, size_t cap, char *stride, size_t scap)
{
    const char *b = cg_buf_names[r->buf];
    switch (r->kind) {
    case CG_RANGE_ALL:
        snprintf(buf, cap, "&%s, 0", b);
        break;
    case CG_RANGE_BLOCK:
        snprintf(buf, cap, "&%s, %s", b, cg_emit_c_expr(r->first));
        break;
    case CG_RANGE_SPAN:
        snprintf(buf, cap, "&%s, cg_mod(%s, %s.nblocks)", b, cg_emit_c_expr(r->first), b);
        break;
    }
    snprintf(stride, scap, "%s", r->stride != NULL ? cg_emit_c_expr(r->stride) : "1");
}

/* The count of blocks of a range, as C. */
static void count_arg(const struct cg_ref *r, char *buf, size_t cap)
{
    const char *b = cg_buf_names[r->buf];
    switch (r->kind) {
    case CG_RANGE_ALL:
        snprintf(buf, cap, "%s.nblocks", b);
        break;
    case CG_RANGE_BLOCK:
        snprintf(buf, cap, "1");
        break;
    case CG_RANGE_SPAN:
        snprintf(buf, cap, "%s", cg_emit_c_expr(r->count));
        break;
    }
}

/* Schedule text made safe inside a C comment: printable ASCII only (other
 * bytes, backslashes included, become spaces), and no sequence that ends a
 * comment, starts one (-Wcomment) or is a trigraph. */
static void sanitise(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)in; *c && n + 3 < cap; c++) {
        char ch = (*c >= 0x20 && *c < 0x7f && *c != '\\') ? (char)*c : ' ';
        char prev = n > 0 ? out[n - 1] : '\0';
        if ((prev == '*' && ch == '/') || (prev == '/' && ch == '*') || (prev == '?' && ch == '?')) {
            out[n++] = ' ';
        }
        out[n++] = ch;
    }
    while (n > 0 && out[n - 1] == ' ') {
        n--;
    }
    out[n] = '\0';
}

/* A schedule's comment lines in the comment block being written: " * text",
 * sanitised, wrapped at word boundaries to 96 characters. */
static void comment_lines(struct cg_emitter *em, const char *const *lines, int n)
{
    enum { WIDTH = 96 };
    char text[2048];
    for (int i = 0; i < n; i++) {
        sanitise(lines[i], text, sizeof(text));
        const char *c = text;
        while (*c == ' ') {
            c++;
        }
        if (*c == '\0') {
            cg_out_line(em->o, " *");
            continue;
        }
        while (*c != '\0') {
            size_t len = strlen(c);
            if (len > WIDTH) {
                len = WIDTH;
                while (len > 0 && c[len] != ' ') {
                    len--;
                }
                if (len == 0) {
                    len = WIDTH;
                }
            }
            size_t shown = len;
            while (shown > 0 && c[shown - 1] == ' ') {
                shown--;
            }
            cg_out_line(em->o, " * %.*s", (int)shown, c);
            c += len;
            while (*c == ' ') {
                c++;
            }
        }
    }
}

/* A comment block that starts with `head`: one line when the schedule has
 * no comment there, else head, its lines and a closing line. */
static void comment_block(struct cg_emitter *em, const char *head, const char *const *lines, int n)
{
    if (n == 0) {
        cg_out_line(em->o, "%s */", head);
        return;
    }
    cg_out_line(em->o, "%s", head);
    comment_lines(em, lines, n);
    cg_out_line(em->o, " */");
}

static void step_comment(struct cg_emitter *em, const struct cg_phase *ph,
                         const struct cg_step *st)
{
    struct cg_out *o = em->o;
    const char *const *lines = (const char *const *)st->comment;
    char a[600], b[600], head[2000];
    switch (st->kind) {
    case CG_STEP_EXCHANGE:
        cg_out_line(o, "/* %s:%d %s: exchange", em->base, st->pos.line, ph->name);
        comment_lines(em, lines, st->ncomment);
        for (int k = 0; k < st->nsends; k++) {
            range_words(&st->sends[k].ref, a, sizeof(a));
            cg_out_line(o, " *   send %s to rank %s%s%s", a, cg_emit_src_expr(st->sends[k].peer),
                        st->sends[k].when ? " when " : "",
                        st->sends[k].when ? cg_emit_src_expr(st->sends[k].when) : "");
        }
        for (int k = 0; k < st->nrecvs; k++) {
            range_words(&st->recvs[k].ref, a, sizeof(a));
            cg_out_line(o, " *   receive %s from rank %s%s%s", a, cg_emit_src_expr(st->recvs[k].peer),
                        st->recvs[k].when ? " when " : "",
                        st->recvs[k].when ? cg_emit_src_expr(st->recvs[k].when) : "");
        }
        cg_out_line(o, " */");
        return;
    case CG_STEP_REDUCE:
        range_words(&st->dst, a, sizeof(a));
        range_words(&st->src, b, sizeof(b));
        if (cg_colls[em->s->coll].combine == CG_COMBINE_UNION) {
            snprintf(head, sizeof(head), "/* %s:%d %s: merge the token in %s into %s", em->base,
                     st->pos.line, ph->name, b, a);
            break;
        }
        snprintf(head, sizeof(head), "/* %s:%d %s: %s = %s op %s", em->base, st->pos.line,
                 ph->name, a, st->order == CG_ORDER_INTO_FROM ? a : b,
                 st->order == CG_ORDER_INTO_FROM ? b : a);
        break;
    case CG_STEP_FILL:
        range_words(&st->dst, a, sizeof(a));
        snprintf(head, sizeof(head), "/* %s:%d %s: zero the bytes of %s", em->base, st->pos.line,
                 ph->name, a);
        break;
    case CG_STEP_COPY:
        range_words(&st->dst, a, sizeof(a));
        range_words(&st->src, b, sizeof(b));
        snprintf(head, sizeof(head), "/* %s:%d %s: %s = %s", em->base, st->pos.line, ph->name, a,
                 b);
        break;
    case CG_STEP_CALL: {
        char root[300] = "";
        if (st->call_root != NULL) {
            snprintf(root, sizeof(root), " root %s", cg_emit_src_expr(st->call_root));
        }
        range_words(&st->dst, a, sizeof(a));
        if (st->call_has_src) {
            range_words(&st->src, b, sizeof(b));
        }
        if (st->call_color != NULL) {
            size_t n = strlen(root);
            snprintf(root + n, sizeof(root) - n, " in the group of colour %s",
                     cg_emit_src_expr(st->call_color));
        } else if (st->call_group == CG_GROUP_NODE || st->call_group == CG_GROUP_LANE) {
            size_t n = strlen(root);
            snprintf(root + n, sizeof(root) - n, " on the %s communicator",
                     st->call_group == CG_GROUP_NODE ? "node" : "lane");
        }
        if (st->call_bor) {
            size_t n = strlen(root);
            snprintf(root + n, sizeof(root) - n, " with MPI_BOR over the bytes");
        }
        snprintf(head, sizeof(head), "/* %s:%d %s: call %s%s%s%s: %s%s%s%s", em->base,
                 st->pos.line, ph->name, st->call_use ? st->call_use : "native",
                 st->call_use ? "" : " ", st->call_use ? "" : cg_colls[st->call_coll].name, root,
                 st->call_has_src ? "send " : "on ", st->call_has_src ? b : a,
                 st->call_has_src ? ", receive into " : "", st->call_has_src ? a : "");
        break;
    }
    default:
        cg_panic("unexpected step kind %d", (int)st->kind);
    }
    comment_block(em, head, lines, st->ncomment);
}

/* A send or receive; `to`: for a receive that may land in out
 * (cg_recv_redirect), the consuming reduce's out range, else NULL. */
static void emit_xfer(struct cg_emitter *em, const struct cg_xfer *x, int is_send,
                      const struct cg_ref *to)
{
    char args[1200];
    const char *fn = is_send ? em->api->send : em->api->recv;
    if (x->when != NULL) {
        cg_out_open(em->o, "if (%s)", cg_emit_c_expr(x->when));
    }
    if (strided_ref(&x->ref)) {
        char count[400], stride[400];
        strided_args(&x->ref, args, sizeof(args), stride, sizeof(stride));
        count_arg(&x->ref, count, sizeof(count));
        cg_out_line(em->o, "CG_TRY(%s_strided(&c, %s, %s, %s, %s));", fn, cg_emit_c_expr(x->peer),
                    args, count, stride);
    } else if (to != NULL) {
        /* Both ranges hold as many blocks (the verifier proved the reduce's
         * equally long), so out's count is not repeated. */
        char oargs[1200];
        const char *ob = cg_buf_names[to->buf];
        range_args(&x->ref, args, sizeof(args));
        if (to->kind == CG_RANGE_ALL) {
            snprintf(oargs, sizeof(oargs), "&%s, 0", ob);
        } else if (to->kind == CG_RANGE_BLOCK) {
            snprintf(oargs, sizeof(oargs), "&%s, %s", ob, cg_emit_c_expr(to->first));
        } else {
            snprintf(oargs, sizeof(oargs), "&%s, cg_mod(%s, %s.nblocks)", ob,
                     cg_emit_c_expr(to->first), ob);
        }
        cg_out_line(em->o, "CG_TRY(%s(&c, %s, %s,", em->api->recv_to, cg_emit_c_expr(x->peer),
                    args);
        cg_out_line(em->o, "                  %s));", oargs);
    } else {
        range_args(&x->ref, args, sizeof(args));
        cg_out_line(em->o, "CG_TRY(%s(&c, %s, %s));", fn, cg_emit_c_expr(x->peer), args);
    }
    if (x->when != NULL) {
        cg_out_close(em->o);
    }
}

/* An exchange with "segments" the backend cuts into pieces. */
static int segmented(const struct cg_emitter *em, const struct cg_step *st)
{
    return st->kind == CG_STEP_EXCHANGE && st->segments != NULL &&
           em->api->xchg_begin_seg != NULL;
}

/* Step si is a reduce fused with the segmented exchange before it
 * (cg_step_fused) in a backend that has segments; a barrier's token merge
 * is no reduce (the exchange then waits as usual). */
static int fused(const struct cg_emitter *em, const struct cg_phase *ph, int si)
{
    return em->api->xchg_wait_reduce != NULL && cg_step_fused(ph, si) &&
           cg_colls[em->s->coll].combine != CG_COMBINE_UNION;
}

static void emit_step(struct cg_emitter *em, const struct cg_phase *ph, const struct cg_step *st)
{
    struct cg_out *o = em->o;
    char tag[200], a[1200], b[1200];
    cg_emit_tag_name(em, tag, sizeof(tag), ph, st->name);
    cg_out_blank(o);
    step_comment(em, ph, st);
    if (st->when != NULL) {
        cg_out_open(o, "if (%s)", cg_emit_c_expr(st->when));
    }
    cg_out_line(o, "%s(%s);", em->api->tag_begin, tag);
    switch (st->kind) {
    case CG_STEP_EXCHANGE:
        if (segmented(em, st)) {
            cg_out_line(o, "CG_TRY(%s(&c, %d, %s));", em->api->xchg_begin_seg, st->index,
                        cg_emit_c_expr(st->segments));
        } else {
            cg_out_line(o, "CG_TRY(%s(&c, %d));", em->api->xchg_begin, st->index);
        }
        for (int k = 0; k < st->nsends; k++) {
            emit_xfer(em, &st->sends[k], 1, NULL);
        }
        for (int k = 0; k < st->nrecvs; k++) {
            int j = (em->api->recv_to != NULL)
                        ? cg_recv_redirect(em->s, ph, (int)(st - ph->steps), k)
                        : -1;
            emit_xfer(em, &st->recvs[k], 0, (j >= 0) ? &ph->steps[j].dst : NULL);
        }
        if (fused(em, ph, (int)(st - ph->steps) + 1)) {
            cg_out_line(o, "/* Completed by the reduce step below (%s). */",
                        em->api->xchg_wait_reduce);
        } else {
            cg_out_line(o, "CG_TRY(%s(&c));", em->api->xchg_wait);
        }
        break;
    case CG_STEP_CALL: {
        char cu[64], fn[120];
        cg_emit_upper(cu, sizeof(cu), cg_colls[st->call_coll].name);
        if (st->call_use != NULL) {
            snprintf(fn, sizeof(fn), "(cg_any_fn)cg_%s", st->call_use);
        } else {
            snprintf(fn, sizeof(fn), "NULL");
        }
        if (st->call_has_src) {
            range_args(&st->src, a, sizeof(a));
        } else {
            snprintf(a, sizeof(a), "NULL, 0, 0");
        }
        range_args(&st->dst, b, sizeof(b));
        if (st->call_group == CG_GROUP_NODE || st->call_group == CG_GROUP_LANE) {
            /* Split once per communicator by cg_topo (runtime/topo.c). */
            cg_out_line(o, "CG_TRY(cg_call_coll%s_in(&c, c.topo->%s_comm, CG_COLL_%s, %s, %s,",
                        st->call_bor ? "_bor" : "",
                        st->call_group == CG_GROUP_NODE ? "node" : "lane", cu, fn,
                        st->call_root ? cg_emit_c_expr(st->call_root) : "0");
            cg_out_line(o, "                       %s,", a);
            cg_out_line(o, "                       %s));", b);
            break;
        }
        if (st->call_color == NULL) {
            cg_out_line(o, "CG_TRY(cg_call_coll%s(&c, CG_COLL_%s, %s, %s,", st->call_bor ? "_bor" : "",
                        cu, fn,
                        st->call_root ? cg_emit_c_expr(st->call_root) : "0");
            cg_out_line(o, "                    %s,", a);
            cg_out_line(o, "                    %s));", b);
            break;
        }
        /* The group's communicator: split once per step and round value,
         * then cached with the context (runtime/call.c). */
        cg_out_line(o, "{");
        o->indent++;
        cg_out_line(o, "MPI_Comm cg_sub = MPI_COMM_NULL;");
        cg_out_line(o, "CG_TRY(cg_call_split(&c, \"%s/%s/%s\", %s, %s, &cg_sub));", em->s->name,
                    ph->name, st->name, ph->rounds != CG_ROUNDS_NONE ? ph->var : "0",
                    cg_emit_c_expr(st->call_color));
        cg_out_line(o, "CG_TRY(cg_call_coll%s_in(&c, cg_sub, CG_COLL_%s, %s, %s,",
                    st->call_bor ? "_bor" : "", cu, fn,
                    st->call_root ? cg_emit_c_expr(st->call_root) : "0");
        cg_out_line(o, "                       %s,", a);
        cg_out_line(o, "                       %s));", b);
        o->indent--;
        cg_out_line(o, "}");
        break;
    }
    case CG_STEP_FILL:
        range_args(&st->dst, a, sizeof(a));
        cg_out_line(o, "CG_TRY(cg_fill(&c, %s));", a);
        break;
    case CG_STEP_REDUCE:
    case CG_STEP_COPY: {
        if ((strided_ref(&st->dst) || strided_ref(&st->src)) &&
            !(st->kind == CG_STEP_REDUCE && cg_colls[em->s->coll].combine == CG_COMBINE_UNION)) {
            char as[400], bs[400], count[400];
            strided_args(&st->dst, a, sizeof(a), as, sizeof(as));
            strided_args(&st->src, b, sizeof(b), bs, sizeof(bs));
            count_arg(&st->dst, count, sizeof(count));
            if (st->kind == CG_STEP_REDUCE) {
                cg_out_line(o, "CG_TRY(%s_strided(&c, %s, %s, %s, %s, %s, %s));", em->api->reduce,
                            a, as, b, bs, count,
                            st->order == CG_ORDER_INTO_FROM ? "CG_INTO_FROM" : "CG_FROM_INTO");
            } else {
                cg_out_line(o, "CG_TRY(%s_strided(&c, %s, %s, %s, %s, %s));", em->api->copy, a, as,
                            b, bs, count);
            }
            break;
        }
        /* (buffer, first) of each side, then the count of blocks: the
         * verifier proved both ranges equally long. */
        range_args(&st->dst, a, sizeof(a));
        range_args(&st->src, b, sizeof(b));
        char *count = strrchr(a, ',');
        char *src_count = strrchr(b, ',');
        if (count == NULL || src_count == NULL) {
            cg_panic("range without a count");
        }
        *count = '\0';
        *src_count = '\0';
        count += 2;
        if (st->kind == CG_STEP_REDUCE && cg_colls[em->s->coll].combine == CG_COMBINE_UNION) {
            /* Why nothing: the verifier tracks who a token has heard from,
             * but the bytes mean nothing; what synchronises is the wait for
             * the message, which the exchange step already did. */
            cg_out_line(o, "/* A token carries no data: merging it is a no-op. */");
        } else if (st->kind == CG_STEP_REDUCE) {
            /* Fused: waits for the exchange above piece by piece, reducing
             * each piece of `from` as it arrives (sim.c proved it sound). */
            cg_out_line(o, "CG_TRY(%s(&c, %s, %s, %s, %s));",
                        fused(em, ph, (int)(st - ph->steps)) ? em->api->xchg_wait_reduce
                                                             : em->api->reduce,
                        a, b, count,
                        st->order == CG_ORDER_INTO_FROM ? "CG_INTO_FROM" : "CG_FROM_INTO");
        } else {
            cg_out_line(o, "CG_TRY(%s(&c, %s, %s, %s));", em->api->copy, a, b, count);
        }
        break;
    }
    default:
        cg_panic("unexpected step kind %d", (int)st->kind);
    }
    cg_out_line(o, "%s(%s);", em->api->tag_end, tag);
    if (st->when != NULL && fused(em, ph, (int)(st - ph->steps))) {
        /* Where this rank skips the reduce, the exchange still completes. */
        cg_out_close_open(o, "else");
        cg_out_line(o, "CG_TRY(%s(&c));", em->api->xchg_wait);
    }
    if (st->when != NULL) {
        cg_out_close(o);
    }
}

static void emit_lets(struct cg_emitter *em, const struct cg_let *l, int n)
{
    for (int i = 0; i < n; i++) {
        if (em->used[l[i].slot]) {
            cg_out_line(em->o, "const %s %s = %s;", l[i].wide ? "int64_t" : "int", l[i].name,
                        cg_emit_c_expr(l[i].expr));
        }
    }
}

/* A table: an array of its "max", its length checked, a loop filling it
 * in order (element k may read elements before k); a group's columns are
 * filled by one loop, one statement each. */
static void emit_tables(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    for (int g = 0; g < s->ntables; g += s->tables[g].ncols) {
        const struct cg_table *cols = &s->tables[g], *t = cols;
        if (!em->used[t->slot]) {
            continue;
        }
        /* Why the parentheses: the size is printed after "<" in the loop;
         * only operands binding tighter than "<" may stand bare. */
        const struct cg_expr *z = t->size;
        int bare = z->kind == CG_E_NUM || z->kind == CG_E_NAME || z->kind == CG_E_CALL ||
                   z->kind == CG_E_INDEX ||
                   (z->kind == CG_E_BINARY &&
                    (z->op == CG_OP_ADD || z->op == CG_OP_SUB || z->op == CG_OP_MUL ||
                     z->op == CG_OP_DIV || z->op == CG_OP_MOD));
        char n[1040];
        snprintf(n, sizeof(n), bare ? "%s" : "(%s)", cg_emit_c_expr(z));
        if (t->group != NULL) {
            cg_out_line(o, "/* %s:%d tables %s: %s elements each */", em->base, t->pos.line,
                        t->group, cg_emit_src_expr(t->size));
        } else {
            cg_out_line(o, "/* %s:%d table %s: %s elements */", em->base, t->pos.line, t->name,
                        cg_emit_src_expr(t->size));
        }
        for (int c = 0; c < t->ncols; c++) {
            cg_out_line(o, "int %s[%lld];", cols[c].name, (long long)t->max);
        }
        cg_out_line(o, "%s(cg_table_fits(%s, %lld, \"%s\"));",
                    em->api->gpu ? "CG_CU_RETURN_ON" : "CG_TRY", n, (long long)t->max,
                    t->group != NULL ? t->group : t->name);
        cg_out_open(o, "for (int %s = 0; %s < %s; %s++)", t->var, t->var, n, t->var);
        for (int c = 0; c < t->ncols; c++) {
            cg_out_line(o, "%s[%s] = %s;", cols[c].name, t->var, cg_emit_c_expr(cols[c].value));
        }
        cg_out_close(o);
    }
}

static void emit_phase(struct cg_emitter *em, const struct cg_phase *ph)
{
    struct cg_out *o = em->o;
    char tag[200], rtag[200];
    cg_emit_tag_name(em, tag, sizeof(tag), ph, NULL);
    cg_emit_tag_name(em, rtag, sizeof(rtag), ph, "round");
    /* The round tag has a double underscore before ROUND, like the others;
     * step names may not be "round" (check.c), so it cannot collide. */
    char head[1200];
    cg_out_blank(o);
    switch (ph->rounds) {
    case CG_ROUNDS_NONE:
        snprintf(head, sizeof(head), "/* %s:%d phase %s", em->base, ph->pos.line, ph->name);
        break;
    case CG_ROUNDS_COUNT:
        snprintf(head, sizeof(head), "/* %s:%d phase %s: %s rounds", em->base, ph->pos.line,
                 ph->name, cg_emit_src_expr(ph->to));
        break;
    case CG_ROUNDS_UP:
    case CG_ROUNDS_DOWN:
        snprintf(head, sizeof(head), "/* %s:%d phase %s: %s from %s %s %s", em->base,
                 ph->pos.line, ph->name, ph->var, cg_emit_src_expr(ph->from),
                 ph->rounds == CG_ROUNDS_UP ? "up to" : "down to", cg_emit_src_expr(ph->to));
        break;
    }
    /* The schedule's comment on the phase, above its loop. */
    comment_block(em, head, (const char *const *)ph->comment, ph->ncomment);
    /* A phase's lets live in its own scope, so two phases may use one name. */
    int scope = ph->when == NULL && ph->rounds == CG_ROUNDS_NONE && ph->nlets > 0;
    if (ph->when != NULL) {
        cg_out_open(o, "if (%s)", cg_emit_c_expr(ph->when));
    } else if (scope) {
        cg_out_line(o, "{");
        o->indent++;
    }
    cg_out_line(o, "%s(%s);", em->api->tag_begin, tag);
    switch (ph->rounds) {
    case CG_ROUNDS_NONE:
        break;
    case CG_ROUNDS_COUNT:
        cg_out_open(o, "for (int %s = 0; %s < %s; %s++)", ph->var, ph->var, cg_emit_c_expr(ph->to),
                    ph->var);
        break;
    case CG_ROUNDS_UP:
        cg_out_open(o, "for (int %s = %s; %s <= %s; %s++)", ph->var, cg_emit_c_expr(ph->from), ph->var,
                    cg_emit_c_expr(ph->to), ph->var);
        break;
    case CG_ROUNDS_DOWN:
        cg_out_open(o, "for (int %s = %s; %s >= %s; %s--)", ph->var, cg_emit_c_expr(ph->from), ph->var,
                    cg_emit_c_expr(ph->to), ph->var);
        break;
    }
    if (ph->rounds != CG_ROUNDS_NONE) {
        cg_out_line(o, "%s(%s);", em->api->tag_begin, rtag);
    }
    emit_lets(em, ph->lets, ph->nlets);
    for (int i = 0; i < ph->nsteps; i++) {
        emit_step(em, ph, &ph->steps[i]);
    }
    if (ph->rounds != CG_ROUNDS_NONE) {
        cg_out_line(o, "%s(%s);", em->api->tag_end, rtag);
        cg_out_close(o);
    }
    cg_out_line(o, "%s(%s);", em->api->tag_end, tag);
    if (ph->when != NULL || scope) {
        cg_out_close(o);
    }
}

void cg_emit_header_comment(struct cg_emitter *em, const struct cg_emit_header *h)
{
    const struct cg_schedule *s = em->s;
    struct cg_out *o = em->o;
    cg_out_line(o, "/*");
    cg_out_line(o, " * Function:    %s", h->function);
    cg_out_line(o, " * Accepts:     %s", h->accepts);
    cg_out_line(o, " * Returns:     %s", h->returns);
    cg_out_line(o, " * Description: %s", s->summary);
    if (h->limitations != NULL) {
        cg_out_line(o, " * Limitations: %s", h->limitations);
    }
    cg_out_line(o, " * Blocks:      B = %s%s%s%s", cg_emit_src_expr(s->blocks),
                s->scratch ? "; scratch tmp of " : "",
                s->scratch ? cg_emit_src_expr(s->scratch) : "", s->scratch ? " blocks" : "");
    if (s->topology) {
        cg_out_line(o, " * Topology:    node and lane communicators of a regular communicator "
                       "(every node");
        cg_out_line(o, " *              ppn consecutive ranks; CG_PPN overrides ppn); "
                       "elsewhere cg_%s", s->fallback);
    }
    for (int i = 0; i < s->nparams; i++) {
        if (s->params[i].ranged && em->used[s->params[i].slot]) {
            cg_out_line(o, " * Parameter:   %s = %lld (default; verified %lld..%lld; set with "
                           "cg_param_set or CG_PARAM_%s_%s)", s->params[i].name,
                        (long long)s->params[i].value, (long long)s->params[i].lo,
                        (long long)s->params[i].hi, s->name, s->params[i].name);
        }
    }
    cg_out_line(o, " *");
    cg_out_line(o, " * Worked example, p = 4%s%s, as simulated by the verifier",
                cg_colls[s->coll].rooted ? ", root = 0" : "",
                s->topology ? ", 2 nodes x 2 ranks" : "");
    cg_out_line(o, " * (a->b buf[i]: rank a sends block i of buf to rank b;");
    cg_out_line(o, " *  r: x op= y: rank r reduces y into x; =op: y op x; =: copy):");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        cg_panic("open_memstream: %s", strerror(errno));
    }
    struct cg_model model;
    struct cg_analysis a;
    cg_model_init(&model);
    if (cg_analyse(em->g, s, 4, 0, 1024, 8, &model, f, 1, "", &a) != 0) {
        cg_panic("schedule %s fails at p = 4 after verification", s->name);
    }
    fclose(f);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cg_out_line(o, " *   %s", line);
    }
    free(text);
    cg_out_line(o, " */");
}

void cg_emitter_init(struct cg_emitter *em, struct cg_gen *g, const struct cg_schedule *s,
                     struct cg_out *o, const struct cg_emit_api *api)
{
    memset(em, 0, sizeof(*em));
    em->g = g;
    em->s = s;
    em->o = o;
    em->api = api;
    const char *slash = strrchr(s->file, '/');
    em->base = slash ? slash + 1 : s->file;
    cg_emit_upper(em->upper, sizeof(em->upper), s->name);
    mark_schedule(em);
}

int cg_emit_write(struct cg_gen *g, const struct cg_out *o, const char *path)
{
    int changed = 0;
    if (cg_out_write_file(o, path, &changed) != 0) {
        struct cg_pos none = { 0, 0 };
        cg_error(&g->diag, path, none, "cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void cg_emit_param_knobs(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    for (int i = 0; i < s->nparams; i++) {
        /* Why used: a backend that ignores "segments" does not read a param
         * only it mentions (-Wunused-variable). */
        if (s->params[i].ranged && em->used[s->params[i].slot]) {
            cg_out_line(em->o, "/* Parameter %s: read at run time (cg_param_value), verified for "
                               "%lld..%lld. */", s->params[i].name, (long long)s->params[i].lo,
                        (long long)s->params[i].hi);
            cg_out_line(em->o, "static struct cg_param cg_param_%s_%s = { \"%s\", \"%s\", %lld, "
                               "%lld, %lld, 0, 0 };", s->name, s->params[i].name, s->name,
                        s->params[i].name, (long long)s->params[i].value,
                        (long long)s->params[i].lo, (long long)s->params[i].hi);
            cg_out_blank(em->o);
        }
    }
}

void cg_emit_arg_names(const char *params, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *c = params; *c != '\0';) {
        const char *end = strchr(c, ',');
        if (end == NULL) {
            end = c + strlen(c);
        }
        /* The name is the last identifier of the declaration. */
        const char *stop = end;
        while (stop > c && !(isalnum((unsigned char)stop[-1]) || stop[-1] == '_')) {
            stop--;
        }
        const char *start = stop;
        while (start > c && (isalnum((unsigned char)start[-1]) || start[-1] == '_')) {
            start--;
        }
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%.*s", n ? ", " : "",
                              (int)(stop - start), start);
        c = *end ? end + 1 : end;
    }
    if (n >= cap) {
        cg_panic("parameter list too long: %s", params);
    }
}

/* From the opening brace to the first phase: the runtime's begin for the
 * collective (which also says when the call is over: an error, the fallback
 * ran, count 0), the params, p, rank, the topology's names, the lets, the
 * call tag and the buffers. */
static void prologue(struct cg_emitter *em)
{
    static const char *const topo_names[4] = { "ppn", "nnodes", "node", "local" };
    const struct cg_schedule *s = em->s;
    const struct cg_emit_api *api = em->api;
    const struct cg_coll_info *info = &cg_colls[s->coll];
    struct cg_out *o = em->o;
    char names[400], flags[80] = "0", fallback[120] = "NULL", tag[200];
    int reads = 0;

    cg_out_line(o, "struct %s c;", api->call);
    cg_out_line(o, "struct cg_buf %s%s%s;", info->input != CG_INPUT_NONE ? "in, " : "", "out",
                s->scratch != NULL ? ", tmp" : "");
    for (int i = 0; i < s->nparams; i++) {
        if (s->params[i].ranged && em->used[s->params[i].slot]) {
            cg_out_line(o, "int %s = 0;", s->params[i].name);
            reads++;
        }
    }
    cg_emit_arg_names(api->gpu ? info->cu_args : info->args, names, sizeof(names));
    size_t nf = 0;
    if (s->commutative && !api->gpu) {
        nf += (size_t)snprintf(flags + nf, sizeof(flags) - nf, "CG_NEEDS_COMMUTATIVE");
    }
    if (s->topology) {
        nf += (size_t)snprintf(flags + nf, sizeof(flags) - nf, "%sCG_NEEDS_TOPOLOGY",
                               nf ? " | " : "");
        snprintf(fallback, sizeof(fallback), "(cg_any_fn)%s%s", api->prefix, s->fallback);
    }
    /* Params are read after the fallback's test and before the count's, as
     * they always were: a count of 0 is then the emitted code's test. */
    if (reads > 0) {
        snprintf(flags + nf, sizeof(flags) - nf, "%sCG_READS_PARAMS", nf ? " | " : "");
    }
    /* MPI: CG_TRY(begin) (CG_DONE jumps to out too); the GPU: CG_CU_BEGIN,
     * which returns instead (C++ forbids a goto over the initialisations
     * that follow, runtime/cuda/cg_cuda.h). One line, or two where it would
     * pass 120 columns: the caller's arguments, then the schedule's. */
    char head[160];
    if (!api->gpu) {
        cg_out_line(o, "int rc = MPI_SUCCESS;");
    }
    cg_out_blank(o);
    snprintf(head, sizeof(head), api->gpu ? "CG_CU_BEGIN(%s%s(" : "CG_TRY(%s%s(", api->begin,
             info->name);
    const char *end = "));";
    /* MPI: the function names itself, for its plans (runtime/plan.c). One
     * line, or the caller's arguments and then the schedule's, or those
     * and then the site, each within 120 columns. */
    char sched[300], site[120] = "", tail[420];
    snprintf(sched, sizeof(sched), "%s, %s", flags, fallback);
    if (!api->gpu) {
        snprintf(site, sizeof(site), "CG_SITE(%s%s)", api->prefix, s->name);
    }
    snprintf(tail, sizeof(tail), "%s%s%s", sched, api->gpu ? "" : ", ", site);
    size_t indent = 4 * (size_t)o->indent, pad = strlen(head);
    if (indent + pad + strlen("&c, ") + strlen(names) + strlen(", ") + strlen(tail) +
            strlen(end) <=
        120) {
        cg_out_line(o, "%s&c, %s, %s%s", head, names, tail, end);
    } else if (api->gpu || (indent + pad + strlen(tail) + strlen(end) <= 120)) {
        cg_out_line(o, "%s&c, %s,", head, names);
        cg_out_line(o, "%*s%s%s", (int)pad, "", tail, end);
    } else {
        cg_out_line(o, "%s&c, %s,", head, names);
        cg_out_line(o, "%*s%s,", (int)pad, "", sched);
        cg_out_line(o, "%*s%s%s", (int)pad, "", site, end);
    }
    for (int i = 0; i < s->nparams; i++) {
        if (s->params[i].ranged && em->used[s->params[i].slot]) {
            cg_out_line(o, "%s(cg_param_value(&cg_param_%s_%s, &%s));",
                        api->gpu ? "CG_CU_RETURN_ON" : "CG_TRY", s->name, s->params[i].name,
                        s->params[i].name);
        }
    }
    if (reads > 0 && api->gpu) {
        cg_out_line(o, "CG_CU_RETURN_ON(cg_cu_empty(&c));");
    } else if (reads > 0) {
        cg_out_open(o, "if (c.empty)");
        cg_out_line(o, "goto out;");
        cg_out_close(o);
    }
    if (em->used[CG_SLOT_P]) {
        cg_out_line(o, "const int p = c.p;");
    }
    if (em->used[CG_SLOT_RANK]) {
        cg_out_line(o, "const int rank = c.rank;");
    }
    for (int k = 0; k < 4 && s->topology; k++) {
        if (em->used[CG_SLOT_PPN + k]) {
            cg_out_line(o, "const int %s = c.topo->%s;", topo_names[k], topo_names[k]);
        }
    }
    for (int i = 0; i < s->nparams; i++) {
        if (em->used[s->params[i].slot] && !s->params[i].ranged) {
            cg_out_line(o, "const int %s = %lld; /* parameter, fixed */", s->params[i].name,
                        (long long)s->params[i].value);
        }
    }
    emit_lets(em, s->lets, s->nlets);
    emit_tables(em);
    cg_emit_tag_name(em, tag, sizeof(tag), NULL, NULL);
    cg_out_line(o, "%s(%s);", api->tag_begin, tag);
    cg_out_line(o, "CG_TRY(%s(&c, %s, %s, &out, %s, %s));", api->buffers,
                cg_emit_c_expr(s->blocks), info->input != CG_INPUT_NONE ? "&in" : "NULL",
                s->scratch != NULL ? "&tmp" : "NULL",
                s->scratch != NULL ? cg_emit_c_expr(s->scratch) : "0");
}

void cg_emit_function(struct cg_emitter *em)
{
    const struct cg_schedule *s = em->s;
    const struct cg_emit_api *api = em->api;
    struct cg_out *o = em->o;
    char upper[64], tag[200];

    cg_emit_upper(upper, sizeof(upper), cg_colls[s->coll].name);
    cg_out_line(o, "int %s%s(%s%s_ARGS)", api->prefix, s->name, api->args, upper);
    cg_out_line(o, "{");
    o->indent++;
    prologue(em);
    for (int i = 0; i < s->nphases; i++) {
        emit_phase(em, &s->phases[i]);
    }
    cg_emit_tag_name(em, tag, sizeof(tag), NULL, NULL);
    cg_out_blank(o);
    cg_out_line(o, "%s(%s);", api->tag_end, tag);
    o->indent--;
    cg_out_line(o, "out:");
    o->indent++;
    cg_out_line(o, "return %s_finish(&c, rc);", api->call);
    cg_out_close(o);
}
