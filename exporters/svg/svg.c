/* svg.c -- a self-contained interactive flame graph, written with libxml2.
**
** Frames come from svg_tree (paths of common/frames.h, merged, children
** sorted by name); the root "all" is at the bottom. Every frame is a
**   <g class="lua|c|jit|internal" ljm:x ljm:v ljm:depth>
**     <title>NAME (N unit, P%)</title><rect/><text>label</text></g>
** where ljm:x and ljm:v are exact integers in the graph's unit, so a
** parent's ljm:v is its own value plus its children's. CSS and script are
** embedded (svg_assets.c); nothing outside the file is needed.
**
** Width: the file is laid out for SVG_WIDTH user units (viewBox), which is
** what a viewer without scripts shows (scaled into the space it has), but
** its width is "100%": in a browser the script lays the frames out again in
** the width the window (or the embedding element) gives, on load and on
** every resize, and sets the viewBox to it so text keeps its size.
*/
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlwriter.h>

#include "exporters/common/sampled.h"
#include "exporters/common/state.h"
#include "exporters/common/utf8.h"
#include "exporters/common/value.h"
#include "exporters/ljm_exporter.h"
#include "exporters/svg/svg_assets.h"
#include "exporters/svg/svg_tree.h"

#define SVG_WIDTH 1200
#define SVG_XPAD 10
#define SVG_FRAME_H 16
#define SVG_TOP 72     /* title, subtitle, legend */
#define SVG_BOTTOM 34  /* details line */
#define SVG_FONT_W 7.0 /* average glyph width at 12px, for labels */
/* Frames narrower than this (in SVG_WIDTH units) are not written: their
** value stays in their caller's frame, as flamegraph.pl's --minwidth
** default (0.1 pixels) leaves them out. A big profile keeps the frames a
** screen can show, and a browser draws it in seconds. */
#define SVG_MIN_WIDTH 0.1

/* What the drawn graph leaves out: frames narrower than SVG_MIN_WIDTH. */
typedef struct SvgCut {
  uint64_t minv;       /* a frame's value must reach this to be drawn */
  size_t hidden;       /* frames left out */
  uint64_t hidden_v;   /* the value of the outermost of them */
  uint32_t maxdepth;   /* the deepest frame drawn */
} SvgCut;

typedef struct SvgState {
  LjmExportBase base;
  char note[128];  /* a sampled stream's note, for the subtitle; else "" */
  char filter[1024];  /* the filters' note (ljm_model_filter_note), or "" */
} SvgState;

static void *svg_begin(const LjmExportOptions *o, FILE *out, char *err,
                       size_t errlen)
{
  return ljm_export_state_new(sizeof(SvgState), o, out, err, errlen);
}

/* The writer's sink: the FILE, and the errno of its first failed write
** (libxml2 only learns "-1"). */
typedef struct SvgSink {
  FILE *f;
  int werr;
} SvgSink;

static int out_write(void *ctx, const char *buf, int len)
{
  SvgSink *s = ctx;
  errno = 0;
  if (fwrite(buf, 1, (size_t)len, s->f) == (size_t)len) return len;
  if (!s->werr) s->werr = errno ? errno : EIO;
  return -1;
}

/* libxml2 prints "I/O error : write error" itself; the exporter reports it. */
static void quiet_xml_error(void *ctx, const char *msg, ...) {}

static int out_close(void *ctx) { return 0; }

/* -- Colours ------------------------------------------------------------- */

static const char *kind_class(LjmSiteKind k)
{
  switch (k) {
  case LJM_SITE_LUA: return "lua";
  case LJM_SITE_C: return "c";
  case LJM_SITE_TRACE: return "jit";
  case LJM_SITE_LABEL: return "label";
  default: return "internal";
  }
}

