/* ljm_labels.c -- the stream's label sets (0x26) and their figures. */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

/* Tables for every possible set (LJM_MODEL_SETS), made at the first set or with types
** (set 0's figures are made at the end, from the totals). */
int ljm_labels_init(LjmModel *m)
{
  if (m->lsets) return 0;
  m->lsets = calloc(LJM_MODEL_SETS, sizeof(*m->lsets));
  m->label_fig = calloc(LJM_MODEL_SETS, sizeof(*m->label_fig));
  if (!m->lsets || !m->label_fig) {
    free(m->lsets);
    free(m->label_fig);
    m->lsets = NULL;
    m->label_fig = NULL;
    m->oom = 1;
    return -1;
  }
  return 0;
}

/* Room for n more pairs: 0, or -1 when out of memory. */
static int pairs_room(LjmModel *m, unsigned n)
{
  if (m->nlpairs + 2 * n <= m->caplpairs) return 0;
  uint64_t cap = m->caplpairs ? m->caplpairs : 64;
  while (cap < m->nlpairs + 2 * (uint64_t)n) cap *= 2;
  uint32_t *p = cap > UINT32_MAX ? NULL : realloc(m->lpairs, cap * sizeof(*p));
  if (!p) {
    m->oom = 1;
    return -1;
  }
  m->lpairs = p;
  m->caplpairs = (uint32_t)cap;
  return 0;
}

void ljm_labels_on_set(LjmModel *m, uint32_t id, const LjmLabel *l, unsigned n)
{
  if (id == 0 || id > LJM_LABEL_SETS || ljm_labels_init(m) || pairs_room(m, n)) return;
  LabelSet *s = &m->lsets[id];
  s->first = m->nlpairs;
  s->n = n;
  s->defined = 1;
  s->other = n == 0;
  for (unsigned i = 0; i < n; i++) {
    uint32_t k = ljm_strtab_intern(&m->str, l[i].key, l[i].klen);
    uint32_t v = ljm_strtab_intern(&m->str, l[i].value, l[i].vlen);
    if (k == UINT32_MAX || v == UINT32_MAX) {
      m->oom = 1;
      return;
    }
    m->lpairs[m->nlpairs++] = k;
    m->lpairs[m->nlpairs++] = v;
  }
  m->info.label_sets++;
}

uint32_t ljm_labels_define_typed(LjmModel *m, uint32_t base, unsigned t)
{
  if (!m->lsets) return base;  /* out of memory before: untyped */
  uint32_t id = base + LJM_TYPED_SET * t;
  const LabelSet *b = &m->lsets[base];
  unsigned n = base && b->defined ? b->n : 0;
  const char *name = ljm_type_name(t);
  uint32_t k = ljm_strtab_intern(&m->str, "type", 4);
  uint32_t v = ljm_strtab_intern(&m->str, name, strlen(name));
  if (k == UINT32_MAX || v == UINT32_MAX || pairs_room(m, n + 1)) {
    m->oom = 1;
    return base;
  }
  LabelSet *s = &m->lsets[id];
  s->first = m->nlpairs;
  m->lpairs[m->nlpairs++] = k;
  m->lpairs[m->nlpairs++] = v;
  unsigned kept = 1;
  for (unsigned i = 0; i < n; i++) {  /* the stream's pairs, but a key "type": shadowed */
    uint32_t pk = m->lpairs[b->first + 2 * i], pv = m->lpairs[b->first + 2 * i + 1];
    if (pk == k) continue;
    m->lpairs[m->nlpairs++] = pk;
    m->lpairs[m->nlpairs++] = pv;
    kept++;
  }
  s->n = kept;
  s->other = base && b->defined && b->other;
  s->defined = 1;
  m->info.label_sets++;
  return id;
}

void ljm_labels_free(LjmModel *m)
{
  free(m->lsets);
  free(m->lpairs);
  free(m->label_fig);
  free(m->ctx_fig);
  for (uint32_t i = 0; i < m->nlterms; i++) free(m->lterms[i]);
  free(m->lterms);
  free(m->lmatch);
}

int ljm_model_label_filter(LjmModel *m, const char *term)
{
  const char *eq = strchr(term, '=');
  if (!eq || eq == term) return -1;
  char **t = realloc(m->lterms, (m->nlterms + 1) * sizeof(*t));
  if (!t) return -1;
  m->lterms = t;
  if (!m->lmatch && !(m->lmatch = calloc(LJM_MODEL_SETS, 1))) return -1;
  if (ljm_filter_init(m)) return -1;
  if (!(t[m->nlterms] = strdup(term))) return -1;
  m->nlterms++;
  return 0;
}

