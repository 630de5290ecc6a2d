/* ljm_filter.c -- which blocks a view shows: --label, --size, --function,
** --source and their negations.
**
** A block passes or not when it is allocated, and its free follows it. A
** reallocation ends one block and makes another: when only one of the two
** passes, the model takes the event as a free of the old block or as an
** allocation of the new one. The new block of a reallocation keeps its old
** block's labels; its size and stack are the reallocation's own. A free or
** reallocation of a block the stream never showed allocated is judged as
** if that block had been made there, under no labels for a free. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

/* Why a block was left out: the label filter (its new blocks inherit
** that), or another filter (each new block is judged again). */
enum { FILTER_BY_LABEL = 1, FILTER_BY_OTHER = 2 };

#define FILTER_KNOWN 0x80000000u

typedef struct FilterRe {
  regex_t re;
  LjmFrameFilter kind;
  char *text;
} FilterRe;

int ljm_filter_init(LjmModel *m)
{
  if (!m->lexcluded_init) {
    if (ljm_addrmap_init(&m->lexcluded)) return -1;
    m->lexcluded_init = 1;
  }
  m->filtering = 1;
  return 0;
}

void ljm_filter_free(LjmModel *m)
{
  for (uint32_t i = 0; i < m->nfre; i++) {
    regfree(&m->fre[i].re);
    free(m->fre[i].text);
  }
  free(m->fre);
  free(m->fsite_mask);
  free(m->fnode_mask);
  ljm_fates_scan_free(m);
  ljm_fates_free(m->fates);
  free(m->fsite_ok);
  if (m->lexcluded_init) ljm_addrmap_free(&m->lexcluded);
}

int ljm_model_filter_size(LjmModel *m, uint64_t min, uint64_t max)
{
  if (min > max || ljm_filter_init(m)) return -1;
  m->fsize = 1;
  m->fsize_min = min;
  m->fsize_max = max;
  return 0;
}

int ljm_model_filter_frames(LjmModel *m, LjmFrameFilter kind, const char *regex, char *err,
                            size_t errlen)
{
  if (m->nfre == LJM_FILTER_REGEX_MAX) {
    snprintf(err, errlen, "at most %d --function, --source and --not-... options",
             LJM_FILTER_REGEX_MAX);
    return -1;
  }
  FilterRe *p = realloc(m->fre, (m->nfre + 1) * sizeof(*p));
  if (!p) goto oom;
  m->fre = p;
  FilterRe *f = &p[m->nfre];
  int rc = regcomp(&f->re, regex, REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char why[160];
    regerror(rc, &f->re, why, sizeof(why));
    regfree(&f->re);
    snprintf(err, errlen, "'%.80s' is not a regular expression: %s", regex, why);
    return -1;
  }
  if (!(f->text = strdup(regex)) || ljm_filter_init(m)) {
    regfree(&f->re);
    free(f->text);
    goto oom;
  }
  f->kind = kind;
  uint32_t bit = 1u << m->nfre++;
  if (kind == LJM_FILTER_FUNCTION || kind == LJM_FILTER_SOURCE) m->fpos |= bit;
  else m->fneg |= bit;
  return 0;
oom:
  snprintf(err, errlen, "out of memory");
  return -1;
}

/* The regexes site si's frame matches: a function's against its name, a
** source's against its file (a trace's: where it starts). */
static uint32_t site_mask(LjmModel *m, uint32_t si)
{
  if (si >= m->capfsite_mask) {
    uint32_t *p = ljm_model_cover(m, m->fsite_mask, &m->capfsite_mask, si, sizeof(*p), 64, 0);
    if (!p) return 0;
    m->fsite_mask = p;
  }
  uint32_t mask = m->fsite_mask[si];
  if (mask & FILTER_KNOWN) return mask & ~FILTER_KNOWN;
  const LjmSite *s = &m->sites[si];
  const char *file = s->file;
  if (s->kind == LJM_SITE_TRACE && s->trace_start < m->nsites)
    file = m->sites[s->trace_start].file;
  mask = 0;
  for (uint32_t i = 0; i < m->nfre; i++) {
    int fn = m->fre[i].kind == LJM_FILTER_FUNCTION || m->fre[i].kind == LJM_FILTER_NOT_FUNCTION;
    const char *text = fn ? s->func : file;
    if (text && regexec(&m->fre[i].re, text, 0, NULL, 0) == 0) mask |= 1u << i;
  }
  m->fsite_mask[si] = mask | FILTER_KNOWN;
  return mask;
}

