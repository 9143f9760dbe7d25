/* topo.h - machines collgen cannot run on: a topology (nodes under
 * switches under groups, a fat tree with a taper or a dragonfly with global
 * links; latency and bandwidth per level) and a placement of ranks on its
 * nodes. Read by traffic.c and simulate.c; the format is in
 * descriptors/README.md ("Topologies"), the files in descriptors/topologies/.
 *
 * Rules:
 *  - A pair of ranks is in exactly one domain: the same node, the same
 *    switch, the same group, or two groups (enum cg_domain, nearest first).
 *  - A message between nodes takes one fixed route (minimal routing): its
 *    links, in order, come from cg_topo_route; a link belongs to one level.
 *  - Bandwidths are GB/s = bytes per nanosecond; latencies microseconds.
 *  - Errors are reported as file:line:col (the topology or the run record)
 *    or as "collgen: bad --placement ...", and the functions return -1.
 */
#ifndef CG_TOPO_H
#define CG_TOPO_H

#include "base.h"

/* Where two ranks are relative to each other. */
enum cg_domain { CG_DOM_NODE, CG_DOM_SWITCH, CG_DOM_GROUP, CG_DOM_GLOBAL, CG_DOM_COUNT_ };

/* "intra-node", "intra-switch", "intra-group", "inter-group" */
extern const char *const cg_domain_names[CG_DOM_COUNT_];
/* The descriptor's names of the levels: "node", "switch", "group", "global" */
extern const char *const cg_level_keys[CG_DOM_COUNT_];

enum cg_topo_kind { CG_TOPO_FAT_TREE, CG_TOPO_DRAGONFLY };

struct cg_level {
    double latency_us;  /* end to end, for a message whose domain is this level */
    double bw_GBs;      /* one link of this level (derived from the taper on a fat tree) */
    double taper;       /* fat tree, group and global: downlink capacity / uplink capacity */
};

struct cg_topo {
    const char *file;          /* as given */
    const char *name;          /* "name" */
    enum cg_topo_kind kind;    /* "kind" */
    int nodes_per_switch;      /* nodes on one switch (a fat tree's leaf, a dragonfly's router) */
    int switches_per_group;    /* switches in one group (a pod, a dragonfly group) */
    int groups;                /* groups */
    int nnodes;                /* nodes_per_switch * switches_per_group * groups */
    int slots_per_node;        /* ranks one node may hold */
    int global_links;          /* dragonfly: parallel links between two groups */
    struct cg_level lv[CG_DOM_COUNT_]; /* by domain */
    double overhead_us;        /* simulate: CPU time to post a message (LogGP o) */
    double gap_us;             /* simulate: gap between two messages of one rank (LogGP g) */
    double gamma_ns_B;         /* simulate: reduction time per byte */
    const char **hosts;        /* "hosts": node index -> host name, or NULL */
    int nhosts;                /* entries in hosts */
};

/* Reads and validates a topology file. 0, or -1 after reporting. */
int cg_topo_load(struct cg_gen *g, struct cg_arena *arena, const char *path, struct cg_topo *t);

/* The domain of two nodes. */
enum cg_domain cg_topo_domain(const struct cg_topo *t, int a, int b);

/* Links: one index space over every link of the machine, each of one level
 * and direction. cg_topo_nlinks says how many; cg_topo_route writes the
 * links a message from node a to node b crosses (at most CG_TOPO_MAX_HOPS)
 * and returns how many (one, the node's memory, when a == b). */
#define CG_TOPO_MAX_HOPS 8
long cg_topo_nlinks(const struct cg_topo *t);
int cg_topo_route(const struct cg_topo *t, int a, int b, long *links);
/* The level of a link, its bandwidth, and a name ("g3->g5", "n12 up"). */
enum cg_domain cg_topo_link_level(const struct cg_topo *t, long link);
double cg_topo_link_bw(const struct cg_topo *t, long link);
void cg_topo_link_name(const struct cg_topo *t, long link, char *buf, size_t cap);

/* A placement: rank -> node, and how it was made (for the output). */
struct cg_placement {
    int p;            /* ranks */
    int *node;        /* by rank, p entries (malloc'd) */
    char how[256];    /* "block, 1 rank per node, nodes 0-127" */
    int nused;        /* distinct nodes used */
};

/* Places p ranks on t by spec (descriptors/README.md, "Placements"):
 *   block | cyclic | random:SEED   over the allocation `nodes` ("0-15,64-79";
 *                                   NULL: the first nodes), ppn ranks per node
 *   list:N0,N1,...                  rank r on node Nr
 *   run:FILE                        a campaign's run record's "placement"
 *                                   (hosts mapped through the topology's
 *                                   "hosts", else in order of appearance)
 * 0, or -1 after reporting. */
int cg_place(struct cg_gen *g, struct cg_arena *arena, const struct cg_topo *t, int p, int ppn,
             const char *spec, const char *nodes, struct cg_placement *pl);
void cg_placement_free(struct cg_placement *pl);

#endif