/* Base colour and spread per kind: Lua green, C blue, JIT orange, internal
** grey, label purple. A hash of the name picks the shade, so a frame keeps
** its colour. */
static void frame_fill(char *buf, size_t len, LjmSiteKind k, const char *name,
                       size_t nlen, int root)
{
  static const int base[5][3] = {
    {150, 150, 150}, {60, 170, 60}, {70, 130, 210}, {235, 130, 30}, {150, 100, 200}};
  static const int spread[5][3] = {
    {50, 50, 50}, {60, 60, 40}, {50, 50, 40}, {20, 80, 40}, {40, 40, 40}};
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < nlen; i++) h = (h ^ (unsigned char)name[i]) * 16777619u;
  int ki = root ? 0 : (int)k;
  if (ki < 0 || ki > 4) ki = 0;
  double v = (h % 1000) / 1000.0;
  char n[3][LJM_NUM_MAX];
  for (int i = 0; i < 3; i++)
    ljm_fmt_u64(n[i], (uint64_t)(base[ki][i] + (int)(v * spread[ki][i])));
  snprintf(buf, len, "rgb(%s,%s,%s)", n[0], n[1], n[2]);
}

/* -- Writing --------------------------------------------------------------- */

/* Label that fits w pixels: the whole name, or its first code points and
** ".." when at least three of them fit, else nothing (as the script does). */
static void label_of(LjmBuf *b, const char *s, size_t len, double w)
{
  long fit = (long)((w - 6) / SVG_FONT_W);
  size_t cps = 0, i = 0, cut = 0;
  while (i < len) {
    uint32_t cp;
    i += ljm_utf8_decode((const unsigned char *)s + i, len - i, &cp);
    cps++;
    if ((long)cps == fit - 2) cut = i;
  }
  if ((long)cps <= fit) {
    ljm_buf_put(b, s, len);
  } else if (fit >= 5) {
    ljm_buf_put(b, s, cut);
    ljm_buf_puts(b, "..");
  }
}

typedef struct SvgCtx {
  xmlTextWriterPtr w;
  int bad;            /* a writer call failed */
  LjmBuf tmp;
  int snapshot;       /* the model is a heap snapshot */
  const char *title;  /* what the value is (ljm_value_title) */
  int grouped;        /* the tree is grouped by a label (ljm_model_group_by) */
} SvgCtx;

#define W(call) do { if ((call) < 0) c->bad = 1; } while (0)
#define X(s) ((const xmlChar *)(s))

/* Per-frame attributes are formatted here, not with libxml2's Format
** calls: those allocate and run vsnprintf for every number. */
static void attr_fixed(SvgCtx *c, const char *name, double v)
{
  char buf[LJM_NUM_MAX];
  W(xmlTextWriterWriteAttribute(c->w, X(name), X(ljm_fmt_fixed2(buf, v))));
}

static void attr_u64(SvgCtx *c, const char *name, uint64_t v)
{
  char buf[LJM_NUM_MAX];
  W(xmlTextWriterWriteAttribute(c->w, X(name), X(ljm_fmt_u64(buf, v))));
}

static void el_text(SvgCtx *c, const char *id, double x, double y,
                    const char *cls, const char *text)
{
  W(xmlTextWriterStartElement(c->w, X("text")));
  if (id) W(xmlTextWriterWriteAttribute(c->w, X("id"), X(id)));
  if (cls) W(xmlTextWriterWriteAttribute(c->w, X("class"), X(cls)));
  attr_fixed(c, "x", x);
  attr_fixed(c, "y", y);
  W(xmlTextWriterWriteString(c->w, X(text)));
  W(xmlTextWriterEndElement(c->w));
}

static void el_rect(SvgCtx *c, const char *id, double x, double y, double w,
                    double h, const char *fill)
{
  W(xmlTextWriterStartElement(c->w, X("rect")));
  if (id) W(xmlTextWriterWriteAttribute(c->w, X("id"), X(id)));
  attr_fixed(c, "x", x);
  attr_fixed(c, "y", y);
  attr_fixed(c, "width", w);
  attr_fixed(c, "height", h);
  W(xmlTextWriterWriteAttribute(c->w, X("fill"), X(fill)));
  W(xmlTextWriterWriteAttribute(c->w, X("rx"), X("2")));
  W(xmlTextWriterWriteAttribute(c->w, X("ry"), X("2")));
  W(xmlTextWriterEndElement(c->w));
}

