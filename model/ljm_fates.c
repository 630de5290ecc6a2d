/* ljm_fates.c -- what happens to each block, read ahead of the view: the
** first reading of a stream for --lifetime, --lived and --site-leaked.
**
** Both readings count the events the filter sees (ljm_filter_event: every
** event before a time window's end, in order), so an event's ordinal names
** the same event in each. The first reading follows every block from the
** event that makes it to the event that frees it (or the end), and keeps
** one bit per event: whether the block that event makes passes the
** lifetime and lived filters. It also counts, per site (by name), the
** blocks made and the ones still in use at the end, for --site-leaked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_model_int.h"

/* The time a block was made at, and its site, kept apart for --lived only. */
typedef struct Birth {
  uint64_t time;       /* usec, LJM_NO_TIME without time marks */
  uint32_t site;       /* the model's site of the event that made it */
  uint32_t next_free;  /* free list, when unused */
} Birth;

struct LjmFates {
  LjmFateSpec spec;
  uint64_t *bits;  uint64_t nbits, capbits;  /* per ordinal: passes */
  /* --site-leaked: the names of the sites that pass (they may hold NUL
  ** bytes), by their hash */
  LjmHmap site_ok;  LjmStr *names;  uint32_t nnames, capnames;
  int has_time;    /* the first reading saw time marks */
};

/* Blocks in use, by address: size = the ordinal of the event that made it
** << 1 | made before a time window; site = its site, or with --lived its
** Birth. A block is temporary when no block was made after it. */
typedef struct FateScan {
  LjmFates *f;
  LjmAddrmap live;
  Birth *births;  uint32_t nbirths, capbirths, free_head;
  uint64_t *made, *leaked;   /* per site: blocks made in view, still in use */
  uint32_t capsites;
  uint64_t last_time;
  uint64_t last_made;        /* the ordinal of the last event that made a block */
} FateScan;

#define NO_BIRTH UINT32_MAX

/* FNV-1a of a site's name (names may hold NUL bytes). */
static uint64_t name_hash(const char *s, size_t len)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

void ljm_fates_free(LjmFates *f)
{
  if (!f) return;
  free(f->bits);
  ljm_hmap_free(&f->site_ok);
  for (uint32_t i = 0; i < f->nnames; i++) free((char *)f->names[i].s);
  free(f->names);
  free(f);
}

static void scan_free(FateScan *s)
{
  if (!s) return;
  ljm_fates_free(s->f);
  ljm_addrmap_free(&s->live);
  free(s->births);
  free(s->made);
  free(s->leaked);
  free(s);
}

int ljm_model_fate_scan(LjmModel *m, const LjmFateSpec *spec)
{
  FateScan *s = calloc(1, sizeof(*s));
  if (!s || !(s->f = calloc(1, sizeof(*s->f))) || ljm_addrmap_init(&s->live) ||
      ljm_hmap_init(&s->f->site_ok) || ljm_filter_init(m)) {
    scan_free(s);
    return -1;
  }
  s->f->spec = *spec;
  s->free_head = NO_BIRTH;
  s->last_time = LJM_NO_TIME;
  s->last_made = UINT64_MAX;
  m->fscan = s;
  return 0;
}

/* Sets bit i (0: the block made by event i fails). */
static void set_bit(LjmModel *m, LjmFates *f, uint64_t i, int pass)
{
  if (i >= f->capbits * 64) {
    uint64_t cap = f->capbits ? f->capbits : 1024;
    while (cap * 64 <= i) cap *= 2;
    uint64_t *p = realloc(f->bits, cap * sizeof(*p));
    if (!p) {
      m->oom = 1;
      return;
    }
    memset(p + f->capbits, 0, (cap - f->capbits) * sizeof(*p));
    f->bits = p;
    f->capbits = cap;
  }
  if (pass) f->bits[i >> 6] |= 1ull << (i & 63);
  else f->bits[i >> 6] &= ~(1ull << (i & 63));
  if (i >= f->nbits) f->nbits = i + 1;
}

