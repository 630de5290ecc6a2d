/* ljm_heappaths.c -- an object's path from the roots in Lua notation
** ("_G.cache[3].buf"), its retainers, the type and function names a heap
** view shows. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_heapgraph.h"
#include "model/ljm_heapgraph_int.h"

/* -- Paths in Lua notation --------------------------------------------------- */

static int is_name(const char *s)
{
  static const char *const reserved[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
    "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
  };
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
  for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
    if (!strcmp(s, reserved[i])) return 0;
  return 1;
}

/* One step of a path: the reference e, as it reads after its source. */
static void step(const LjmHeapGraph *g, const LjmHeapRef *r, int first, char *out, size_t len)
{
  switch (r->kind) {
  case LJH_EDGE_NAME: {
    const char *name = g->labels + r->what;
    if (first || name[0] == '[') snprintf(out, len, "%s", name);
    else if (!strcmp(name, "value") && g->obj[r->from].type == LJH_UPVAL) out[0] = '\0';
    else snprintf(out, len, "<%s>", name);
    break;
  }
  case LJH_EDGE_STRKEY: {
    const char *k = ljm_heapgraph_label(g, (uint32_t)r->what);
    if (is_name(k)) snprintf(out, len, ".%s", k);
    else snprintf(out, len, "[\"%s\"]", k);
    break;
  }
  case LJH_EDGE_INDEX:
    snprintf(out, len, "[%llu]", (unsigned long long)r->what);
    break;
  case LJH_EDGE_OBJKEY: {  /* as tostring() shows the key: objects never move */
    const LjmHeapObj *k = &g->obj[r->what];
    snprintf(out, len, "[%s: 0x%llx]", ljh_type_name((LjhType)k->type), (unsigned long long)k->addr);
    break;
  }
  default: {  /* the key object itself: a string by its text */
    const LjmHeapObj *k = &g->obj[r->to];
    if (k->type == LJH_STR)
      snprintf(out, len, "<key \"%s\">", ljm_heapgraph_label(g, r->to));
    else
      snprintf(out, len, "<key %s: 0x%llx>", ljh_type_name((LjhType)k->type), (unsigned long long)k->addr);
  }
  }
}

/* The references of object i's shortest path into edges, object first;
** returns how many (its depth). */
static uint32_t chain(const LjmHeapGraph *g, uint32_t i, uint32_t *edges)
{
  uint32_t n = 0, depth = g->obj[i].depth;
  for (uint32_t v = i; v != 0 && n < depth; v = g->ref[g->obj[v].parent].from)
    edges[n++] = g->obj[v].parent;
  return n;
}

/* Copies piece after buf[0..*at) if it fits in len (with the NUL). */
static int append(char *buf, size_t len, size_t *at, const char *piece)
{
  size_t m = strlen(piece);
  if (*at + m + 1 > len) return 0;
  memcpy(buf + *at, piece, m + 1);
  *at += m;
  return 1;
}

#define ELIDE_MIN 128  /* a buffer this short is cut instead */


/* Whether step x was read (empty steps, an upvalue's value, could run
** into the gap otherwise). */
static int known(const LjmHeapSteps *p, uint32_t x)
{
  return x < p->ntail || x >= p->n - p->nhead;
}

static uint32_t edge_at(const LjmHeapSteps *p, uint32_t x)
{
  return x < p->ntail ? p->tail[x] : p->head[x - (p->n - p->nhead)];
}

/* Whether r is the registry's _LOADED (package.loaded). */
static int is_loaded(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  return g->registry && r->from == g->registry && r->kind == LJH_EDGE_STRKEY &&
         !strcmp(ljm_heapgraph_label(g, (uint32_t)r->what), "_LOADED");
}