static void write_head(SvgCtx *c, const SvgState *st, const SvgTree *t,
                       const SvgCut *cut, int height)
{
  char num[LJM_THOUSANDS_MAX];
  const char *unit = ljm_value_unit(st->base.value);
  const char *in = st->base.o.in_path ? st->base.o.in_path : "-";
  W(xmlTextWriterStartDocument(c->w, "1.0", "UTF-8", "no"));
  W(xmlTextWriterWriteDTD(c->w, X("svg"), X("-//W3C//DTD SVG 1.1//EN"),
                          X("http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"),
                          NULL));
  W(xmlTextWriterStartElement(c->w, X("svg")));
  W(xmlTextWriterWriteAttribute(c->w, X("version"), X("1.1")));
  W(xmlTextWriterWriteAttribute(c->w, X("width"), X("100%")));
  W(xmlTextWriterWriteFormatAttribute(c->w, X("height"), "%d", height));
  W(xmlTextWriterWriteFormatAttribute(c->w, X("viewBox"), "0 0 %d %d",
                                      SVG_WIDTH, height));
  /* Without the script: the SVG_WIDTH layout, scaled down when the space is
  ** narrower, at the left when it is wider (as a fixed-width file was). */
  W(xmlTextWriterWriteAttribute(c->w, X("preserveAspectRatio"),
                                X("xMinYMin meet")));
  W(xmlTextWriterWriteAttribute(c->w, X("onload"), X("init(evt)")));
  W(xmlTextWriterWriteAttribute(c->w, X("xmlns"), X("http://www.w3.org/2000/svg")));
  W(xmlTextWriterWriteAttribute(c->w, X("xmlns:ljm"), X(SVG_LJM_NS)));
  W(xmlTextWriterWriteFormatAttribute(c->w, X("ljm:total"), "%" PRIu64,
                                      t->nodes[0].total));
  W(xmlTextWriterWriteAttribute(c->w, X("ljm:value"),
                                X(ljm_value_kind_name(st->base.value))));
  W(xmlTextWriterWriteAttribute(c->w, X("ljm:unit"), X(unit)));

  W(xmlTextWriterStartElement(c->w, X("style")));
  W(xmlTextWriterWriteAttribute(c->w, X("type"), X("text/css")));
  W(xmlTextWriterWriteCDATA(c->w, X(svg_css)));
  W(xmlTextWriterEndElement(c->w));
  W(xmlTextWriterStartElement(c->w, X("script")));
  W(xmlTextWriterWriteAttribute(c->w, X("type"), X("text/ecmascript")));
  W(xmlTextWriterWriteCDATA(c->w, X(svg_script)));
  W(xmlTextWriterEndElement(c->w));

  el_rect(c, "background", 0, 0, SVG_WIDTH, height, "rgb(248,248,240)");
  ljm_buf_reset(&c->tmp);
  ljm_buf_printf(&c->tmp, "LuaJIT %s flame graph: %s", c->snapshot ? "heap snapshot" : "memory",
                 c->title);
  el_text(c, "title", SVG_WIDTH / 2.0, 24, NULL, ljm_buf_str(&c->tmp));
  ljm_buf_reset(&c->tmp);
  ljm_text_clean(&c->tmp, in, strlen(in), 0, LJM_CLEAN_NO_CAP);
  ljm_buf_printf(&c->tmp, ": %s %s in total",
                 ljm_fmt_thousands(num, t->nodes[0].total), unit);
  if (st->note[0]) ljm_buf_printf(&c->tmp, " (%s)", st->note);
  if (st->filter[0]) ljm_buf_printf(&c->tmp, "; %s", st->filter);
  if (cut->hidden) {
    ljm_buf_printf(&c->tmp, "; %s frames narrower than %.1f px (",
                   ljm_fmt_thousands(num, cut->hidden), SVG_MIN_WIDTH);
    ljm_buf_printf(&c->tmp, "%s %s) drawn in their callers",
                   ljm_fmt_thousands(num, cut->hidden_v), unit);
  }
  el_text(c, "subtitle", SVG_WIDTH / 2.0, 44, NULL, ljm_buf_str(&c->tmp));
  el_text(c, "unzoom", SVG_XPAD, 24, "hide", "Reset Zoom");
  el_text(c, "search", SVG_WIDTH - SVG_XPAD, 24, NULL, "Search");
  el_text(c, "details", SVG_XPAD, height - 12, NULL, " ");
  el_text(c, "matched", SVG_WIDTH - SVG_XPAD, height - 12, NULL, " ");
  /* Legend: one swatch per kind (labels in a grouped tree only). */
  static const char *const names[5] = {"internal", "Lua", "C", "JIT", "label"};
  static const LjmSiteKind kinds[5] = {LJM_SITE_INTERNAL, LJM_SITE_LUA,
                                       LJM_SITE_C, LJM_SITE_TRACE, LJM_SITE_LABEL};
  for (int i = 0; i < (c->grouped ? 5 : 4); i++) {
    char fill[32];
    double x = SVG_XPAD + i * 90;
    frame_fill(fill, sizeof(fill), kinds[i], "", 0, 0);
    el_rect(c, NULL, x, 50, 12, 12, fill);
    el_text(c, NULL, x + 16, 60, NULL, names[i]);
  }
}