/* The regexes some frame from node n out to the outermost matches. Nodes
** are numbered parents first, so those up to n are computed in order, each
** once, from its parent's. */
static uint32_t node_mask(LjmModel *m, uint32_t n)
{
  if (n >= m->capfnode_mask) {
    uint32_t *p = ljm_model_cover(m, m->fnode_mask, &m->capfnode_mask, n, sizeof(*p), 256, 0);
    if (!p) return 0;
    m->fnode_mask = p;
  }
  for (; m->fnode_done <= n; m->fnode_done++) {
    const LjmNode *nd = &m->nodes[m->fnode_done];
    uint32_t mask = 0;
    if (nd->kind == LJM_NODE_FRAME && nd->site != LJM_NO_SITE) mask = site_mask(m, nd->site);
    if (nd->parent != LJM_NO_NODE) mask |= m->fnode_mask[nd->parent];
    m->fnode_mask[m->fnode_done] = mask;
  }
  return m->fnode_mask[n];
}

/* Whether an event at site si with ev's stack passes the frame regexes. */
static int frames_pass(LjmModel *m, const LjmRawEvent *ev, uint32_t si)
{
  if (!m->nfre) return 1;
  uint32_t mask = site_mask(m, si);
  if (m->stacks && ev->stack && ev->stack <= m->nstream) {
    uint32_t n = m->stream_node[ev->stack - 1];
    if (n != NONE) mask |= node_mask(m, n);
  }
  return (mask & m->fpos) == m->fpos && !(mask & m->fneg);
}

/* Whether a block of this size, made where ev happened, passes the filters
** other than the labels. */
static int other_pass(LjmModel *m, const LjmRawEvent *ev, uint32_t si, uint64_t size)
{
  if (m->fsize && (size < m->fsize_min || size > m->fsize_max)) return 0;
  return frames_pass(m, ev, si);
}

static void marks_run(LjmModel *m, uint64_t events);

const LjmRawEvent *ljm_filter_event(LjmModel *m, const LjmRawEvent *ev, uint32_t si,
                                    uint64_t okey, uint64_t nkey, LjmRawEvent *copy)
{
  uint64_t ordinal = m->fordinal;
  if (__builtin_expect(m->mark_fn != NULL, 0) && m->mark_at <= ordinal) marks_run(m, ordinal);
  m->fordinal++;
  if (m->fscan) {  /* the first reading: each block followed, nothing else built */
    ljm_fates_event(m, ev, si, okey, nkey, ordinal);
    return NULL;
  }
  LjmBlock b, dropped;
  uint32_t owner;
  int old_ok = 0, label_ok = 1;
  /* the new block's labels */
  uint32_t set = ev->kind == LJM_RAW_FREE ? 0 : ljm_event_labels(m, ev);
  if (ev->kind != LJM_RAW_ALLOC) {
    if (ljm_addrmap_take_key(&m->lexcluded, ev->oaddr, okey, &b)) {  /* left out */
      label_ok = b.size != FILTER_BY_LABEL;
      set = b.site;
    } else if (ljm_addrmap_owner(&m->blocks, okey, &owner)) {  /* let in */
      old_ok = 1;
      set = m->ctx_owners ? ljm_model_owner_labels(m, owner) : ljm_event_labels(m, ev);
    } else {  /* made before the stream: judged as if made here */
      set = ev->kind == LJM_RAW_FREE ? 0 : ljm_event_labels(m, ev);
      label_ok = ljm_labels_pass(m, set);
      old_ok = label_ok && other_pass(m, ev, si, ev->osize) &&
               (!m->fates || ljm_fates_unknown_pass(m, si));
    }
  } else {
    label_ok = ljm_labels_pass(m, set);
  }
  int made = ev->kind != LJM_RAW_FREE && !ev->nosample;
  int new_ok = made && label_ok && other_pass(m, ev, si, ev->nsize) &&
               (!m->fates || ljm_fates_pass(m, ordinal, si));
  if (made) {
    if (!new_ok) {
      uint64_t why = label_ok ? FILTER_BY_OTHER : FILTER_BY_LABEL;
      if (ljm_addrmap_put_key(&m->lexcluded, ev->naddr, nkey, why, set, &dropped) < 0) m->oom = 1;
    } else if (m->lexcluded.count) {
      ljm_addrmap_take_key(&m->lexcluded, ev->naddr, nkey, &dropped);  /* its address is reused */
    }
  }
  int keep_old = ev->kind != LJM_RAW_ALLOC && old_ok;
  if (ev->kind == LJM_RAW_ALLOC ? new_ok : !made ? keep_old : keep_old == new_ok && keep_old)
    return ev;
  if (ev->kind == LJM_RAW_REALLOC && made && (keep_old || new_ok)) {
    *copy = *ev;
    if (keep_old) {  /* only its old block is shown: a free */
      copy->kind = LJM_RAW_FREE;
      copy->naddr = copy->nsize = 0;
    } else {  /* only its new block: an allocation, under its old block's labels */
      copy->kind = LJM_RAW_ALLOC;
      copy->oaddr = copy->osize = 0;
      copy->labels = set;
    }
    return copy;
  }
  m->ldropped++;
  return NULL;
}