/* Step x of p as it reads; the registry's _LOADED right after the root
** reads as package.loaded, the name Lua code knows it by. */
static void step_at(const LjmHeapGraph *g, const LjmHeapSteps *p, uint32_t x, char *out, size_t len)
{
  const LjmHeapRef *r = &g->ref[edge_at(p, x)];
  if (x + 1 == p->n && p->n >= 2 && r->from == 0 && known(p, x - 1) && r->to == g->registry &&
      is_loaded(g, &g->ref[edge_at(p, x - 1)])) {
    snprintf(out, len, "package.loaded");
    return;
  }
  if (x + 2 == p->n && known(p, x + 1) && g->ref[edge_at(p, x + 1)].from == 0 && is_loaded(g, r)) {
    out[0] = '\0';
    return;
  }
  step(g, r, x + 1 == p->n, out, len);
}

/* Writes the path p (object first, root last) into buf, root first, in Lua
** notation. A path longer than buf keeps its root end and its
** object end, the steps between counted: "_G.a.next<... 299850 steps ...>.next.v".
** Costs O(len), not O(n): a path may be a million steps deep. */
void ljm_heapgraph_render(const LjmHeapGraph *g, const LjmHeapSteps *p, char *buf, size_t len)
{
  uint32_t n = p->n;
  size_t at = 0;
  char piece[160];
  uint32_t k = n;  /* edges[k - 1] is the next step from the root end */
  buf[0] = '\0';
  for (; k > 0 && known(p, k - 1); k--) {
    step_at(g, p, k - 1, piece, sizeof(piece));
    if (!append(buf, len, &at, piece)) break;
  }
  if (k == 0) return;
  if (len < ELIDE_MIN) {  /* too short for both ends: cut */
    size_t m = strlen(piece);
    if (at + m + 1 > len) m = len - 1 - at;
    memcpy(buf + at, piece, m);
    buf[at + m] = '\0';
    return;
  }
  /* The root end in the first half. */
  at = 0;
  buf[0] = '\0';
  for (k = n; k > 0 && known(p, k - 1); k--) {
    step_at(g, p, k - 1, piece, sizeof(piece));
    if (!append(buf, len / 2, &at, piece)) break;
  }
  /* The object end in what is left after the marker: steps edges[t - 1 .. 0]. */
  char mark[48];
  size_t room = len - 1 - at - sizeof(mark), used = 0;
  uint32_t t = 0;
  for (; t < k && known(p, t); t++) {
    step_at(g, p, t, piece, sizeof(piece));
    size_t m = strlen(piece);
    if (used + m > room) break;
    used += m;
  }
  snprintf(mark, sizeof(mark), "<... %u steps ...>", (unsigned)(k - t));
  append(buf, len, &at, mark);
  while (t > 0) {
    t--;
    step_at(g, p, t, piece, sizeof(piece));
    append(buf, len, &at, piece);
  }
}

/* Writes the path of object v, then step e when it is not LJM_HEAP_NONE. */
static void path_of(const LjmHeapGraph *g, uint32_t v, uint32_t e, char *buf, size_t len)
{
  uint32_t x = e != LJM_HEAP_NONE, d = g->obj[v].depth + x;
  /* At most LJM_HEAP_PATH_HEAD steps of each end: buf shows fewer. */
  if (len > LJM_HEAP_PATH_HEAD || d <= 2 * LJM_HEAP_PATH_HEAD) {
    uint32_t *edges = malloc((size_t)d * sizeof(*edges) + 1);
    if (!edges) return;
    if (x) edges[0] = e;
    LjmHeapSteps p = { edges, NULL, x + chain(g, v, edges + x), 0, 0 };
    p.n = p.ntail;
    ljm_heapgraph_render(g, &p, buf, len);
    free(edges);
    return;
  }
  uint32_t *tail = malloc(2 * (size_t)LJM_HEAP_PATH_HEAD * sizeof(*tail));
  if (!tail) return;
  LjmHeapSteps p = { tail, tail + LJM_HEAP_PATH_HEAD, 0, 0, d };
  if (x) tail[p.ntail++] = e;
  for (; p.ntail < LJM_HEAP_PATH_HEAD; v = g->ref[g->obj[v].parent].from)
    tail[p.ntail++] = g->obj[v].parent;
  p.nhead = chain(g, g->head[v], tail + LJM_HEAP_PATH_HEAD);
  ljm_heapgraph_render(g, &p, buf, len);
  free(tail);
}