static void write_frame(SvgCtx *c, const SvgTree *t, size_t i, double scale,
                        int height, const char *unit)
{
  const SvgNode *nd = &t->nodes[i];
  const char *name = t->names.p + nd->name_off;
  uint64_t total = t->nodes[0].total;
  double x = SVG_XPAD + nd->x * scale;
  double w = i == 0 ? SVG_WIDTH - 2 * SVG_XPAD : nd->total * scale;
  double y = height - SVG_BOTTOM - (nd->depth + 1.0) * SVG_FRAME_H;
  char num[LJM_THOUSANDS_MAX], fill[32];

  W(xmlTextWriterStartElement(c->w, X("g")));
  W(xmlTextWriterWriteAttribute(c->w, X("class"),
                                X(i == 0 ? "internal" : kind_class(nd->kind))));
  attr_u64(c, "ljm:x", nd->x);
  attr_u64(c, "ljm:v", nd->total);
  attr_u64(c, "ljm:depth", nd->depth);
  ljm_buf_reset(&c->tmp);
  ljm_buf_put(&c->tmp, name, nd->name_len);
  char pct[LJM_NUM_MAX];
  ljm_buf_puts(&c->tmp, " (");
  ljm_buf_puts(&c->tmp, ljm_fmt_thousands(num, nd->total));
  ljm_buf_putc(&c->tmp, ' ');
  ljm_buf_puts(&c->tmp, unit);
  ljm_buf_puts(&c->tmp, ", ");
  ljm_buf_puts(&c->tmp, ljm_fmt_fixed2(pct, total ? 100.0 * nd->total / total : 100.0));
  ljm_buf_puts(&c->tmp, "%)");
  W(xmlTextWriterStartElement(c->w, X("title")));
  W(xmlTextWriterWriteString(c->w, X(ljm_buf_str(&c->tmp))));
  W(xmlTextWriterEndElement(c->w));
  frame_fill(fill, sizeof(fill), nd->kind, name, nd->name_len, i == 0);
  el_rect(c, NULL, x, y, w, SVG_FRAME_H - 1, fill);
  ljm_buf_reset(&c->tmp);
  label_of(&c->tmp, name, nd->name_len, w);
  el_text(c, NULL, x + 3, y + 11.5, NULL, ljm_buf_str(&c->tmp));
  W(xmlTextWriterEndElement(c->w));
}