/* Whether a block of this life passes --lifetime and --lived. */
static int life_passes(const LjmFateSpec *sp, int freed, int temporary, uint64_t born,
                       uint64_t end)
{
  if (sp->lifetime == LJM_LIFETIME_LEAKED && freed) return 0;
  if (sp->lifetime == LJM_LIFETIME_FREED && !freed) return 0;
  if (sp->lifetime == LJM_LIFETIME_TEMPORARY && !temporary) return 0;
  if (sp->lived) {
    if (born == LJM_NO_TIME || end == LJM_NO_TIME || end < born) return 0;
    uint64_t lived = end - born;
    if (lived < sp->lived_min_us || lived > sp->lived_max_us) return 0;
  }
  return 1;
}

static int count_site(LjmModel *m, FateScan *s, uint32_t si, int made, int leaked)
{
  if (si >= s->capsites) {
    uint32_t cap = s->capsites;
    uint64_t *a = ljm_model_cover(m, s->made, &cap, si, sizeof(*a), 64, 0);
    if (!a) return -1;
    s->made = a;
    cap = s->capsites;
    uint64_t *b = ljm_model_cover(m, s->leaked, &cap, si, sizeof(*b), 64, 0);
    if (!b) return -1;
    s->leaked = b;
    s->capsites = cap;
  }
  s->made[si] += (uint64_t)made;
  s->leaked[si] += (uint64_t)leaked;
  return 0;
}

/* A block's site and the time it was made at (releasing its Birth). */
static uint32_t birth_of(FateScan *s, uint32_t field, uint64_t *time)
{
  if (!s->f->spec.lived) {
    *time = LJM_NO_TIME;
    return field;
  }
  Birth *x = &s->births[field];
  *time = x->time;
  x->next_free = s->free_head;
  s->free_head = field;
  return x->site;
}

/* The block of map entry (size, site) ends at time t: its bit is known. */
static void ended(LjmModel *m, FateScan *s, uint64_t size, uint32_t site, uint64_t t)
{
  uint64_t born;
  birth_of(s, site, &born);
  set_bit(m, s->f, size >> 1, life_passes(&s->f->spec, 1, s->last_made == size >> 1, born, t));
}

void ljm_fates_event(LjmModel *m, const LjmRawEvent *ev, uint32_t si, uint64_t okey,
                     uint64_t nkey, uint64_t ordinal)
{
  FateScan *s = m->fscan;
  LjmBlock old;
  if (ev->time != LJM_NO_TIME) s->last_time = ev->time;
  if (ev->kind != LJM_RAW_ALLOC && ljm_addrmap_take_key(&s->live, ev->oaddr, okey, &old))
    ended(m, s, old.size, old.site, ev->time);
  if (ev->kind == LJM_RAW_FREE || ev->nosample) return;
  s->last_made = ordinal;
  uint32_t field = si;
  if (s->f->spec.lived) {  /* a Birth for its time */
    field = s->free_head;
    if (field != NO_BIRTH) {
      s->free_head = s->births[field].next_free;
    } else {
      if (s->nbirths == s->capbirths) {
        Birth *p = ljm_model_grow(m, s->births, &s->capbirths, sizeof(*p));
        if (!p) return;
        s->births = p;
      }
      field = s->nbirths++;
    }
    s->births[field] = (Birth){ ev->time, si, NO_BIRTH };
  }
  /* in view: not a block made before a time window (it is carried in) */
  int before = m->win && (ev->time == LJM_NO_TIME ? 0 : ev->time) < m->win_from;
  if (count_site(m, s, si, !before, 0)) return;
  set_bit(m, s->f, ordinal, 0);  /* until it ends, or the stream does */
  LjmBlock dropped;  /* an address reused without a free: that block ended */
  int r = ljm_addrmap_put_key(&s->live, ev->naddr, nkey, ordinal << 1 | (uint64_t)before, field,
                              &dropped);
  if (r < 0) m->oom = 1;
  else if (r > 0) ended(m, s, dropped.size, dropped.site, ev->time);
}

