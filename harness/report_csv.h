/* report_csv.h - the flat CSV view of a campaign's records (points.csv). */
#ifndef CG_REPORT_CSV_H
#define CG_REPORT_CSV_H

#include "report_data.h"

/* One row per record of points.jsonl, in file order, after a header row.
 * Nested objects flatten into dotted columns (requested.count,
 * timing.median_ns, requested.knobs.env.OMPI_MCA_...); arrays (diff, tags)
 * are one column holding their JSON text; null is an empty field. Columns
 * appear in the order they first appear in the records. Quoting and line
 * ends (CRLF) follow RFC 4180. Returns malloc'd text, or NULL when out of
 * memory. */
char *cg_rep_csv(const struct cg_rep_campaign *c);

#endif
