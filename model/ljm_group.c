/* ljm_group.c -- the call tree grouped by a label key (ljm_model_group_by):
** each event's node copied under a root "KEY=value" of its block's labels.
**
** The root of a set is found once per set; a node's copy under a root is
** made with its missing ancestors, outermost first, so each copy costs
** one node once, whatever the depth; the copies are bounded (over_budget). */
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

/* The key of a root's "[...]" node in the copies' map: no node id. */
#define CUT_KEY 0xfffffffeu

int ljm_model_group_by(LjmModel *m, const char *key)
{
  if (m->gkey) return -1;
  m->gkey = strdup(key);
  m->groot = malloc(LJM_MODEL_SETS * sizeof(*m->groot));
  if (!m->gkey || !m->groot || ljm_hmap_init(&m->groot_by_name) ||
      ljm_hmap_init(&m->gcopy)) {
    ljm_group_free(m);
    return -1;
  }
  memset(m->groot, 0xff, LJM_MODEL_SETS * sizeof(*m->groot));
  m->glast = NONE;
  return 0;
}

const char *ljm_model_group_key(const LjmModel *m)
{
  return m->gkey;
}

void ljm_group_free(LjmModel *m)
{
  if (m->groot) {  /* made with the maps: those are set up too */
    ljm_hmap_free(&m->groot_by_name);
    ljm_hmap_free(&m->gcopy);
  }
  free(m->gkey);
  free(m->groot);
  free(m->gpath);
  free(m->groot_of);
  m->gkey = NULL;
  m->groot = NULL;
  m->gpath = NULL;
  m->groot_of = NULL;
}

uint32_t ljm_group_set(LjmModel *m, const LjmRawEvent *ev, uint64_t okey)
{
  uint32_t owner;
  if (ev->kind != LJM_RAW_ALLOC && ljm_addrmap_owner(&m->blocks, okey, &owner))
    return m->ctxs[owner].labels;
  return ev->kind == LJM_RAW_FREE ? 0 : ljm_event_labels(m, ev);
}

/* Notes that node n (a root or a copy) is below root r; 0, or -1 when out
** of memory. */
static int set_root(LjmModel *m, uint32_t n, uint32_t r)
{
  if (n >= m->capgroot_of) {
    uint32_t *p = ljm_model_cover(m, m->groot_of, &m->capgroot_of, n, sizeof(*p), 256, 0xff);
    if (!p) return -1;
    m->groot_of = p;
  }
  m->groot_of[n] = r;
  return 0;
}

uint32_t ljm_model_node_group(const LjmModel *m, uint32_t id)
{
  return id < m->capgroot_of && m->groot_of[id] != NONE ? m->groot_of[id] : LJM_NO_NODE;
}

/* The root node of set's value of the key, made on first use. */
static uint32_t root_of(LjmModel *m, uint32_t set)
{
  if (set >= LJM_MODEL_SETS) set = 0;
  if (m->groot[set] != NONE) return m->groot[set];
  size_t klen = strlen(m->gkey);
  LjmStr v = { "(none)", 6 };
  if (!ljm_model_label_value(m, set, m->gkey, klen, &v) && ljm_model_label_other(m, set))
    v = (LjmStr){ "(other)", 7 };
  char *text = malloc(klen + 1 + v.len);
  if (!text) {
    m->oom = 1;
    return NONE;
  }
  memcpy(text, m->gkey, klen);
  text[klen] = '=';
  memcpy(text + klen + 1, v.s, v.len);
  uint32_t name = ljm_model_intern_shown(m, text, klen + 1 + v.len);
  free(text);
  if (name == NONE) return NONE;
  uint32_t root = ljm_hmap_get(&m->groot_by_name, name);
  if (root == NONE) {
    uint32_t site = ljm_names_label_site(m, name);
    if (site == NONE || (root = ljm_stacks_node_new(m, NONE, site, LJM_NODE_FRAME)) == NONE ||
        set_root(m, root, root))
      return NONE;
    if (ljm_hmap_put(&m->groot_by_name, name, root) != 0) {
      m->oom = 1;
      return NONE;
    }
  }
  /* a set's labels are known once it is defined: remember its root then */
  if (set == 0 || ljm_model_label_defined(m, set)) m->groot[set] = root;
  return root;
}

/* Copies made at most: twice the stream's nodes and sites, and 2^16 more.
** A tree shared by many values (a label per request over one deep tree)
** would otherwise cost values x nodes; past this, an event's node is not
** copied: its site hangs below a "[...]" node of its root. */
static int over_budget(const LjmModel *m)
{
  return m->gcopies >= 2 * ((uint64_t)m->nstream + m->nsites) + 65536;
}

/* The leaf of node's site below root's "[...]" node (made on first use). */
static uint32_t cut_leaf(LjmModel *m, uint32_t root, uint32_t node)
{
  uint64_t key = (uint64_t)root << 32 | CUT_KEY;
  uint32_t cut = ljm_hmap_get(&m->gcopy, key);
  if (cut == NONE) {
    if ((cut = ljm_stacks_node_new(m, root, NONE, LJM_NODE_CUT)) == NONE || set_root(m, cut, root))
      return NONE;
    if (ljm_hmap_put(&m->gcopy, key, cut) != 0) {
      m->oom = 1;
      return NONE;
    }
  }
  uint32_t site = m->nodes[node].site;
  if (site == LJM_NO_SITE) return cut;
  uint32_t leaf = ljm_stacks_leaf_node(m, cut, site);
  return leaf == NONE || set_root(m, leaf, root) ? NONE : leaf;
}

uint32_t ljm_group_node(LjmModel *m, uint32_t node, uint32_t set)
{
  uint32_t root = root_of(m, set);
  if (root == NONE) return NONE;
  uint64_t key = (uint64_t)root << 32 | node;
  if (key == m->glast_key && m->glast != NONE) return m->glast;
  if (over_budget(m)) {
    uint32_t c = ljm_hmap_get(&m->gcopy, key);
    return c != NONE ? c : cut_leaf(m, root, node);
  }
  /* The node and its ancestors up to the first one copied already. */
  uint32_t k = 0, at = root;
  for (uint32_t n = node; n != LJM_NO_NODE; n = m->nodes[n].parent) {
    uint32_t c = ljm_hmap_get(&m->gcopy, (uint64_t)root << 32 | n);
    if (c != NONE) {
      at = c;
      break;
    }
    if (k == m->capgpath) {
      uint32_t *p = ljm_model_grow(m, m->gpath, &m->capgpath, sizeof(*p));
      if (!p) return NONE;
      m->gpath = p;
    }
    m->gpath[k++] = n;
  }
  while (k-- > 0) {
    uint32_t n = m->gpath[k];
    LjmNode src = m->nodes[n];  /* before the array may move */
    uint32_t c = ljm_stacks_node_new(m, at, src.site, src.kind);
    if (c == NONE) return NONE;
    m->nodes[c].stream_id = src.stream_id;
    m->gcopies++;
    if (set_root(m, c, root)) return NONE;
    if (ljm_hmap_put(&m->gcopy, (uint64_t)root << 32 | n, c) != 0) {
      m->oom = 1;
      return NONE;
    }
    at = c;
  }
  m->glast_key = key;
  return m->glast = at;
}