/* Each block still in use at the end. */
typedef struct EndCtx {
  LjmModel *m;
  FateScan *s;
  uint64_t end;
} EndCtx;

static void still_live(void *ud, uint64_t key, uint64_t size, uint32_t field)
{
  EndCtx *c = ud;
  (void)key;
  uint64_t born;
  uint32_t site = birth_of(c->s, field, &born);
  set_bit(c->m, c->s->f, size >> 1, life_passes(&c->s->f->spec, 0, 0, born, c->end));
  count_site(c->m, c->s, site, 0, !(size & 1));
}

/* Sites of one name (one line, several functions or traces) are one line
** for --site-leaked: each name's counts are added into its first site's. */
static int by_name(LjmModel *m, FateScan *s)
{
  LjmHmap first;
  if (ljm_hmap_init(&first)) {
    m->oom = 1;
    return -1;
  }
  for (uint32_t i = 0; i < m->nsites && i < s->capsites; i++) {
    if (!s->made[i] && !s->leaked[i]) continue;
    const LjmSite *site = &m->sites[i];
    uint64_t h = ljm_hash64(name_hash(site->name, site->name_len));
    uint32_t j = ljm_hmap_get(&first, h);
    if (j == NONE) {
      if (ljm_hmap_put(&first, h, i)) {
        ljm_hmap_free(&first);
        m->oom = 1;
        return -1;
      }
    } else if (m->sites[j].name_len == site->name_len &&
               !memcmp(m->sites[j].name, site->name, site->name_len)) {
      s->made[j] += s->made[i];
      s->leaked[j] += s->leaked[i];
      s->made[i] = s->leaked[i] = 0;
    }
  }
  ljm_hmap_free(&first);
  return 0;
}

LjmFates *ljm_model_fates_take(LjmModel *m)
{
  FateScan *s = m->fscan;
  if (!s || m->oom) return NULL;
  /* The end: the window's, else the last time mark. */
  uint64_t end = m->info.recorded == LJM_NO_TIME_US ? s->last_time : m->info.recorded;
  if (m->win && end != LJM_NO_TIME && end > m->win_to) end = m->win_to;
  EndCtx c = { m, s, end };
  ljm_addrmap_each(&s->live, still_live, &c);
  LjmFates *f = s->f;
  f->has_time = (m->info.ext_flags & LJM_EXT_TIME) != 0;
  if (f->spec.site_leaked && by_name(m, s) == 0) {
    for (uint32_t i = 0; i < m->nsites && i < s->capsites && !m->oom; i++) {
      if (!s->made[i] || 100.0 * (double)s->leaked[i] < f->spec.site_leaked_pct * (double)s->made[i])
        continue;
      const LjmSite *site = &m->sites[i];
      if (f->nnames == f->capnames) {
        uint32_t cap = f->capnames ? 2 * f->capnames : 64;
        LjmStr *p = realloc(f->names, cap * sizeof(*p));
        if (!p) {
          m->oom = 1;
          break;
        }
        f->names = p;
        f->capnames = cap;
      }
      char *name = malloc(site->name_len + 1);
      if (!name) {
        m->oom = 1;
        break;
      }
      memcpy(name, site->name, site->name_len);
      name[site->name_len] = '\0';
      f->names[f->nnames] = (LjmStr){name, site->name_len};
      uint64_t h = ljm_hash64(name_hash(site->name, site->name_len));
      if (ljm_hmap_get(&f->site_ok, h) == NONE && ljm_hmap_put(&f->site_ok, h, f->nnames))
        m->oom = 1;
      f->nnames++;
    }
  }
  if (m->oom) return NULL;
  s->f = NULL;
  return f;
}

void ljm_fates_scan_free(LjmModel *m)
{
  scan_free(m->fscan);
  m->fscan = NULL;
}

int ljm_fates_timed(const LjmFates *f)
{
  return f->has_time;
}

