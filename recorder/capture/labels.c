/* labels.c -- labels of coroutines: what every allocation carries in an
** extended stream (decoder/EXTENSION.md, "Labels").
**
** A label set is a list of key=value pairs sorted by key, kept as the
** bytes of its stream definition (0x26: klen key vlen value ...) and
** interned: one id per distinct set, 1..REC_LABEL_SETS - 1, after which
** new sets share the (other) set, REC_LABEL_SETS, and are counted. Each
** coroutine (lua_State) with labels maps to its set; a coroutine created
** while labels are set starts with its creator's (an allocation of
** sizeof(lua_State) is taken for a thread; a free of that size forgets
** the address, so a block of that size that is no thread leaves nothing
** behind). Labels live while an extended recording runs: set when none
** does, they are not kept, and the last one's end forgets them all: it
** turns them off (labels_on), and the memory goes at the next start or
** label call (labels_gc), on the VM's thread and outside the wrapper, so
** that an exit() on another thread or a write callback never frees what
** an allocator call in progress reads.
*/
#include "recorder/capture/session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An interned set: its definition's pair bytes. */
typedef struct RecLabelSet {
  uint64_t hash;
  uint32_t n;        /* pairs */
  uint32_t len;      /* bytes of def */
  uint8_t def[];
} RecLabelSet;

static struct {
  RecLabelSet **set;     /* by id, REC_LABEL_SETS + 1 entries once used */
  uint32_t nsets;        /* ids 1..nsets given */
  uint32_t *slots;       /* hash -> id, open addressing, REC_LABEL_SLOTS */
  RecMap thr;            /* lua_State -> set id */
  uintptr_t cache_L;     /* the coroutine last looked up, and its set */
  uint32_t cache_set;
  uint64_t folded;       /* label changes that found the sets full */
} RL;

#define REC_LABEL_SLOTS 8192u  /* twice REC_LABEL_SETS: a power of two */

/* Labels are on: the allocator wrapper tracks threads and selects sets. */
static int labels_on;
/* Counts labels_clear: a set id saved by labels_push means its set only
** while it is unchanged. */
static uint32_t labels_gen;

