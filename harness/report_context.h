/* report_context.h - the parts of report.md that come from campaign.json
 * and run-<n>.json: where and with what the campaign ran, and how to run it
 * again. */
#ifndef CG_REPORT_CONTEXT_H
#define CG_REPORT_CONTEXT_H

#include "report_data.h"
#include "report_table.h"

/* "Context": the campaign's command line and, for every field of the
 * run-<n>.json files (library version, host, CPU, compiler, ...), each
 * distinct value and the runs that had it. Out of memory sets d->failed. */
void cg_rep_build_context(struct cg_rep_doc *d, const struct cg_rep_campaign *c);

/* "How to reproduce": the command line from campaign.json, and the command
 * that remakes this report from the records. */
void cg_rep_build_reproduce(struct cg_rep_doc *d, const struct cg_rep_campaign *c);

#endif
