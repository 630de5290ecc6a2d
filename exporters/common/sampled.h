/* sampled.h -- how every format says that its figures are estimates, and
** which blocks they are of. */
#ifndef LJM_EXPORTERS_SAMPLED_H
#define LJM_EXPORTERS_SAMPLED_H

#include <stddef.h>

#include "model/ljm_model.h"

/* The model's sampling rate as people write it: "512 KiB", "1 MiB", "1000 B". */
const char *ljm_sampled_rate(char *buf, size_t len, uint64_t rate);
/* NULL for an exact stream, else one sentence for titles and comments:
** "estimates from a sampled recording (one allocated byte in 512 KiB)". */
const char *ljm_sampled_note(const LjmModel *m, char *buf, size_t len);
/* NULL when the model counts temporary allocations (LjmTotals.temporaries),
** else why not, for the one-line refusals of --temporary and --value
** temp_count: "a sampled recording does not show ...". */
const char *ljm_temp_refusal(const LjmModel *m);
/* NULL without filters, else ljm_model_filter_note and the events left
** out: "only blocks of 1 KiB or more (1,234 other events left out)". */
const char *ljm_filter_line(const LjmModel *m, char *buf, size_t len);

#endif