const char *ljm_heapgraph_step(const LjmHeapGraph *g, uint32_t e, char *buf, size_t len)
{
  char piece[160];
  const LjmHeapRef *r = &g->ref[e];
  if (!len) return buf;
  step(g, r, 1, piece, sizeof(piece));
  const char *s = piece;
  if (r->kind == LJH_EDGE_STRKEY && *s == '.') s++;
  snprintf(buf, len, "%s", s);
  return buf;
}

const char *ljm_heapgraph_path(const LjmHeapGraph *g, uint32_t i, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  if (i == 0) snprintf(buf, len, "(root)");
  else if (g->obj[i].parent == LJM_HEAP_NONE) snprintf(buf, len, "(only weakly reachable)");
  else path_of(g, i, LJM_HEAP_NONE, buf, len);
  return buf;
}

const char *ljm_heapgraph_path_via(const LjmHeapGraph *g, uint32_t e, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  path_of(g, g->ref[e].from, e, buf, len);
  return buf;
}

const char *ljm_heapgraph_path_below(const LjmHeapGraph *g, uint32_t i, uint32_t a, uint32_t max,
                                     char *buf, size_t len)
{
  uint32_t edges[16], n = 0, v = i;
  if (!len) return buf;
  buf[0] = '\0';
  if (max > 16) max = 16;
  while (v != a && v != 0 && g->obj[v].parent != LJM_HEAP_NONE && n < max) {
    edges[n++] = g->obj[v].parent;
    v = g->ref[g->obj[v].parent].from;
  }
  int more = v != a;
  size_t at = 0;
  if (more) at = (size_t)snprintf(buf, len, "...");
  if (at >= len) return buf;
  LjmHeapSteps p = { edges, NULL, n, 0, n };
  ljm_heapgraph_render(g, &p, buf + at, len - at);
  if (buf[at] == '.') memmove(buf + at, buf + at + 1, strlen(buf + at));
  return buf;
}

/* Whether object v has a strong path (the root has the empty one). */
static int reached(const LjmHeapGraph *g, uint32_t v)
{
  return v == 0 || g->obj[v].parent != LJM_HEAP_NONE;
}

/* A retainer's place in the order: the penalty and length of the path
** through it, then its index; computed once per reference (a penalty may
** read a long name). */
static uint64_t retainer_key(const LjmHeapGraph *g, uint32_t e)
{
  const LjmHeapRef *r = &g->ref[e];
  uint64_t cost = (uint64_t)g->obj[r->from].cost + (uint64_t)ljm_heapgraph_penalty(g, r);
  return cost << 32 | g->obj[r->from].depth;  /* cost < 2^17 */
}

uint32_t ljm_heapgraph_retainers(const LjmHeapGraph *g, const LjmHeapPreds *p, uint32_t i,
                                 uint32_t *out, uint32_t max)
{
  if (i == 0 || i >= g->nobj || g->obj[i].parent == LJM_HEAP_NONE) return 0;
  uint32_t n = 0, kept = 0, own = g->obj[i].parent;
  uint64_t *key = max > 1 ? malloc((size_t)max * sizeof(*key)) : NULL;
  if (max) out[kept++] = own;
  for (uint32_t k = p->start[i]; k < p->start[i + 1]; k++) {
    uint32_t e = p->edge[k];
    if (!reached(g, g->ref[e].from)) continue;
    n++;
    if (e == own || !key) continue;
    /* Insertion into the best max - 1 after the path's own: by key, then
    ** by index (edges come in index order: a later one goes after). */
    uint64_t ke = retainer_key(g, e);
    uint32_t at = kept;
    while (at > 1 && ke < key[at - 1]) at--;
    if (at >= max) continue;
    if (kept < max) kept++;
    memmove(out + at + 1, out + at, (size_t)(kept - 1 - at) * sizeof(*out));
    memmove(key + at + 1, key + at, (size_t)(kept - 1 - at) * sizeof(*key));
    out[at] = e;
    key[at] = ke;
  }
  free(key);
  return n;
}

