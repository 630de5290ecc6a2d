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
    f->kind[f->n] = f->cur;
    f->n++;
  }
}

static void frames_adds(LjmFrames *f, const char *s)
{
  frames_add(f, s, s ? strlen(s) : 0);
}

/* "file:line" of a Lua site; short ones in scratch, long ones in f->line. */
static void frames_add_line(LjmFrames *f, const LjmSite *s)
{
  size_t fl = strlen(s->file);
  if (fl + 24 <= sizeof(f->scratch[1])) {
    int n = snprintf(f->scratch[1], sizeof(f->scratch[1]), "%s:%lld", s->file,
                     (long long)s->line);
    frames_add(f, f->scratch[1], (size_t)n);
    return;
  }
  ljm_buf_reset(&f->line);
  ljm_buf_printf(&f->line, "%s:%lld", s->file, (long long)s->line);
  frames_add(f, f->line.oom ? s->file : f->line.p, f->line.oom ? fl : f->line.len);
}

/* The path of a non-trace site. */
static void frames_plain(LjmFrames *f, const LjmSite *s)
{
  f->cur = s->kind;
  switch (s->kind) {
  case LJM_SITE_LUA:
    if (s->func_from == LJM_FUNC_BUILTIN) {
      frames_adds(f, "[builtin]");
      frames_adds(f, s->func);
      return;
    }
    frames_adds(f, *s->file ? s->file : "?");
    frames_adds(f, s->func);
    frames_add_line(f, s);
    return;
  case LJM_SITE_C:
    frames_adds(f, "[C]");
    frames_adds(f, s->func);
    return;
  default:
    frames_adds(f, "INTERNAL");
    return;
  }
}

void ljm_frames_of(const LjmModel *m, const LjmSite *s, LjmFrames *f)
{
  f->n = 0;
  if (s->kind != LJM_SITE_TRACE) {
    frames_plain(f, s);
    return;
  }
  const LjmSite *st = s->trace_start != LJM_NO_SITE && s->trace_start < ljm_model_nsites(m)
                          ? ljm_model_site(m, s->trace_start) : NULL;
  if (st && st->kind != LJM_SITE_TRACE && st->kind != LJM_SITE_INTERNAL)
    frames_plain(f, st);
  f->cur = LJM_SITE_TRACE;
  if (!f->n) frames_adds(f, "[JIT]");
  snprintf(f->scratch[0], sizeof(f->scratch[0]), "TRACE [%llu]",
           (unsigned long long)s->traceno);
  frames_adds(f, f->scratch[0]);
}

void ljm_frames_free(LjmFrames *f)
{
  ljm_buf_free(&f->line);
}

/* Label of a non-trace site. */
static void label_plain(LjmBuf *b, const LjmSite *s)
{
  switch (s->kind) {
  case LJM_SITE_LUA:
    ljm_buf_puts(b, s->func);
    if (s->func_from == LJM_FUNC_BUILTIN) ljm_buf_puts(b, " [builtin]");
    else ljm_buf_printf(b, " (%s:%lld)", s->file, (long long)s->line);
    return;
  case LJM_SITE_C:
    ljm_buf_puts(b, s->func);
    ljm_buf_puts(b, " [C]");
    return;
  default:
    ljm_buf_puts(b, "INTERNAL");
    return;
  }
}

void ljm_site_label(LjmBuf *b, const LjmModel *m, const LjmSite *s)
{
  if (s->kind != LJM_SITE_TRACE) {
    label_plain(b, s);
    return;
  }
  ljm_buf_printf(b, "TRACE [%llu]", (unsigned long long)s->traceno);
  if (s->trace_start == LJM_NO_SITE || s->trace_start >= ljm_model_nsites(m)) return;
  const LjmSite *st = ljm_model_site(m, s->trace_start);
  if (st->kind == LJM_SITE_LUA && st->func_from != LJM_FUNC_BUILTIN) {
    ljm_buf_printf(b, " (started at %s:%lld)", st->file, (long long)st->line);
  } else if (st->kind == LJM_SITE_LUA || st->kind == LJM_SITE_C) {
    ljm_buf_puts(b, " (started in ");
    label_plain(b, st);
    ljm_buf_putc(b, ')');
  }
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
  LjmFrames f = { 0 };
  size_t start = b->len;
  ljm_frames_of(m, s, &f);
  for (size_t i = 0; i < f.n; i++) {
    if (i) ljm_buf_putc(b, ';');
    start = b->len;
    ljm_frame_clean(b, f.s[i], f.len[i], LJM_CLEAN_FOLDED);
  }
  ljm_frame_fix_last(b, start);
  ljm_frames_free(&f);
}
