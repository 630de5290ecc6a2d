/* sampled.h -- how every format says that its figures are estimates. */
#ifndef LJM_EXPORTERS_SAMPLED_H
#define LJM_EXPORTERS_SAMPLED_H

#include <stddef.h>

#include "model/ljm_model.h"

/* The model's sampling rate as people write it: "512 KiB", "1 MiB", "1000 B". */
const char *ljm_sampled_rate(char *buf, size_t len, uint64_t rate);
/* NULL for an exact stream, else one sentence for titles and comments:
** "estimates from a sampled recording (one allocated byte in 512 KiB)". */
const char *ljm_sampled_note(const LjmModel *m, char *buf, size_t len);

#endif
