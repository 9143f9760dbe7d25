/* harness.h - the harness commands of build/collgen (see FORMATS.md). */
#ifndef CG_HARNESS_H
#define CG_HARNESS_H

/* collgen run TEST [--platform NAME] [--resume DIR] ...: argv[0] is "run". */
int cg_run_main(int argc, char **argv);

/* collgen report CAMPAIGN_DIR ...: argv[0] is "report". */
int cg_report_main(int argc, char **argv);

/* collgen compare BASE NEW [--threshold PCT] ...: argv[0] is "compare"
 * (harness/compare.c). */
int cg_compare_main(int argc, char **argv);

/* collgen tune CAMPAIGN [--out DIR] ...: argv[0] is "tune" (harness/tune.c). */
int cg_tune_main(int argc, char **argv);

#endif
