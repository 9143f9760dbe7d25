/* mutate.h - mutation testing of the verifier (see mutate.c). */
#ifndef CG_MUTATE_H
#define CG_MUTATE_H

#include <stdio.h>

#include "ir.h"

struct cg_mutate_stats {
    int mutants;    /* made */
    int killed;     /* rejected by the verifier */
    int equivalent; /* accepted: compute the collective for every p tried */
};

/* Mutates s in place (restoring it after each mutant), verifies each
 * mutant, and lists the accepted ones on `report`. */
int cg_mutate(struct cg_gen *g, struct cg_arena *arena, struct cg_schedule *s, FILE *report,
              struct cg_mutate_stats *stats);

#endif
