/* report_trace.h - the timelines section of collgen report: the trace files
 * of a campaign (DIR/trace/<point id>.json, verbosity "trace";
 * harness/FORMATS.md, "Trace file") with the point each one is of.
 */
#ifndef CG_REPORT_TRACE_H
#define CG_REPORT_TRACE_H

#include "report_table.h"

/* Appends a section listing the .json files in DIR/trace/, one row per file: the file,
 * its point's collective, library, p, implementation and size (from the
 * record of the point the file is named after; "no record" when there is
 * none), and how to open one in Perfetto. Nothing when the campaign has no
 * trace directory. 0, or -1 out of memory. */
int cg_rep_traces_section(struct cg_rep_doc *d, const struct cg_rep_campaign *c);

#endif
