/* growth.c -- ljm growth: the lines and stacks whose in-use bytes grow
** steadily over a recording's time (model/ljm_growth.h), as text or JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/json_str.h"
#include "exporters/common/sampled.h"
#include "exporters/common/state.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"
#include "model/ljm_growth.h"

/* Rows shown per table unless --top says. */
#define TOP_DEFAULT 10

typedef struct Growth {
  LjmExportBase base;
  LjmGrowth *g;
  LjmBuf line, tmp, out;
  LjmFrames frames;
} Growth;

static void *gr_begin(const LjmExportOptions *o, FILE *out, char *err, size_t errlen)
{
  Growth *s = ljm_export_state_new(sizeof(Growth), o, out, err, errlen);
  if (!s) return NULL;
  if (!(s->g = ljm_growth_new())) {
    free(s);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  return s;
}

static void gr_on_event(void *st, const LjmModel *m, const LjmLiveEvent *ev)
{
  (void)m;
  ljm_growth_event(((Growth *)st)->g, ev);
}

static void gr_on_time(void *st, const LjmModel *m, uint64_t usec)
{
  (void)m;
  ljm_growth_time(((Growth *)st)->g, usec);
}

/* The one-line label of a site, cleaned for a terminal or JSON. */
static const char *site_label(Growth *s, const LjmModel *m, uint32_t site)
{
  ljm_buf_reset(&s->tmp);
  ljm_buf_reset(&s->line);
  if (site < ljm_model_nsites(m)) ljm_site_label(&s->tmp, m, ljm_model_site(m, site));
  ljm_text_clean(&s->line, s->tmp.p ? s->tmp.p : "", s->tmp.len, 0, LJM_CLEAN_NO_CAP);
  return ljm_buf_str(&s->line);
}

static void text_row(Growth *s, const LjmGrowthRow *r)
{
  char a[32], b[32], c[32];
  fprintf(s->base.out, "  %12s/s %12s/h %6.0f%% %11s %7.1f s  ", ljm_fmt_human(a, sizeof(a), r->slope),
          ljm_fmt_human(b, sizeof(b), r->slope * 3600), r->steady * 100,
          ljm_fmt_human(c, sizeof(c), (double)r->in_use), (double)r->since_us / 1e6);
}

static size_t shown(const Growth *s, size_t n)
{
  unsigned top = s->base.o.top ? s->base.o.top : TOP_DEFAULT;
  return n < top ? n : top;
}

static void write_text(Growth *s, const LjmModel *m, const LjmGrowthResult *r)
{
  FILE *f = s->base.out;
  char a[32], b[32], c[32], note[160], fnote[1024];
  const char *sampled = ljm_sampled_note(m, note, sizeof(note));
  const char *filter = ljm_filter_line(m, fnote, sizeof(fnote));
  fprintf(f, "%s: %.1f s to %.1f s, a point every %.1f s%s%s%s%s\n", s->base.o.in_path,
          (double)r->from_us / 1e6, (double)r->to_us / 1e6, (double)r->bucket_us / 1e6,
          sampled ? "; " : "", sampled ? sampled : "", filter ? "; " : "", filter ? filter : "");
  if (!r->nsites && !r->nstacks) {
    fprintf(f, "No steady growth: nothing in use grew by %s or more, steadily, to the end.\n",
            ljm_fmt_human(a, sizeof(a), (double)r->min_growth));
    return;
  }
  fprintf(f, "\nSteady growth by line (%zu; slope of in-use bytes since a time, share of up to "
          "%u stretches that grew):\n  %14s %14s %7s %11s %9s  %s\n", r->nsites,
          LJM_GROWTH_STRETCHES, "slope", "per hour", "steady", "in use now", "since", "line");
  if (!r->nsites) fputs("  (none: the stacks below hold it)\n", f);
  for (size_t i = 0; i < shown(s, r->nsites); i++) {
    text_row(s, &r->sites[i]);
    fprintf(f, "%s\n", site_label(s, m, r->sites[i].key));
  }
  if (shown(s, r->nsites) < r->nsites)
    fprintf(f, "  ... %zu more (--top N)\n", r->nsites - shown(s, r->nsites));
  if (!r->nstacks) return;
  fprintf(f, "\nSteady growth by call stack (%zu), innermost frame first:\n", r->nstacks);
  for (size_t i = 0; i < shown(s, r->nstacks); i++) {
    const LjmGrowthRow *row = &r->stacks[i];
    fprintf(f, "#%zu %s/s (%s/h), steady %.0f%%, %s in use now, since %.1f s\n", i + 1,
            ljm_fmt_human(a, sizeof(a), row->slope), ljm_fmt_human(b, sizeof(b), row->slope * 3600),
            row->steady * 100, ljm_fmt_human(c, sizeof(c), (double)row->in_use),
            (double)row->since_us / 1e6);
    ljm_frames_of(m, row->key, &s->frames);
    for (size_t j = s->frames.n; j-- > 0;) {
      ljm_buf_reset(&s->line);
      ljm_frame_clean(&s->line, ljm_frame_s(&s->frames, j), s->frames.len[j], 0);
      fprintf(f, "    %s\n", ljm_buf_str(&s->line));
    }
  }
  if (shown(s, r->nstacks) < r->nstacks)
    fprintf(f, "... %zu more (--top N)\n", r->nstacks - shown(s, r->nstacks));
}

static void json_row(Growth *s, const LjmGrowthRow *r)
{
  fprintf(s->base.out, "\"bytes_per_s\": %.1f, \"bytes_per_hour\": %.0f, \"steady\": %.2f, "
          "\"in_use\": %lld, \"grown\": %lld, \"since_s\": %.3f", r->slope, r->slope * 3600,
          r->steady, (long long)r->in_use, (long long)r->grown, (double)r->since_us / 1e6);
}

static void write_json(Growth *s, const LjmModel *m, const LjmGrowthResult *r)
{
  FILE *f = s->base.out;
  const LjmStreamInfo *si = ljm_model_stream(m);
  fputs("{\"file\": ", f);
  ljm_json_fputs(f, &s->out, &s->tmp, s->base.o.in_path ? s->base.o.in_path : "");
  fprintf(f, ", \"from_s\": %.3f, \"to_s\": %.3f, \"point_s\": %.3f, \"points\": %u, "
          "\"sample_rate\": %llu, \"min_growth\": %lld",
          (double)r->from_us / 1e6, (double)r->to_us / 1e6, (double)r->bucket_us / 1e6, r->points,
          (unsigned long long)si->sample_rate, (long long)r->min_growth);
  {
    char filter[1024];
    fputs(", \"filter\": ", f);
    if (ljm_model_filter_note(m, filter, sizeof(filter)))
      ljm_json_fputs(f, &s->out, &s->tmp, filter);
    else
      fputs("null", f);
  }
  fputs(",\n \"lines\": [", f);
  for (size_t i = 0; i < shown(s, r->nsites); i++) {
    const LjmGrowthRow *row = &r->sites[i];
    const LjmSite *site = ljm_model_site(m, row->key);
    fprintf(f, "%s\n  {\"line\": ", i ? "," : "");
    ljm_json_fputs(f, &s->out, &s->tmp, site_label(s, m, row->key));
    /* A trace: the file and line it starts at. */
    if (site->kind == LJM_SITE_TRACE && site->trace_start < ljm_model_nsites(m))
      site = ljm_model_site(m, site->trace_start);
    fputs(", \"file\": ", f);
    ljm_json_fputs(f, &s->out, &s->tmp, site->file ? site->file : "");
    fprintf(f, ", \"line_number\": %lld, ", (long long)site->line);
    json_row(s, row);
    fputc('}', f);
  }
  fprintf(f, "],\n \"lines_total\": %zu,\n \"stacks\": [", r->nsites);
  for (size_t i = 0; i < shown(s, r->nstacks); i++) {
    const LjmGrowthRow *row = &r->stacks[i];
    fprintf(f, "%s\n  {", i ? "," : "");
    json_row(s, row);
    fputs(", \"frames\": [", f);
    ljm_frames_of(m, row->key, &s->frames);
    for (size_t j = s->frames.n; j-- > 0;) {
      ljm_buf_reset(&s->line);
      ljm_json_name(&s->line, &s->out, ljm_frame_s(&s->frames, j), s->frames.len[j]);
      fprintf(f, "%s%s", j + 1 < s->frames.n ? ", " : "", ljm_buf_str(&s->line));
    }
    fputs("]}", f);
  }
  fprintf(f, "],\n \"stacks_total\": %zu}\n", r->nstacks);
}

static void gr_free(Growth *s)
{
  ljm_growth_free(s->g);
  ljm_buf_free(&s->line);
  ljm_buf_free(&s->tmp);
  ljm_buf_free(&s->out);
  ljm_frames_free(&s->frames);
  free(s);
}

static int gr_finish(void *st, const LjmModel *m, char *err, size_t errlen)
{
  Growth *s = st;
  LjmGrowthResult r;
  int rc = 0;
  if (!ljm_growth_timed(s->g) && ljm_model_stream(m)->windowed &&
      (ljm_model_stream(m)->ext_flags & 2)) {
    snprintf(err, errlen, "no time mark before --to %.6f s: nothing to measure",
             ljm_model_stream(m)->window_to / 1e6);
    gr_free(s);
    return -1;
  }
  if (!ljm_growth_timed(s->g)) {
    snprintf(err, errlen, "no time marks, which growth needs: record with 'ljm record --time' "
             "(or --stacks, or --sample), or {time = true}");
    gr_free(s);
    return -1;
  }
  if (ljm_growth_analyse(s->g, m, s->base.o.skip_us, &r) != 0) {
    if (ljm_growth_oom(s->g))
      snprintf(err, errlen, "out of memory");
    else
      snprintf(err, errlen, "%.1f s recorded, %.1f s after --skip or --from: too short to "
               "tell steady growth (it needs %u points; they are %.1f s apart here, 1/16 to "
               "1/32 of the recording)", (double)ljm_growth_end(s->g) / 1e6,
               (double)(r.to_us - r.from_us) / 1e6, LJM_GROWTH_MIN_POINTS,
               (double)r.bucket_us / 1e6);
    gr_free(s);
    return -1;
  }
  if (s->base.o.json) write_json(s, m, &r);
  else write_text(s, m, &r);
  if (s->base.o.steepest) {  /* a line's, or a stack's where no line grows as fast */
    double top = r.nsites ? r.sites[0].slope : 0;
    if (r.nstacks && r.stacks[0].slope > top) top = r.stacks[0].slope;
    *s->base.o.steepest = top;
  }
  if (s->line.oom || s->tmp.oom || s->out.oom || s->frames.oom) {
    snprintf(err, errlen, "out of memory");
    rc = -1;
  }
  ljm_growth_result_free(&r);
  gr_free(s);
  return rc;
}

const LjmExporter ljm_exporter_growth = {
  .name = "growth", .command = "growth", .reads = LJM_READS_PROFILE,
  .summary = "what grows steadily over a recording's time (text, or --json)",
  .streaming = 1, .refuses = 1, .begin = gr_begin, .on_event = gr_on_event,
  .on_time = gr_on_time, .finish = gr_finish,
};
