/* value.h -- the one figure a format shows (--value), and number formatting. */
#ifndef LJM_EXPORTERS_VALUE_H
#define LJM_EXPORTERS_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/ljm_exporter.h"

/* The kind to use: LJM_VALUE_DEFAULT means alloc_bytes. */
LjmValueKind ljm_value_resolve(LjmValueKind k);
/* The figure of kind k (resolved) in f. */
uint64_t ljm_value_get(const LjmFigures *f, LjmValueKind k);
/* 1 when kind k counts bytes, 0 when it counts objects or events. */
int ljm_value_is_bytes(LjmValueKind k);
/* Unit word for totals: "bytes", "allocations" or "objects". */
const char *ljm_value_unit(LjmValueKind k);
/* What a view of a heap snapshot shows, for titles ("bytes retained at
** the snapshot", "objects at the snapshot"); NULL when m is a profile
** (titles name the kind then). */
const char *ljm_value_snapshot_title(const LjmModel *m, LjmValueKind k);

#define LJM_THOUSANDS_MAX 28  /* buffer size for any uint64_t with commas */

/* Writes v with ',' every three digits ("1,234,567") into buf
** (LJM_THOUSANDS_MAX bytes); returns buf. */
char *ljm_fmt_thousands(char *buf, uint64_t v);

/* Bytes in binary units, signed: "512 B", "1.5 KiB", "-3.2 GiB"; returns buf. */
const char *ljm_fmt_human(char *buf, size_t len, double n);

#define LJM_NUM_MAX 24  /* buffer size for ljm_fmt_u64 and ljm_fmt_fixed2 */

/* Writes v in decimal into buf (LJM_NUM_MAX bytes); returns buf. Faster
** than printf, which matters for exporters writing one number per site. */
char *ljm_fmt_u64(char *buf, uint64_t v);
/* Writes v >= 0 rounded to two decimals ("12.50") into buf (LJM_NUM_MAX
** bytes); values past 2^53 / 100 are clamped. Returns buf. */
char *ljm_fmt_fixed2(char *buf, double v);

#endif