/* A set's hash, eight bytes a step: with_labels interns a set per call. */
static uint64_t label_hash(const uint8_t *p, size_t len)
{
  uint64_t h = 0xcbf29ce484222325ull ^ len, w;
  for (; len >= 8; p += 8, len -= 8) {
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  w = 0;
  memcpy(&w, p, len);
  h = (h ^ w) * 0x9E3779B97F4A7C15ull;
  return h ^ h >> 32;
}

/* Forgets every label: a fork's child, or labels_gc. */
REC_API void labels_clear(void)
{
  uint32_t i;
  if (RL.set)
    for (i = 1; i <= RL.nsets; i++) free(RL.set[i]);
  free(RL.set);
  free(RL.slots);
  rec_map_free(&RL.thr);
  memset(&RL, 0, sizeof(RL));
  labels_on = 0;
  labels_gen++;
}

/* The set of coroutine L (0: none). */
static uint32_t labels_of(uintptr_t L)
{
  RecMapEntry *e;
  if (L == RL.cache_L) return RL.cache_set;
  e = RL.thr.e ? rec_map_get(&RL.thr, L) : NULL;
  RL.cache_L = L;
  RL.cache_set = e ? (uint32_t)e->val : 0;
  return RL.cache_set;
}

/* Frees the labels once no extended recording keeps them (R held, on the
** VM's thread: no allocator call is in progress). */
static void labels_gc(void)
{
  if (!R.next && (RL.set || RL.thr.e)) labels_clear();
}

/* The set of the running coroutine: what an allocation now is made under.
** A coroutine a host left by lua_resume stays g->cur_L; the host runs on
** the main thread then (as the attribution reads it, vm/attribution.h). */
static inline uint32_t labels_now(global_State *g)
{
  lua_State *L = gco2th(gcref(g->cur_L));
  if (!L || !rec_thread_running(L)) L = mainthread(g);
  return labels_of((uintptr_t)L);
}

static int labels_put(uintptr_t L, uint32_t set)
{
  if (L == RL.cache_L) RL.cache_set = set;
  if (!set) {
    if (RL.thr.e) rec_map_del(&RL.thr, L);
    return 0;
  }
  if (!RL.thr.e) rec_map_init(&RL.thr);
  return rec_map_put(&RL.thr, L, set) ? ENOMEM : 0;
}

/* After an allocator call while labels are on: a new thread takes the
** running coroutine's set, a freed one is forgotten. The wrapper's own
** branches on nsize call the half that applies. */
static inline void labels_track_new(void *ptr, size_t nsize, void *res, uint32_t set)
{
  if (__builtin_expect(nsize == sizeof(lua_State), 0) && !ptr) labels_put((uintptr_t)res, set);
}

static inline void labels_track_free(void *ptr, size_t osize)
{
  if (__builtin_expect(osize == sizeof(lua_State), 0) && ptr) labels_put((uintptr_t)ptr, 0);
}

static inline void labels_track(void *ptr, size_t osize, size_t nsize, void *res, uint32_t set)
{
  if (nsize && res) labels_track_new(ptr, nsize, res, set);
  else if (!nsize) labels_track_free(ptr, osize);
}

/* The id of the set with these definition bytes, made when new; the
** (other) set when REC_LABEL_SETS - 1 are taken. 0 on ENOMEM. */
static uint32_t labels_intern(const uint8_t *def, size_t len, uint32_t n)
{
  uint64_t h = label_hash(def, len);
  uint32_t i, id;
  RecLabelSet *s;
  if (!RL.set) {
    RL.set = calloc(REC_LABEL_SETS + 1, sizeof(*RL.set));
    RL.slots = calloc(REC_LABEL_SLOTS, sizeof(*RL.slots));
    if (!RL.set || !RL.slots) {
      labels_clear();
      return 0;
    }
  }
  for (i = (uint32_t)h & (REC_LABEL_SLOTS - 1);; i = (i + 1) & (REC_LABEL_SLOTS - 1)) {
    id = RL.slots[i];
    if (!id) break;
    s = RL.set[id];
    if (s->hash == h && s->len == len && !memcmp(s->def, def, len)) return id;
  }
  if (RL.nsets + 1 >= REC_LABEL_SETS) {
    RL.folded++;
    return REC_LABEL_SETS;
  }
  if (!(s = malloc(sizeof(*s) + len))) return 0;
  s->hash = h;
  s->n = n;
  s->len = (uint32_t)len;
  memcpy(s->def, def, len);
  id = ++RL.nsets;
  RL.set[id] = s;
  RL.slots[i] = id;
  return id;
}

/* One pair of a definition: its key and value, and the bytes after it. */
static const uint8_t *pair_at(const uint8_t *p, const uint8_t **k, uint32_t *kl,
                              const uint8_t **v, uint32_t *vl)
{
  *kl = *p++;  /* lengths are below 128: one ULEB128 byte */
  *k = p;
  p += *kl;
  *vl = *p++;
  *v = p;
  return p + *vl;
}

static uint8_t *put_pair(uint8_t *o, const void *k, uint32_t kl, const void *v, uint32_t vl)
{
  *o++ = (uint8_t)kl;
  memcpy(o, k, kl);
  o += kl;
  *o++ = (uint8_t)vl;
  memcpy(o, v, vl);
  return o + vl;
}

static int key_cmp(const void *a, uint32_t al, const void *b, uint32_t bl)
{
  int c = memcmp(a, b, al < bl ? al : bl);
  return c ? c : (int)al - (int)bl;
}

/* Takes the lock for a label call on L: 0 with it held, or ENOENT (not
** held) when no recording of L's VM keeps labels. */
static int labels_lock(lua_State *L, LjmRecError *err)
{
  int e;
  if ((e = R_lock(err)) != 0) return e;
  labels_gc();
  if (!R.g || R.g != G(L) || !R.next) {
    R_unlock();
    return set_err(err, ENOENT, "%s", "no recording that keeps labels is running");
  }
  return 0;
}

/* Gives L the set of these definition bytes (n pairs; none: no labels),
** and drops the lock. 0 or ENOMEM. */
static int labels_set_unlock(lua_State *L, const uint8_t *def, size_t len, uint32_t n)
{
  uint32_t id = n ? labels_intern(def, len, n) : 0;
  int e = (n && !id) || labels_put((uintptr_t)L, id) ? ENOMEM : 0;
  if (id) labels_on = 1;
  R_unlock();
  return e;
}

/* ljm_recorder_label for this flavour: the set of L with key set to
** value (NULL: removed). */
static int label(lua_State *L, const char *key, size_t klen, const char *value, size_t vlen,
                 LjmRecError *err)
{
  uint8_t def[REC_LABEL_PAIRS * (2 + REC_LABEL_KEY_MAX + REC_LABEL_VALUE_MAX) + 2];
  uint8_t *o = def;
  const uint8_t *p, *end;
  uint32_t cur, n = 0, kl = (uint32_t)klen;
  int done = value == NULL, e;
  if (!key || !klen) return set_err(err, EINVAL, "%s", "a label's key is a non-empty string");
  if (klen > REC_LABEL_KEY_MAX) kl = REC_LABEL_KEY_MAX;  /* cut, as documented */
  if (vlen > REC_LABEL_VALUE_MAX) vlen = REC_LABEL_VALUE_MAX;
  if ((e = labels_lock(L, err)) != 0) return e;
  cur = labels_of((uintptr_t)L);
  if (cur == REC_LABEL_SETS) cur = 0;  /* (other): its pairs are unknown, start afresh */
  p = cur ? RL.set[cur]->def : NULL;
  end = cur ? p + RL.set[cur]->len : NULL;
  while (p && p < end) {  /* merge the key into the sorted pairs */
    const uint8_t *k, *v;
    uint32_t pkl, pvl;
    const uint8_t *next = pair_at(p, &k, &pkl, &v, &pvl);
    int c = key_cmp(k, pkl, key, kl);
    if (c >= 0 && !done) {
      if (value) {
        o = put_pair(o, key, kl, value, (uint32_t)vlen);
        n++;
      }
      done = 1;
    }
    if (c != 0) {
      if (n == REC_LABEL_PAIRS) break;
      o = put_pair(o, k, pkl, v, pvl);
      n++;
    }
    p = next;
  }
  if (!done && n < REC_LABEL_PAIRS) {
    o = put_pair(o, key, kl, value, (uint32_t)vlen);
    n++;
    done = 1;
  }
  if (!done || (p && p < end)) {
    R_unlock();
    return set_err(err, E2BIG, "at most %s labels per coroutine", "16");
  }
  e = labels_set_unlock(L, def, (size_t)(o - def), n);
  return e ? set_err(err, e, "%s", "out of memory") : 0;
}

/* RecFlavour.keeps_labels for this flavour. */
static int labels_kept(lua_State *L)
{
  global_State *g = __atomic_load_n(&R.g, __ATOMIC_RELAXED);
  return g && g == G(L) && __atomic_load_n(&R.next, __ATOMIC_RELAXED);
}

/* ljm_recorder_labels_push for this flavour: the pairs of L's set merged
** with l's (sorted by key, l's value winning; a key l holds twice: its
** last), interned once. */
static int labels_push(lua_State *L, const LjmRecLabel *l, size_t n, uint64_t *saved,
                       LjmRecError *err)
{
  uint8_t def[REC_LABEL_PAIRS * (2 + REC_LABEL_KEY_MAX + REC_LABEL_VALUE_MAX) + 2];
  uint8_t *o = def;
  const LjmRecLabel *add[REC_LABEL_PAIRS];
  const uint8_t *p, *end;
  size_t i, j, na = 0;
  uint32_t cur, np = 0;
  int e;
  *saved = 0;
  for (i = 0; i < n; i++) {  /* l sorted by key (insertion: at most 16) */
    size_t kl = l[i].klen > REC_LABEL_KEY_MAX ? REC_LABEL_KEY_MAX : l[i].klen;
    if (!l[i].key || !l[i].klen || !l[i].value)
      return set_err(err, EINVAL, "%s", "a label's key is a non-empty string, its value a string");
    for (j = 0; j < na; j++) {
      size_t al = add[j]->klen > REC_LABEL_KEY_MAX ? REC_LABEL_KEY_MAX : add[j]->klen;
      int c = key_cmp(add[j]->key, (uint32_t)al, l[i].key, (uint32_t)kl);
      if (c == 0) break;
      if (c > 0) {
        if (na == REC_LABEL_PAIRS) return set_err(err, E2BIG, "at most %s labels per coroutine", "16");
        memmove(&add[j + 1], &add[j], (na - j) * sizeof(*add));
        na++;
        break;
      }
    }
    if (j == na) {
      if (na == REC_LABEL_PAIRS) return set_err(err, E2BIG, "at most %s labels per coroutine", "16");
      na++;
    }
    add[j] = &l[i];
  }
  if ((e = labels_lock(L, err)) != 0) return e;
  cur = labels_of((uintptr_t)L);
  p = cur && cur != REC_LABEL_SETS ? RL.set[cur]->def : NULL;  /* (other): start afresh */
  end = p ? p + RL.set[cur]->len : NULL;
  for (i = 0; (p && p < end) || i < na;) {  /* merge two sorted lists */
    const uint8_t *k = NULL, *v = NULL, *next = p;
    uint32_t pkl = 0, pvl = 0;
    int c = 1;
    if (p && p < end) next = pair_at(p, &k, &pkl, &v, &pvl);
    if (i < na) {
      uint32_t akl = (uint32_t)(add[i]->klen > REC_LABEL_KEY_MAX ? REC_LABEL_KEY_MAX : add[i]->klen);
      c = k ? key_cmp(k, pkl, add[i]->key, akl) : 1;
      if (c >= 0) {
        uint32_t avl = (uint32_t)(add[i]->vlen > REC_LABEL_VALUE_MAX ? REC_LABEL_VALUE_MAX
                                                                      : add[i]->vlen);
        if (np == REC_LABEL_PAIRS) break;
        o = put_pair(o, add[i]->key, akl, add[i]->value, avl);
        np++;
        i++;
        if (c == 0) p = next;  /* replaced */
        continue;
      }
    }
    if (np == REC_LABEL_PAIRS) break;
    o = put_pair(o, k, pkl, v, pvl);
    np++;
    p = next;
  }
  if ((p && p < end) || i < na) {
    R_unlock();
    return set_err(err, E2BIG, "at most %s labels per coroutine", "16");
  }
  *saved = (uint64_t)labels_gen << 32 | cur;
  e = labels_set_unlock(L, def, (size_t)(o - def), np);
  if (e) *saved = 0;
  return e ? set_err(err, e, "%s", "out of memory") : 0;
}

/* ljm_recorder_labels_pop for this flavour. */
static int labels_pop(lua_State *L, uint64_t saved, LjmRecError *err)
{
  uint32_t id = (uint32_t)saved;
  int e;
  if ((e = labels_lock(L, err)) != 0) return e;
  /* a set of a recording that has ended since, or no set: none */
  if ((uint32_t)(saved >> 32) != labels_gen || (id > RL.nsets && id != REC_LABEL_SETS)) id = 0;
  e = labels_put((uintptr_t)L, id) ? ENOMEM : 0;
  R_unlock();
  return e ? set_err(err, e, "%s", "out of memory") : 0;
}

/* ljm_recorder_labels for this flavour: fn is called on a copy, without
** the lock (it may allocate, run a finalizer that records, or raise). */
static int labels(lua_State *L, LjmRecLabelFn fn, void *ud)
{
  uint8_t def[REC_LABEL_PAIRS * (2 + REC_LABEL_KEY_MAX + REC_LABEL_VALUE_MAX)];
  const uint8_t *p = def, *end = def;
  uint32_t set;
  int n = 0;
  if (R_lock(NULL)) return 0;
  set = R.g == G(L) && labels_on ? labels_of((uintptr_t)L) : 0;
  if (set && set < REC_LABEL_SETS) {
    memcpy(def, RL.set[set]->def, RL.set[set]->len);
    end = def + RL.set[set]->len;
  }
  R_unlock();
  for (; p < end; n++) {
    const uint8_t *k, *v;
    uint32_t kl, vl;
    p = pair_at(p, &k, &kl, &v, &vl);
    if (fn) fn(ud, (const char *)k, kl, (const char *)v, vl);
  }
  return n;
}

/* Before an event of stream s made under set: the selection (0x27) when
** the set changed, the set's definition (0x26) before its first use, the
** folded count (0x28) when it grew. */
static __attribute__((noinline)) void labels_write(RecStream *s, uint32_t set)
{
  const RecLabelSet *d = set && set < REC_LABEL_SETS ? RL.set[set] : NULL;
  rec_ext_labels(s, set, d ? d->def : NULL, d ? d->len : 0, RL.folded);
}

/* The same for a stream known to be extended (s->ext set). */
static inline void labels_select_ext(RecStream *s, uint32_t set)
{
  if (__builtin_expect(set != s->ext->lsel, 0) ||
      (__builtin_expect(set == REC_LABEL_SETS, 0) && RL.folded != s->ext->lfolded))
    labels_write(s, set);
}

static inline void labels_select(RecStream *s, uint32_t set)
{
  if (s->ext) labels_select_ext(s, set);
}