int ljm_model_filter_fates(LjmModel *m, LjmFates *f)
{
  if (ljm_filter_init(m)) return -1;
  ljm_fates_free(m->fates);
  m->fates = f;
  return 0;
}

/* Whether site si passes --site-leaked (memoised per site). */
static int site_passes(LjmModel *m, uint32_t si)
{
  LjmFates *f = m->fates;
  if (!f->spec.site_leaked) return 1;
  if (si >= m->capfsite_ok) {
    uint8_t *p = ljm_model_cover(m, m->fsite_ok, &m->capfsite_ok, si, 1, 64, 0);
    if (!p) return 0;
    m->fsite_ok = p;
  }
  if (!m->fsite_ok[si]) {
    const LjmSite *s = &m->sites[si];
    uint32_t i = ljm_hmap_get(&f->site_ok, ljm_hash64(name_hash(s->name, s->name_len)));
    int ok = i != NONE && f->names[i].len == s->name_len &&
             !memcmp(f->names[i].s, s->name, s->name_len);
    m->fsite_ok[si] = ok ? 2 : 1;
  }
  return m->fsite_ok[si] == 2;
}

int ljm_fates_pass(LjmModel *m, uint64_t ordinal, uint32_t si)
{
  const LjmFates *f = m->fates;
  if (ordinal >= f->nbits || !(f->bits[ordinal >> 6] >> (ordinal & 63) & 1)) return 0;
  return site_passes(m, si);
}

int ljm_fates_unknown_pass(LjmModel *m, uint32_t si)
{
  const LjmFateSpec *sp = &m->fates->spec;
  /* made before the stream, freed now: freed, for an unknown time */
  return (sp->lifetime == LJM_LIFETIME_ANY || sp->lifetime == LJM_LIFETIME_FREED) &&
         !sp->lived && site_passes(m, si);
}

/* A duration as people read it: "1.5 s", "250 ms", "2 min". */
static void dur_text(char *buf, size_t len, uint64_t us)
{
  if (us >= 60000000 && us % 60000000 == 0) snprintf(buf, len, "%llu min", (unsigned long long)(us / 60000000));
  else if (us >= 1000000 || us == 0) snprintf(buf, len, "%g s", (double)us / 1e6);
  else snprintf(buf, len, "%g ms", (double)us / 1e3);
}

const char *ljm_fates_note(const LjmFates *f, char *buf, size_t len)
{
  const LjmFateSpec *sp = &f->spec;
  static const char *const life[] = {
    [LJM_LIFETIME_ANY] = "",
    [LJM_LIFETIME_LEAKED] = "still in use at the end",
    [LJM_LIFETIME_TEMPORARY] = "freed before another block was allocated",
    [LJM_LIFETIME_FREED] = "freed before the end",
  };
  size_t n = 0;
  int clauses = 0;
  buf[0] = '\0';
  if (sp->lifetime != LJM_LIFETIME_ANY) {
    n += (size_t)snprintf(buf, len, "%s", life[sp->lifetime]);
    clauses++;
  }
  if (sp->lived && n < len) {
    char a[32], b[32];
    dur_text(a, sizeof(a), sp->lived_min_us);
    dur_text(b, sizeof(b), sp->lived_max_us);
    if (sp->lived_max_us == UINT64_MAX)
      n += (size_t)snprintf(buf + n, len - n, "%sthat lived %s or longer", clauses++ ? ", " : "", a);
    else if (sp->lived_min_us == 0)
      n += (size_t)snprintf(buf + n, len - n, "%sthat lived %s or less", clauses++ ? ", " : "", b);
    else
      n += (size_t)snprintf(buf + n, len - n, "%sthat lived %s to %s", clauses++ ? ", " : "", a, b);
  }
  if (sp->site_leaked && n < len)
    n += (size_t)snprintf(buf + n, len - n, "%sfrom lines where at least %g%% of the blocks "
                          "made are still in use at the end", clauses++ ? ", " : "",
                          sp->site_leaked_pct);
  return clauses ? buf : NULL;
}
