/* frames.c -- the frame path of a site, shared by the folded and SVG exporters. */
#include "exporters/common/frames.h"

#include <stdio.h>
#include <string.h>

#include "exporters/common/utf8.h"

static void frames_add(LjmFrames *f, const char *s, size_t len)
{
  if (f->n < LJM_FRAMES_MAX) {
    f->s[f->n] = s ? s : "";
    f->len[f->n] = s ? len : 0;
    f->n++;
  }
}

static void frames_adds(LjmFrames *f, const char *s)
{
  frames_add(f, s, s ? strlen(s) : 0);
}

void ljm_frames_of(const LjmModel *m, const LjmSite *s, LjmFrames *f)
{
  f->n = 0;
  switch (s->kind) {
  case LJM_SITE_LUA:
    frames_adds(f, s->file && *s->file ? s->file : s->chunk);
    if (s->func && *s->func) frames_adds(f, s->func);
    break;
  case LJM_SITE_C:
    frames_adds(f, "C");
    break;
  case LJM_SITE_TRACE: {
    frames_adds(f, "JIT");
    snprintf(f->scratch, sizeof(f->scratch), "TRACE [%llu]",
             (unsigned long long)s->traceno);
    frames_adds(f, f->scratch);
    if (s->trace_start != LJM_NO_SITE &&
        s->trace_start < ljm_model_nsites(m)) {
      const LjmSite *st = ljm_model_site(m, s->trace_start);
      frames_add(f, st->name, st->name_len);
    }
    return;
  }
  default:
    break;
  }
  frames_add(f, s->name, s->name_len);
}

void ljm_frame_clean(LjmBuf *b, const char *s, size_t len, unsigned flags)
{
  if (len == 0) ljm_buf_putc(b, '?');
  else ljm_text_clean(b, s, len, flags, LJM_CLEAN_NO_CAP);
}

/* Bytes that may belong to the number: ASCII digits and '.', and any
** non-ASCII byte (Perl's \d also matches non-ASCII digits). */
static int numberish(unsigned char c)
{
  return (c >= '0' && c <= '9') || c == '.' || c >= 0x80;
}

void ljm_frame_fix_last(LjmBuf *b, size_t start)
{
  size_t i = b->len;
  if (b->oom) return;
  while (i > start && numberish((unsigned char)b->p[i - 1])) i--;
  /* After cleaning, ' ' is the only whitespace left in a folded frame. */
  if (i < b->len && i > start && b->p[i - 1] == ' ') b->p[i - 1] = '_';
}

void ljm_frames_folded(LjmBuf *b, const LjmModel *m, const LjmSite *s)
{
  LjmFrames f;
  size_t start = b->len;
  ljm_frames_of(m, s, &f);
  for (size_t i = 0; i < f.n; i++) {
    if (i) ljm_buf_putc(b, ';');
    start = b->len;
    ljm_frame_clean(b, f.s[i], f.len[i], LJM_CLEAN_FOLDED);
  }
  ljm_frame_fix_last(b, start);
}