static int svg_write(SvgState *st, const LjmModel *m, char *err, size_t errlen)
{
  SvgTree t;
  SvgCtx ctx = {0}, *c = &ctx;
  if (svg_tree_build(&t, m, st->base.value) < 0) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  double scale = t.nodes[0].total
                     ? (double)(SVG_WIDTH - 2 * SVG_XPAD) / t.nodes[0].total
                     : 0;
  SvgCut cut = {0};
  /* The smallest value drawn at least SVG_MIN_WIDTH wide (1 at least). */
  cut.minv = scale > 0 ? (uint64_t)(SVG_MIN_WIDTH / scale) : 0;
  while (scale > 0 && (double)cut.minv * scale < SVG_MIN_WIDTH) cut.minv++;
  for (size_t i = 0; i < t.n; i++) {
    const SvgNode *nd = &t.nodes[i];
    if (i == 0 || nd->total >= cut.minv) {
      if (nd->depth > cut.maxdepth) cut.maxdepth = nd->depth;
      continue;
    }
    cut.hidden++;
    if (t.nodes[nd->parent].total >= cut.minv) cut.hidden_v += nd->total;
  }
  int height = SVG_TOP + (int)(cut.maxdepth + 1) * SVG_FRAME_H + SVG_BOTTOM;
  SvgSink sink = { st->base.out, 0 };
  xmlGenericErrorFunc old_handler = xmlGenericError;
  void *old_ctx = xmlGenericErrorContext;
  xmlOutputBufferPtr ob = xmlOutputBufferCreateIO(out_write, out_close, &sink, NULL);
  c->w = ob ? xmlNewTextWriter(ob) : NULL;
  if (!c->w) {
    if (ob) xmlOutputBufferClose(ob);
    svg_tree_free(&t);
    snprintf(err, errlen, "cannot create the XML writer");
    return -1;
  }
  xmlSetGenericErrorFunc(NULL, quiet_xml_error);
  xmlTextWriterSetIndent(c->w, 0);
  if (!ljm_sampled_note(m, st->note, sizeof(st->note))) st->note[0] = '\0';
  if (!ljm_filter_line(m, st->filter, sizeof(st->filter))) st->filter[0] = '\0';
  c->snapshot = ljm_model_stream(m)->snapshot;
  c->grouped = ljm_model_group_key(m) != NULL;
  c->title = ljm_value_snapshot_title(m, st->base.value);
  if (!c->title) c->title = ljm_value_kind_name(st->base.value);
  write_head(c, st, &t, &cut, height);
  W(xmlTextWriterStartElement(c->w, X("g")));
  W(xmlTextWriterWriteAttribute(c->w, X("id"), X("frames")));
  for (size_t i = 0; i < t.n; i++) {
    if (i && t.nodes[i].total < cut.minv) continue;  /* a caller is never narrower */
    write_frame(c, &t, i, scale, height, ljm_value_unit(st->base.value));
    W(xmlTextWriterWriteString(c->w, X("\n")));
  }
  W(xmlTextWriterEndDocument(c->w));  /* closes every open element */
  xmlFreeTextWriter(c->w);           /* flushes and frees ob */
  xmlSetGenericErrorFunc(old_ctx, old_handler);
  int bad = c->bad || c->tmp.oom;
  ljm_buf_free(&c->tmp);
  svg_tree_free(&t);
  if (sink.werr) {
    snprintf(err, errlen, "write error: %s", strerror(sink.werr));
    return -1;
  }
  if (bad) {
    snprintf(err, errlen, "writing the SVG failed");
    return -1;
  }
  return 0;
}

static int svg_finish(void *p, const LjmModel *m, char *err, size_t errlen)
{
  SvgState *st = p;
  int rc = svg_write(st, m, err, errlen);
  free(st);
  return rc;
}

const LjmExporter ljm_exporter_svg = {
  .name = "svg", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "interactive flame graph (SVG with tooltips, zoom and search)",
  .suffixes = (const char *const[]){".svg", NULL}, .begin = svg_begin, .finish = svg_finish,
};
