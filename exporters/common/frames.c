/* frames.c -- the frame path of a call-tree node (folded, SVG, Markdown). */
#include "exporters/common/frames.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/utf8.h"

/* The file of a site's frames: only chunks naming a file or a source. */
static const char *file_of(const LjmSite *s)
{
  return s->kind == LJM_SITE_LUA && s->func_from != LJM_FUNC_BUILTIN && s->chunk &&
                 (s->chunk[0] == '@' || s->chunk[0] == '=') && s->file && s->file[0]
             ? s->file : NULL;
}

/* The last component of a site's file: frame names carry it, the frame's
** file (LjmFrames.file) the whole path. */
static const char *base_of(const char *file)
{
  const char *b = strrchr(file, '/');
  return b ? b + 1 : file;
}

/* The line a Lua function starts on: 1 for a main chunk (LuaJIT says 0). */
static int64_t func_line(const LjmSite *s)
{
  return s->func_from == LJM_FUNC_MAIN ? 1 : (int64_t)s->func_line;
}

/* What the next frame added stands for (file and line). */
static void frames_at(LjmFrames *f, const char *file, int64_t line)
{
  f->cur_file = file;
  f->cur_line = file && line > 0 ? line : 0;  /* a line needs a file */
}

static int frames_grow(LjmFrames *f)
{
  size_t cap = f->cap ? f->cap * 2 : 16;
  size_t *o = realloc(f->off, cap * sizeof(*o));
  if (!o) return -1;
  f->off = o;
  size_t *l = realloc(f->len, cap * sizeof(*l));
  if (!l) return -1;
  f->len = l;
  LjmSiteKind *k = realloc(f->kind, cap * sizeof(*k));
  if (!k) return -1;
  f->kind = k;
  const char **fi = realloc(f->file, cap * sizeof(*fi));
  if (!fi) return -1;
  f->file = fi;
  int64_t *li = realloc(f->line, cap * sizeof(*li));
  if (!li) return -1;
  f->line = li;
  f->cap = cap;
  return 0;
}

static void frames_push(LjmFrames *f, LjmSiteKind kind, size_t off)
{
  if (f->n == f->cap && frames_grow(f) != 0) {
    f->oom = 1;
    return;
  }
  f->off[f->n] = off;
  f->len[f->n] = f->text.len - off;
  f->kind[f->n] = kind;
  f->file[f->n] = f->cur_file;
  f->line[f->n] = f->cur_line;
  f->n++;
  frames_at(f, NULL, 0);
}

/* Appends one frame of the given kind, its name printed into f->text. */
static void frames_addf(LjmFrames *f, LjmSiteKind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void frames_addf(LjmFrames *f, LjmSiteKind kind, const char *fmt, ...)
{
  size_t off = f->text.len;
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof(tmp)) {
    ljm_buf_put(&f->text, tmp, (size_t)n);
  } else {  /* long names: format again into the buffer itself */
    va_start(ap, fmt);
    LjmBuf *b = &f->text;
    char *big = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (big) {
      vsnprintf(big, (size_t)n + 1, fmt, ap);
      ljm_buf_put(b, big, (size_t)n);
      free(big);
    }
    va_end(ap);
  }
  frames_push(f, kind, off);
}

static void frames_adds(LjmFrames *f, LjmSiteKind kind, const char *s)
{
  size_t off = f->text.len;
  ljm_buf_puts(&f->text, s ? s : "");
  frames_push(f, kind, off);
}

/* The short path of a site on its own (standard streams), not a trace. */
static void frames_plain(LjmFrames *f, const LjmSite *s)
{
  const char *file = file_of(s);
  switch (s->kind) {
  case LJM_SITE_LUA:
    if (s->func_from == LJM_FUNC_BUILTIN) {
      frames_adds(f, s->kind, "[builtin]");
      frames_adds(f, s->kind, s->func);
      return;
    }
    frames_at(f, file, 0);
    frames_adds(f, s->kind, *s->file ? s->file : "?");
    frames_at(f, file, func_line(s));
    frames_adds(f, s->kind, s->func);
    frames_at(f, file, s->line);
    frames_addf(f, s->kind, "%s:%lld", base_of(s->file), (long long)s->line);
    return;
  case LJM_SITE_C:
    frames_adds(f, s->kind, "[C]");
    frames_adds(f, s->kind, s->func);
    return;
  case LJM_SITE_LABEL:
    frames_adds(f, s->kind, s->func);
    return;
  default:
    frames_adds(f, s->kind, "INTERNAL");
    return;
  }
}