uint64_t ljm_model_filter_dropped(const LjmModel *m)
{
  return m->ldropped;
}

/* A size as people read it: "64 B", "1 KiB", "1.5 MiB". */
static void size_text(char *buf, size_t len, uint64_t v)
{
  static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  int u = 0;
  while (v >= 1024 && v % 1024 == 0 && u < 6) {
    v /= 1024;
    u++;
  }
  snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[u]);
}

/* Makes the note safe for every file it goes into, in place: each control
** character and each byte of an invalid UTF-8 sequence becomes '?'; a note
** cut short (cut) ends in "..." at a character's boundary. n: its length
** (below len). */
static void clean(char *buf, size_t n, size_t len, int cut)
{
  unsigned char *p = (unsigned char *)buf;
  for (size_t i = 0; i < n;) {
    size_t k = p[i] < 0x80 ? 1 : (p[i] & 0xE0) == 0xC0 && p[i] >= 0xC2 ? 2
               : (p[i] & 0xF0) == 0xE0 ? 3 : (p[i] & 0xF8) == 0xF0 && p[i] <= 0xF4 ? 4 : 0;
    size_t j = 1;
    while (k && j < k && i + j < n && (p[i + j] & 0xC0) == 0x80) j++;
    if (k == 0 || j < k) {  /* not a character, or one cut short */
      p[i++] = '?';
      continue;
    }
    if (k == 1 && (p[i] < 0x20 || p[i] == 0x7F)) p[i] = '?';
    i += k;
  }
  p[n] = '\0';
  if (!cut || len < 8) return;
  size_t at = len - 4;
  while (at > 0 && (p[at] & 0xC0) == 0x80) at--;
  memcpy(buf + at, "...", 4);
}

const char *ljm_model_filter_note(const LjmModel *m, char *buf, size_t len)
{
  if (!m->filtering || len == 0) return NULL;
  size_t n = 0;
  int clauses = 0;
#define PUT(...)                                                      \
  do {                                                                \
    if (n < len) n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); \
  } while (0)
  PUT("only blocks");
  if (m->nlterms) {
    PUT(" allocated under");
    for (uint32_t i = 0; i < m->nlterms; i++) PUT("%s %s", i ? " and" : "", m->lterms[i]);
    clauses++;
  }
  if (m->fsize) {
    char a[32], b[32];
    size_text(a, sizeof(a), m->fsize_min);
    size_text(b, sizeof(b), m->fsize_max);
    if (m->fsize_min == m->fsize_max) PUT("%s of %s", clauses++ ? "," : "", a);
    else if (m->fsize_max == UINT64_MAX) PUT("%s of %s or more", clauses++ ? "," : "", a);
    else if (m->fsize_min == 0) PUT("%s of %s or less", clauses++ ? "," : "", b);
    else PUT("%s of %s to %s", clauses++ ? "," : "", a, b);
  }
  static const char *const what[] = {
    [LJM_FILTER_FUNCTION] = "with a frame whose function matches",
    [LJM_FILTER_NOT_FUNCTION] = "with no frame whose function matches",
    [LJM_FILTER_SOURCE] = "with a frame whose source file matches",
    [LJM_FILTER_NOT_SOURCE] = "with no frame whose source file matches",
  };
  for (uint32_t i = 0; i < m->nfre; i++)
    PUT("%s %s '%s'", clauses++ ? "," : "", what[m->fre[i].kind], m->fre[i].text);
  if (m->fates) {
    char life[160];
    if (ljm_fates_note(m->fates, life, sizeof(life))) PUT("%s %s", clauses++ ? "," : "", life);
  }
#undef PUT
  clean(buf, n < len ? n : len - 1, len, n >= len);
  return buf;
}

void ljm_model_set_mark(LjmModel *m, uint64_t events, LjmMarkFn fn, void *ud)
{
  m->mark_fn = fn;
  m->mark_ud = ud;
  m->mark_at = events;
}

/* Runs the marks set at or before `events` (all: UINT64_MAX). */
static void marks_run(LjmModel *m, uint64_t events)
{
  while (m->mark_fn && m->mark_at <= events) {
    LjmMarkFn fn = m->mark_fn;
    m->mark_fn = NULL;
    fn(m->mark_ud, m);
  }
}

void ljm_model_marks_due(LjmModel *m) { marks_run(m, UINT64_MAX); }

uint64_t ljm_model_events_seen(const LjmModel *m) { return m->fordinal; }
