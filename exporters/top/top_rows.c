/* top_rows.c -- what a row of ljm top says, in text (top.h). */
#include <inttypes.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/sampled.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"
#include "exporters/top/top_rows.h"

const char *ljm_top_view_name(LjmLiveView v)
{
  return v == LJM_LIVE_STACKS ? "stacks" : v == LJM_LIVE_LABELS ? "labels" : "lines";
}

const char *ljm_top_sort_name(LjmLiveSort s)
{
  return s == LJM_LIVE_BY_RATE ? "alloc/s" : s == LJM_LIVE_BY_GROWTH ? "growth" : "in use";
}

void ljm_top_label(LjmBuf *out, LjmLive *l, const LjmModel *m, LjmLiveView v, uint32_t id,
                   LjmFrames *frames)
{
  LjmBuf tmp = {0};
  ljm_buf_reset(out);
  if (v == LJM_LIVE_LINES) {
    if (id < ljm_model_nsites(m)) ljm_site_label(&tmp, m, ljm_model_site(m, id));
    ljm_text_clean(out, tmp.p ? tmp.p : "", tmp.len, 0, LJM_CLEAN_NO_CAP);
  } else if (v == LJM_LIVE_LABELS) {
    ljm_buf_printf(&tmp, "%s=%s", ljm_live_key(l), ljm_live_value(l, id));
    ljm_text_clean(out, tmp.p ? tmp.p : "", tmp.len, 0, LJM_CLEAN_NO_CAP);
  } else if (id < ljm_model_nnodes(m)) {
    /* innermost frame first: what allocates, then who called it */
    ljm_frames_of(m, id, frames);
    for (size_t j = frames->n; j-- > 0;) {
      if (j + 1 < frames->n) ljm_buf_puts(out, " < ");
      ljm_frame_clean(out, ljm_frame_s(frames, j), frames->len[j], 0);
    }
  }
  ljm_buf_free(&tmp);
}

void ljm_top_header(LjmBuf *out, LjmLive *l, const LjmModel *m, const LjmTopShow *o)
{
  const LjmLiveTotals *t = ljm_live_totals(l);
  char a[32], b[32], c[32], d[32], note[160];
  ljm_buf_reset(out);
  ljm_buf_printf(out, "%s  at %.1f s  in use %s in %" PRIu64 " blocks  grown %s%s (last %s%s)",
                 o->path, (double)t->at_us / 1e6, ljm_fmt_human(a, sizeof(a), (double)t->all.inuse_bytes),
                 t->all.inuse_count, t->all.grown >= 0 ? "+" : "",
                 ljm_fmt_human(b, sizeof(b), (double)t->all.grown),
                 t->all.grown_last >= 0 ? "+" : "",
                 ljm_fmt_human(c, sizeof(c), (double)t->all.grown_last));
  ljm_buf_printf(out, "  peak %s", ljm_fmt_human(d, sizeof(d), (double)t->peak_bytes));
  if (ljm_model_stream(m)->ext_flags & 2)
    ljm_buf_printf(out, "  RSS %s", ljm_fmt_human(a, sizeof(a), (double)t->rss));
  else
    ljm_buf_puts(out, "  RSS not recorded");
  if (ljm_sampled_note(m, note, sizeof(note))) ljm_buf_printf(out, "  (%s)", note);
  char filter[1024];
  if (ljm_filter_line(m, filter, sizeof(filter))) ljm_buf_printf(out, "  %s", filter);
}

void ljm_top_row(LjmBuf *out, const LjmLiveRow *r)
{
  char a[32], b[32], c[32], d[32], e[32];
  ljm_buf_reset(out);
  ljm_buf_printf(out, "%10s %9" PRIu64 " %10s %10s %s%-9s %s%-9s ",
                 ljm_fmt_human(a, sizeof(a), (double)r->inuse_bytes), r->inuse_count,
                 ljm_fmt_human(b, sizeof(b), r->alloc_rate), ljm_fmt_human(c, sizeof(c), r->free_rate),
                 r->grown >= 0 ? "+" : "", ljm_fmt_human(d, sizeof(d), (double)r->grown),
                 r->grown_last >= 0 ? "+" : "", ljm_fmt_human(e, sizeof(e), (double)r->grown_last));
}

const char *ljm_top_titles(LjmLiveView v)
{
  return v == LJM_LIVE_STACKS ? "    IN USE    BLOCKS    ALLOC/S    FREED/S GROWN      LAST       "
                                "STACK (innermost first)"
         : v == LJM_LIVE_LABELS ? "    IN USE    BLOCKS    ALLOC/S    FREED/S GROWN      LAST       "
                                  "LABEL"
                                : "    IN USE    BLOCKS    ALLOC/S    FREED/S GROWN      LAST       "
                                  "LINE";
}

int ljm_top_table(FILE *f, LjmLive *l, const LjmModel *m, const LjmTopShow *o)
{
  LjmBuf line = {0}, name = {0};
  LjmFrames frames;
  memset(&frames, 0, sizeof(frames));
  ljm_top_header(&line, l, m, o);
  fprintf(f, "%s\n", ljm_buf_str(&line));
  if (o->status) fprintf(f, "%s\n", o->status);
  fprintf(f, "%s  [%s by %s]\n", ljm_top_titles(o->view), ljm_top_view_name(o->view),
          ljm_top_sort_name(o->sort));
  const LjmLiveRow *rows;
  size_t n = ljm_live_rows(l, o->view, o->sort, &rows);
  unsigned top = o->top ? o->top : 10;
  for (size_t i = 0; i < n && i < top; i++) {
    ljm_top_row(&line, &rows[i]);
    ljm_top_label(&name, l, m, o->view, rows[i].id, &frames);
    fprintf(f, "%s%s\n", ljm_buf_str(&line), ljm_buf_str(&name));
  }
  if (n > top) fprintf(f, "... %zu more\n", n - top);
  fputc('\n', f);
  ljm_buf_free(&line);
  ljm_buf_free(&name);
  ljm_frames_free(&frames);
  return fflush(f) != 0 || ferror(f) ? -1 : 0;
}
