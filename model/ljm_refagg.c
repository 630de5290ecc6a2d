/* ljm_refagg.c -- the reference report's aggregation (doc/ljm-format.md):
** rows per section and location id, "Overrides", and the HEAP SUMMARY.
** Byte sums are doubles on purpose: the reference adds Lua numbers. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

uint32_t ljm_refagg_group_new(LjmModel *m, int sec, uint32_t li)
{
  if (m->ngroups[sec] == m->capgroups[sec]) {
    Group *g = ljm_model_grow(m, m->groups[sec], &m->capgroups[sec], sizeof(*g));
    if (!g) return NONE;
    m->groups[sec] = g;
  }
  uint32_t gi = m->ngroups[sec]++;
  /* The row keeps the name its id had at its first event in this section. */
  m->groups[sec][gi] = (Group){ li, m->locs[li].name, 0, m->totals.events, 0.0, 0.0,
                                NONE, 0, NONE, NONE };
  m->locs[li].group[sec] = gi;
  return gi;
}

Prim *ljm_refagg_prim(LjmModel *m, int sec, uint32_t gi, uint32_t owner_site)
{
  const SiteX *ox = &m->sitex[owner_site];
  Group *g = &m->groups[sec][gi];
  uint64_t key = (uint64_t)sec << 62 | (uint64_t)gi << 31 | ox->loc;
  uint32_t pi = ljm_hmap_get(&m->prim_by_key, key);
  if (pi != NONE) {
    g->last_prim = pi;
    g->last_owner = ox->loc;
    return &m->prims[pi];
  }
  if (m->nprims == m->capprims) {
    Prim *p = ljm_model_grow(m, m->prims, &m->capprims, sizeof(*p));
    if (!p) return NULL;
    m->prims = p;
  }
  pi = m->nprims++;
  g = &m->groups[sec][gi];
  m->prims[pi] = (Prim){ ox->name, g->prim_first, 0, 0.0, 0.0 };
  g->prim_first = pi;
  g->last_prim = pi;
  g->last_owner = ox->loc;
  g->nprim++;
  if (ljm_hmap_put(&m->prim_by_key, key, pi) != 0) m->oom = 1;
  return &m->prims[pi];
}

/* -- Finishing: sorted rows and the summary -------------------------------- */

int ljm_str_cmp(const LjmStr *a, const LjmStr *b)
{
  size_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->s, b->s, n);
  if (c) return c;
  return (a->len > b->len) - (a->len < b->len);
}

static int cmp_override(const void *a, const void *b) { return ljm_str_cmp(a, b); }

int ljm_row_order(const void *pa, const void *pb)
{
  const LjmRow *a = pa, *b = pb;
  if (a->num != b->num) return a->num > b->num ? -1 : 1;
  int c = ljm_str_cmp(&a->name, &b->name);
  if (c) return c;
  return (a->first_seen > b->first_seen) - (a->first_seen < b->first_seen);
}

int ljm_heap_line_order(const void *pa, const void *pb)
{
  const LjmHeapLine *a = pa, *b = pb;
  if (a->dbytes != b->dbytes) return a->dbytes > b->dbytes ? -1 : 1;
  return ljm_str_cmp(&a->name, &b->name);
}

static LjmStr str_of(const LjmModel *m, uint32_t id)
{
  const LjmStrEntry *e = ljm_strtab_get(&m->str, id);
  return (LjmStr){ e->s, e->len };
}

/* Adds to the summary line of a name, creating it on first use. */
static LjmHeapLine *heap_line(LjmModel *m, LjmHmap *by_name, uint32_t name, size_t *cap)
{
  uint32_t i = ljm_hmap_get(by_name, name);
  if (i != NONE) return &m->heap[i];
  if (m->nheap == *cap) {
    size_t n = *cap ? *cap * 2 : 64;
    LjmHeapLine *h = realloc(m->heap, n * sizeof(*h));
    if (!h) return NULL;
    m->heap = h;
    *cap = n;
  }
  i = (uint32_t)m->nheap++;
  m->heap[i] = (LjmHeapLine){ str_of(m, name), 0.0, 0, 0 };
  if (ljm_hmap_put(by_name, name, i) != 0) return NULL;
  return &m->heap[i];
}

static int build_summary(LjmModel *m)
{
  LjmHmap by_name;
  size_t cap = 0;
  if (ljm_hmap_init(&by_name) != 0) return -1;
  int bad = 0;
  for (uint32_t i = 0; i < m->ngroups[LJM_SEC_ALLOC] && !bad; i++) {
    const Group *g = &m->groups[LJM_SEC_ALLOC][i];
    if (!(g->alloc > 0)) continue;
    LjmHeapLine *h = heap_line(m, &by_name, g->name, &cap);
    if (!h) bad = 1;
    else {
      h->dbytes += g->alloc;
      h->nalloc += g->num;
    }
  }
  for (int sec = LJM_SEC_REALLOC; sec <= LJM_SEC_FREE && !bad; sec++)
    for (uint32_t i = 0; i < m->ngroups[sec] && !bad; i++)
      for (uint32_t pi = m->groups[sec][i].prim_first; pi != NONE && !bad;
           pi = m->prims[pi].next) {
        const Prim *p = &m->prims[pi];
        LjmHeapLine *h = heap_line(m, &by_name, p->name, &cap);
        if (!h) {
          bad = 1;
          break;
        }
        if (p->allocated > 0) {
          h->dbytes += p->allocated;
          h->nalloc += p->count;
        }
        if (p->freed > 0) {
          h->dbytes -= p->freed;
          h->nfree += p->count;
        }
      }
  ljm_hmap_free(&by_name);
  if (bad) return -1;
  size_t kept = 0;  /* only names that hold bytes are printed */
  for (size_t i = 0; i < m->nheap; i++)
    if (m->heap[i].dbytes > 0) m->heap[kept++] = m->heap[i];
  m->nheap = kept;
  if (kept) qsort(m->heap, kept, sizeof(*m->heap), ljm_heap_line_order);
  return 0;
}

int ljm_refagg_finish(LjmModel *m)
{
  free(m->override_names);
  m->override_names = malloc(((size_t)m->nprims + 1) * sizeof(LjmStr));
  if (!m->override_names) return -1;
  size_t used = 0;
  for (int sec = 0; sec < 3; sec++) {
    uint32_t n = m->ngroups[sec];
    free(m->rows[sec]);
    m->rows[sec] = malloc(((size_t)n + 1) * sizeof(LjmRow));
    if (!m->rows[sec]) return -1;
    for (uint32_t i = 0; i < n; i++) {
      const Group *g = &m->groups[sec][i];
      LjmRow *r = &m->rows[sec][i];
      r->name = str_of(m, g->name);
      r->num = g->num;
      r->alloc = g->alloc;
      r->free = g->free;
      r->first_seen = g->first_seen;
      r->overrides = m->override_names + used;
      r->noverrides = g->nprim;
      for (uint32_t pi = g->prim_first; pi != NONE; pi = m->prims[pi].next)
        m->override_names[used++] = str_of(m, m->prims[pi].name);
      qsort((void *)r->overrides, r->noverrides, sizeof(LjmStr), cmp_override);
    }
    if (n) qsort(m->rows[sec], n, sizeof(LjmRow), ljm_row_order);
  }
  free(m->heap);
  m->heap = NULL;
  m->nheap = 0;
  return build_summary(m);
}
