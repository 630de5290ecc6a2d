/* top_rows.h -- internal: the text of ljm top's header, rows and names,
** shared by the plain table and the screen. */
#ifndef LJM_TOP_ROWS_H
#define LJM_TOP_ROWS_H

#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/top/top.h"

/* The header: where the stream stands, in use, growth, peak, RSS. */
void ljm_top_header(LjmBuf *out, LjmLive *l, const LjmModel *m, const LjmTopShow *o);
/* A row's figures, in the columns of ljm_top_titles. */
void ljm_top_row(LjmBuf *out, const LjmLiveRow *r);
/* A row's name: a line, a stack innermost first, or KEY=value. */
void ljm_top_label(LjmBuf *out, LjmLive *l, const LjmModel *m, LjmLiveView v, uint32_t id,
                   LjmFrames *frames);
/* The column titles of a view. */
const char *ljm_top_titles(LjmLiveView v);

#endif