uint32_t ljm_model_label_filters(const LjmModel *m, const char *const **terms)
{
  *terms = (const char *const *)m->lterms;
  return m->nlterms;
}

/* Whether a block of set passes every term: KEY=VALUE has that value,
** KEY=(none) lacks the key, KEY=(other) is in the folded set. */
int ljm_labels_pass(LjmModel *m, uint32_t set)
{
  if (!m->nlterms) return 1;
  if (set >= LJM_MODEL_SETS) set = 0;
  if (m->lmatch[set]) return m->lmatch[set] == 2;
  int ok = 1, other = ljm_model_label_other(m, set);
  for (uint32_t i = 0; i < m->nlterms && ok; i++) {
    const char *k = m->lterms[i], *eq = strchr(k, '='), *want = eq + 1;
    LjmStr v;
    if (ljm_model_label_value(m, set, k, (size_t)(eq - k), &v))
      ok = v.len == strlen(want) && !memcmp(v.s, want, v.len);
    else ok = !strcmp(want, other ? "(other)" : "(none)");
  }
  /* a set's labels are known once it is defined: remember its answer then */
  if (set == 0 || ljm_model_label_defined(m, set)) m->lmatch[set] = ok ? 2 : 1;
  return ok;
}

LjmFigures *ljm_labels_ctx_fig(LjmModel *m, uint32_t c)
{
  if (c >= m->capctx_fig) {
    LjmFigures *p = ljm_model_cover(m, m->ctx_fig, &m->capctx_fig, c, sizeof(*p), 64, 0);
    if (!p) return NULL;
    m->ctx_fig = p;
  }
  return &m->ctx_fig[c];
}

int ljm_model_label_defined(const LjmModel *m, uint32_t set)
{
  return m->lsets && set >= 1 && set < LJM_MODEL_SETS && m->lsets[set].defined;
}

int ljm_model_label_other(const LjmModel *m, uint32_t set)
{
  return ljm_model_label_defined(m, set) && m->lsets[set].other;
}

unsigned ljm_model_label_count(const LjmModel *m, uint32_t set)
{
  return ljm_model_label_defined(m, set) ? m->lsets[set].n : 0;
}

static LjmStr str_of(const LjmModel *m, uint32_t id)
{
  const LjmStrEntry *e = ljm_strtab_get(&m->str, id);
  return (LjmStr){ e->s, e->len };
}

void ljm_model_label(const LjmModel *m, uint32_t set, unsigned i, LjmStr *key, LjmStr *value)
{
  const uint32_t *p = &m->lpairs[m->lsets[set].first + 2 * i];
  *key = str_of(m, p[0]);
  *value = str_of(m, p[1]);
}

int ljm_model_label_value(const LjmModel *m, uint32_t set, const char *key, size_t klen,
                          LjmStr *value)
{
  unsigned n = ljm_model_label_count(m, set);
  for (unsigned i = 0; i < n; i++) {
    LjmStr k, v;
    ljm_model_label(m, set, i, &k, &v);
    if (k.len == klen && !memcmp(k.s, key, klen)) {
      *value = v;
      return 1;
    }
  }
  return 0;
}

uint32_t ljm_model_owner_labels(const LjmModel *m, uint32_t owner)
{
  return m->ctx_owners && owner < m->nctxs ? m->ctxs[owner].labels : 0;
}

const LjmFigures *ljm_model_label_figures(const LjmModel *m, uint32_t set)
{
  return m->label_fig && set < LJM_MODEL_SETS ? &m->label_fig[set] : NULL;
}

int ljm_model_type_figures(const LjmModel *m, unsigned t, LjmFigures *out)
{
  memset(out, 0, sizeof(*out));
  if (!m->typed || !m->label_fig || t < 1 || t >= LJM_TYPES) return 0;
  for (uint32_t s = 0; s < LJM_TYPED_SET; s++) ljm_figures_add(out, &m->label_fig[s + LJM_TYPED_SET * t]);
  return 1;
}

uint32_t ljm_model_nowners(const LjmModel *m)
{
  return m->ctx_owners ? m->nctxs : (uint32_t)m->nsites;
}

const LjmFigures *ljm_model_owner_label_figures(const LjmModel *m, uint32_t owner,
                                                uint32_t *node, uint32_t *set)
{
  if (!m->ctx_owners || owner >= m->nctxs || !m->ctxs[owner].labels) return NULL;
  *node = m->ctxs[owner].node;
  *set = m->ctxs[owner].labels;
  static const LjmFigures none;
  return owner < m->capctx_fig ? &m->ctx_fig[owner] : &none;
}

_Static_assert(LJM_MODEL_SETS <= 1 << 16, "ctx_by_label keys keep a set id in 16 bits");