/* The short path of a site on its own, traces below their start site. */
static void frames_site(const LjmModel *m, const LjmSite *s, LjmFrames *f)
{
  if (s->kind != LJM_SITE_TRACE) {
    frames_plain(f, s);
    return;
  }
  const LjmSite *st = s->trace_start != LJM_NO_SITE && s->trace_start < ljm_model_nsites(m)
                          ? ljm_model_site(m, s->trace_start) : NULL;
  if (st && st->kind != LJM_SITE_TRACE && st->kind != LJM_SITE_INTERNAL)
    frames_plain(f, st);
  else
    frames_adds(f, LJM_SITE_TRACE, "[JIT]");
  frames_adds(f, LJM_SITE_TRACE, s->func);
}

/* One frame of a real stack. */
static void frames_stack_frame(const LjmModel *m, const LjmNode *n, LjmFrames *f)
{
  const LjmSite *s;
  (void)m;
  switch (n->kind) {
  case LJM_NODE_RESUME: frames_adds(f, LJM_SITE_INTERNAL, "[coroutine]"); return;
  case LJM_NODE_TAIL: frames_adds(f, LJM_SITE_INTERNAL, "[tail call]"); return;
  case LJM_NODE_CUT: frames_adds(f, LJM_SITE_INTERNAL, "[...]"); return;
  default: break;
  }
  s = ljm_model_site(m, n->site);
  switch (s->kind) {
  case LJM_SITE_LUA:
    frames_at(f, file_of(s), func_line(s));
    /* Names of their own get the file; the others hold it already. */
    if (s->func_from == LJM_FUNC_SOURCE || s->func_from == LJM_FUNC_MAIN ||
        s->func_from == LJM_FUNC_DEFINED)
      frames_addf(f, s->kind, "%s (%s)", s->func, base_of(s->file));
    else
      frames_adds(f, s->kind, s->func);
    return;
  case LJM_SITE_TRACE:
    frames_adds(f, s->kind, s->func);
    return;
  default:
    frames_adds(f, s->kind, s->func);
    return;
  }
}

/* A charged Lua site's leaf is its line alone: the frames above say where. */
static int charged_line(const LjmModel *m, uint32_t id)
{
  const LjmNode *n = ljm_model_node(m, id);
  const LjmSite *s = n->kind == LJM_NODE_FRAME ? ljm_model_site(m, n->site) : NULL;
  return s && s->kind == LJM_SITE_LUA && s->func_from != LJM_FUNC_BUILTIN &&
         ljm_model_node_is_charge(m, id);
}

/* The line a Lua node's own events were at, after its frames. */
static void line_frame(const LjmModel *m, const LjmNode *n, LjmFrames *f)
{
  if (n->kind != LJM_NODE_FRAME) return;
  const LjmSite *s = ljm_model_site(m, n->site);
  if (s->kind == LJM_SITE_LUA && s->func_from != LJM_FUNC_BUILTIN) {
    frames_at(f, file_of(s), s->line);
    frames_addf(f, s->kind, "%s:%lld", base_of(s->file), (long long)s->line);
  }
}

/* Empties f; returns whether node is a site on its own (standard streams),
** after the frame of its label's root in a grouped tree. */
static int frames_start(const LjmModel *m, uint32_t node, LjmFrames *f)
{
  f->n = 0;
  frames_at(f, NULL, 0);
  ljm_buf_reset(&f->text);
  return ljm_model_node_alone(m, node);
}