/* A table's or userdata's metatable __name, or NULL; memo as
** ljm_heapgraph_type_name has it (0 not looked at, 1 none, else the
** string's index + 2). */
static const char *metatable_name(const LjmHeapGraph *g, uint32_t i, uint32_t *memo)
{
  for (uint32_t e = g->obj[i].first_edge; e < edge_end(g, i); e++) {
    const LjmHeapRef *r = &g->ref[e];
    if (!name_is(g, r, "metatable")) continue;
    uint32_t mt = r->to, found = 1;
    if (memo && memo[mt]) return memo[mt] > 1 ? ljm_heapgraph_label(g, memo[mt] - 2) : NULL;
    for (uint32_t k = g->obj[mt].first_edge; k < edge_end(g, mt); k++) {
      const LjmHeapRef *m = &g->ref[k];
      if (m->kind == LJH_EDGE_STRKEY && g->obj[m->to].type == LJH_STR &&
          !strcmp(ljm_heapgraph_label(g, (uint32_t)m->what), "__name")) {
        found = m->to + 2;
        break;
      }
    }
    if (memo) memo[mt] = found;
    return found > 1 ? ljm_heapgraph_label(g, found - 2) : NULL;
  }
  return NULL;
}

const char *ljm_heapgraph_type_name(const LjmHeapGraph *g, uint32_t i, uint32_t *memo)
{
  const char *mt = NULL;
  if (g->obj[i].type == LJH_TAB || g->obj[i].type == LJH_UDATA) mt = metatable_name(g, i, memo);
  return mt && *mt ? mt : ljh_type_name((LjhType)g->obj[i].type);
}

/* The name step r gives what it reaches: a string key, a local's or an
** upvalue's name, or NULL. */
static const char *step_name(const LjmHeapGraph *g, const LjmHeapRef *r)
{
  if (r->kind == LJH_EDGE_STRKEY) return ljm_heapgraph_label(g, (uint32_t)r->what);
  const char *l = local_name(g, r);
  if (l) return l;
  if (r->kind == LJH_EDGE_NAME && !strncmp(g->labels + r->what, "upvalue ", 8)) {
    const char *u = g->labels + r->what + 8;
    return *u >= '0' && *u <= '9' ? NULL : u;  /* "upvalue 3": no name */
  }
  return NULL;
}

const char *ljm_heapgraph_func_name(const LjmHeapGraph *g, uint32_t i, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  if (i == 0 || i >= g->nobj || g->obj[i].parent == LJM_HEAP_NONE) return buf;
  const LjmHeapRef *r = &g->ref[g->obj[i].parent];
  /* Through an upvalue: its value's name is the upvalue's. */
  if (g->obj[r->from].type == LJH_UPVAL && g->obj[r->from].parent != LJM_HEAP_NONE)
    r = &g->ref[g->obj[r->from].parent];
  uint32_t t = r->from;
  const LjmHeapRef *up = t && g->obj[t].parent != LJM_HEAP_NONE ? &g->ref[g->obj[t].parent] : NULL;
  if (r->kind == LJH_EDGE_INDEX) {  /* package.loaders[2]: the table's key and the index */
    const char *tn = up ? step_name(g, up) : NULL;
    if (tn) snprintf(buf, len, "%s[%llu]", tn, (unsigned long long)r->what);
    return buf;
  }
  const char *name = step_name(g, r);
  if (!name) return buf;
  /* The table's own key, unless the table is _G or package.loaded. */
  if (r->kind == LJH_EDGE_STRKEY && up && up->kind == LJH_EDGE_STRKEY && up->from != 0 &&
      !is_loaded(g, up) && *ljm_heapgraph_label(g, (uint32_t)up->what))
    snprintf(buf, len, "%s.%s", ljm_heapgraph_label(g, (uint32_t)up->what), name);
  else
    snprintf(buf, len, "%s", name);
  return buf;
}