/* The frame of a node's label root (grouped trees), if it hangs below one. */
static void frames_root(const LjmModel *m, const LjmNode *n, LjmFrames *f)
{
  if (n->parent == LJM_NO_NODE) return;
  const LjmNode *p = ljm_model_node(m, n->parent);
  frames_adds(f, LJM_SITE_LABEL, ljm_model_site(m, p->site)->func);
}

void ljm_frames_of(const LjmModel *m, uint32_t node, LjmFrames *f)
{
  const LjmNode *n = ljm_model_node(m, node);
  if (frames_start(m, node, f)) {
    frames_root(m, n, f);
    frames_site(m, ljm_model_site(m, n->site), f);
    return;
  }
  /* Root first: collect the chain leaf first, then emit it reversed; only
  ** the innermost LJM_FRAMES_SHOWN_MAX nodes, below a "[...]" frame. */
  uint32_t chain[LJM_FRAMES_SHOWN_MAX], depth = 0, id = node;
  while (id != LJM_NO_NODE && depth < LJM_FRAMES_SHOWN_MAX) {
    chain[depth++] = id;
    id = ljm_model_node(m, id)->parent;
  }
  if (id != LJM_NO_NODE) {  /* cut: a grouped path keeps its label on top */
    uint32_t root = ljm_model_node_group(m, node);
    if (root != LJM_NO_NODE) frames_stack_frame(m, ljm_model_node(m, root), f);
    if (id != root) frames_adds(f, LJM_SITE_INTERNAL, "[...]");
  }
  int charge = charged_line(m, node);
  while (depth-- > (uint32_t)charge) frames_stack_frame(m, ljm_model_node(m, chain[depth]), f);
  line_frame(m, n, f);
}

size_t ljm_frames_step(const LjmModel *m, uint32_t node, LjmFrames *f)
{
  const LjmNode *n = ljm_model_node(m, node);
  if (frames_start(m, node, f)) {
    frames_site(m, ljm_model_site(m, n->site), f);
    return 0;
  }
  size_t through = 0;
  if (!charged_line(m, node)) {
    frames_stack_frame(m, n, f);
    through = 1;
  }
  line_frame(m, n, f);
  return through;
}

void ljm_frames_free(LjmFrames *f)
{
  free(f->off);
  free(f->len);
  free(f->kind);
  free(f->file);
  free(f->line);
  ljm_buf_free(&f->text);
  memset(f, 0, sizeof(*f));
}

/* Label of a non-trace site. */
static void label_plain(LjmBuf *b, const LjmSite *s)
{
  switch (s->kind) {
  case LJM_SITE_LUA:
    ljm_buf_puts(b, s->func);
    if (s->func_from == LJM_FUNC_BUILTIN) ljm_buf_puts(b, " [builtin]");
    else ljm_buf_printf(b, " (%s:%lld)", base_of(s->file), (long long)s->line);
    return;
  case LJM_SITE_C:
    ljm_buf_puts(b, s->func);
    ljm_buf_puts(b, " [C]");
    return;
  case LJM_SITE_LABEL:
    ljm_buf_puts(b, s->func);
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
  ljm_buf_puts(b, s->func);  /* "TRACE [3] cache.lua:7": where it starts */
  if (s->trace_start == LJM_NO_SITE || s->trace_start >= ljm_model_nsites(m)) return;
  const LjmSite *st = ljm_model_site(m, s->trace_start);
  if (st->kind == LJM_SITE_LUA && st->func_from != LJM_FUNC_BUILTIN)
    ljm_buf_printf(b, " (in %s)", st->func);
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

void ljm_frames_folded(LjmBuf *b, const LjmModel *m, uint32_t node, LjmFrames *f)
{
  size_t start = b->len;
  ljm_frames_of(m, node, f);
  if (f->oom) b->oom = 1;
  for (size_t i = 0; i < f->n; i++) {
    if (i) ljm_buf_putc(b, ';');
    start = b->len;
    ljm_frame_clean(b, ljm_frame_s(f, i), f->len[i], LJM_CLEAN_FOLDED);
  }
  ljm_frame_fix_last(b, start);
}
