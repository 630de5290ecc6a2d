/* ljm_names.c -- naming a location the way the reference report does
** (doc/ljm-format.md, "Names"),
** and the site a (location, name) pair stands for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_funcname.h"
#include "model/ljm_model_int.h"

/* LuaJIT formats "%d" by converting the double to int64 (x86: out of range
** gives INT64_MIN); the stream's numbers went through a double first. */
static int64_t lua_int(double n)
{
  if (!(n >= -9223372036854775808.0 && n < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)n;
}

int ljm_fmt_lua_int(char *buf, size_t len, double n)
{
  return snprintf(buf, len, "%lld", (long long)lua_int(n));
}

/* "%#x" of a number that went through a double, as LuaJIT prints it. */
static int fmt_lua_hex(char *buf, size_t len, uint64_t v)
{
  double n = (double)v;
  int64_t k = n >= 9223372036854775808.0 ? lua_int(n - 18446744073709551616.0) : lua_int(n);
  if (k == 0) return snprintf(buf, len, "0");
  return snprintf(buf, len, "0x%llx", (unsigned long long)k);
}

/* A growable string, on the stack while short. */
typedef struct Sb {
  char *p;
  size_t n, cap;
  char small[256];
  int oom;
} Sb;

static void sb_init(Sb *b)
{
  b->p = b->small;
  b->n = 0;
  b->cap = sizeof(b->small);
  b->oom = 0;
}

static void sb_add(Sb *b, const char *s, size_t len)
{
  if (b->n + len + 1 > b->cap) {
    size_t cap = b->cap * 2;
    while (cap < b->n + len + 1) cap *= 2;
    char *p = b->p == b->small ? malloc(cap) : realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    if (b->p == b->small) memcpy(p, b->small, b->n);
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, len);
  b->n += len;
  b->p[b->n] = '\0';
}

static void sb_str(Sb *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_done(Sb *b)
{
  if (b->p != b->small) free(b->p);
}

/* How (addr, line) resolves without a trace: rules 2-5 of doc/ljm-format.md's
** "Names". */
typedef struct Res {
  LjmSiteKind kind;
  const Proto *proto;   /* LUA */
  uint64_t sym_addr;    /* C with a symbol */
  uint32_t sym_name;    /* strtab id, or NONE */
} Res;

static void resolve(const LjmModel *m, uint64_t addr, Res *r)
{
  memset(r, 0, sizeof(*r));
  r->sym_name = NONE;
  if (addr == 0) {
    r->kind = LJM_SITE_INTERNAL;
    return;
  }
  if ((r->proto = ljm_sym_find_proto(m, addr))) {
    r->kind = LJM_SITE_LUA;
    return;
  }
  r->kind = LJM_SITE_C;
  if (ljm_addrset_floor(&m->caddrs, addr, &r->sym_addr))
    r->sym_name = ljm_hmap_get(&m->cname_by_addr, r->sym_addr);
}

static void name_plain(const LjmModel *m, const Res *r, uint64_t addr, uint64_t line,
                       Sb *b)
{
  char num[32];
  switch (r->kind) {
  case LJM_SITE_INTERNAL:
    sb_str(b, "INTERNAL");
    break;
  case LJM_SITE_LUA: {
    const LjmStrEntry *e = ljm_strtab_get(&m->str, r->proto->shown);
    sb_add(b, e->s, e->len);
    ljm_fmt_lua_int(num, sizeof(num), (double)line);
    sb_str(b, ":");
    sb_str(b, num);
    break;
  }
  default:
    if (r->sym_name != NONE) {
      const LjmStrEntry *e = ljm_strtab_get(&m->str, r->sym_name);
      sb_add(b, e->s, e->len);
      sb_str(b, ":");
      fmt_lua_hex(num, sizeof(num), r->sym_addr);
    } else {
      sb_str(b, "CFUNC ");
      fmt_lua_hex(num, sizeof(num), addr);
    }
    sb_str(b, num);
    break;
  }
}

static const Trace *find_trace(const LjmModel *m, uint64_t traceno)
{
  uint32_t i = ljm_hmap_get(&m->trace_by_no, traceno);
  return i == NONE ? NULL : &m->traces[i];
}

/* Strips the '@' or '=' of a chunk name to get a file for viewers. */
static const char *file_of(const char *chunk, int aliased)
{
  if (!aliased && (chunk[0] == '@' || chunk[0] == '=')) return chunk + 1;
  return chunk;
}

static uint32_t intern_sb(LjmModel *m, Sb *b)
{
  if (b->oom) {
    m->oom = 1;
    return NONE;
  }
  return ljm_model_intern(m, b->p, b->n);
}

static const char *str_of(LjmModel *m, uint32_t id)
{
  return id == NONE ? "" : ljm_strtab_get(&m->str, id)->s;
}

/* The function name of a Lua site for viewers (LjmSite.func). */
static void name_function(LjmModel *m, const Proto *p, LjmSite *s)
{
  char name[LJM_FUNCNAME_MAX + 1];
  size_t len = 0, n;
  if (p->firstline == 0) {
    s->func = "main chunk";
    s->func_from = LJM_FUNC_MAIN;
    return;
  }
  const char *def = ljm_sources_line(m, p->chunk, p->firstline, &len);
  if (def && (n = ljm_funcname_parse(def, len, name)) > 0) {
    s->func = str_of(m, ljm_model_intern(m, name, n));
    s->func_from = LJM_FUNC_SOURCE;
    return;
  }
  s->func_from = def || ljm_sources_readable(m, p->chunk) ? LJM_FUNC_ANONYMOUS
                                                         : LJM_FUNC_UNKNOWN;
  Sb b;
  sb_init(&b);
  sb_str(&b, "function <");
  sb_str(&b, s->file);
  snprintf(name, sizeof(name), " line %llu>", (unsigned long long)p->firstline);
  sb_str(&b, name);
  s->func = str_of(m, intern_sb(m, &b));
  sb_done(&b);
}

/* Fills the descriptive fields of a new site. */
static void describe(LjmModel *m, uint32_t si, const Loc *L, const Res *r)
{
  LjmSite *s = &m->sites[si];
  char num[48];
  s->addr = L->addr;
  s->file = s->chunk = "";
  if (L->traceno != 0) {
    s->kind = LJM_SITE_TRACE;
    s->traceno = L->traceno;
    s->trace_start = LJM_NO_SITE;
    ljm_fmt_lua_int(num, sizeof(num), (double)L->traceno);
    Sb b;
    sb_init(&b);
    sb_str(&b, "TRACE [");
    sb_str(&b, num);
    sb_str(&b, "]");
    s->func = str_of(m, intern_sb(m, &b));
    sb_done(&b);
    return;
  }
  s->kind = r->kind;
  switch (r->kind) {
  case LJM_SITE_INTERNAL:
    s->func = "INTERNAL";
    break;
  case LJM_SITE_LUA: {
    const LjmStrEntry *shown = ljm_strtab_get(&m->str, r->proto->shown);
    s->chunk = shown->s;
    s->file = file_of(shown->s, r->proto->aliased);
    s->line = (int64_t)lua_int((double)L->line);
    if (r->proto->firstline >= (1ull << 63)) {  /* built-ins say -1: no line */
      s->func = s->file;
      s->file = "[builtin]";
      s->func_from = LJM_FUNC_BUILTIN;
    } else {
      s->func_line = r->proto->firstline;
      name_function(m, r->proto, s);
    }
    break;
  }
  default:
    if (r->sym_name != NONE) {
      s->symbol_addr = r->sym_addr;
      s->func = str_of(m, r->sym_name);
    } else {
      s->func = "unknown C function";  /* its address is in 'addr' */
    }
    break;
  }
}

/* Room for one more site: its id (zeroed), or NONE when out of memory. */
static uint32_t site_slot(LjmModel *m)
{
  if (m->nsites == m->capsites) {
    uint32_t cap = m->capsites;
    LjmSite *s = ljm_model_grow(m, m->sites, &cap, sizeof(*s));
    if (!s) return NONE;
    m->sites = s;
    cap = m->capsites;
    SiteX *x = ljm_model_grow(m, m->sitex, &cap, sizeof(*x));
    if (!x) return NONE;
    m->sitex = x;
    m->capsites = cap;
  }
  memset(&m->sites[m->nsites], 0, sizeof(m->sites[m->nsites]));
  memset(&m->sitex[m->nsites], 0, sizeof(m->sitex[m->nsites]));
  return m->nsites++;
}

static uint32_t new_site(LjmModel *m, uint32_t loc, uint32_t name)
{
  uint32_t si = site_slot(m);
  if (si == NONE) return NONE;
  const LjmStrEntry *e = ljm_strtab_get(&m->str, name);
  m->sites[si].name = e->s;
  m->sites[si].name_len = e->len;
  m->sitex[si].loc = loc;
  m->sitex[si].name = name;
  if (ljm_hmap_put(&m->site_by_key, (uint64_t)loc << 32 | name, si) != 0) m->oom = 1;
  if (!m->stacks) ljm_stacks_site_node(m, si);  /* node si: the site alone */
  return si;
}

uint32_t ljm_names_site_of(LjmModel *m, uint32_t li)
{
  Loc L = m->locs[li];
  Res r;
  memset(&r, 0, sizeof(r));
  Sb b;
  sb_init(&b);
  const Trace *t = NULL;
  if (L.traceno != 0) {
    char num[32];
    ljm_fmt_lua_int(num, sizeof(num), (double)L.traceno);
    sb_str(&b, "TRACE [");
    sb_str(&b, num);
    sb_str(&b, "]");
    if ((t = find_trace(m, L.traceno))) {
      Res tr;
      resolve(m, t->proto, &tr);
      sb_str(&b, " started at ");
      name_plain(m, &tr, t->proto, t->line, &b);
    }
  } else {
    resolve(m, L.addr, &r);
    name_plain(m, &r, L.addr, L.line, &b);
  }
  uint32_t name = intern_sb(m, &b);
  sb_done(&b);
  if (name == NONE) return NONE;

  Loc *lp = &m->locs[li];
  lp->name = name;
  lp->name_gen = m->gen;
  if (lp->site != NONE && m->sitex[lp->site].name == name) return lp->site;
  uint32_t si = ljm_hmap_get(&m->site_by_key, (uint64_t)li << 32 | name);
  if (si == NONE) {
    si = new_site(m, li, name);
    if (si == NONE) return NONE;
    describe(m, si, &L, &r);
    if (t) {  /* the trace's start location is a site of its own */
      uint32_t sl = ljm_model_loc(m, t->proto, t->line, 0);
      uint32_t ss = sl == NONE ? NONE : ljm_names_site_of(m, sl);
      m->sites[si].trace_start = ss == NONE ? LJM_NO_SITE : ss;
    }
  }
  m->locs[li].site = si;
  return si;
}

uint32_t ljm_names_site_named(LjmModel *m, uint32_t base, const char *name, size_t len)
{
  uint32_t fn = ljm_model_intern(m, name, len);
  if (fn == NONE) return NONE;
  uint64_t key = (uint64_t)base << 32 | fn;
  uint32_t si = ljm_hmap_get(&m->named_site, key);
  if (si != NONE) return si;
  if ((si = site_slot(m)) == NONE) return NONE;
  m->sites[si] = m->sites[base];
  memset(&m->sites[si].fig, 0, sizeof(m->sites[si].fig));
  m->sites[si].func = str_of(m, fn);
  m->sites[si].func_from = LJM_FUNC_STREAM;
  m->sitex[si].loc = m->sitex[base].loc;
  m->sitex[si].name = m->sitex[base].name;
  if (ljm_hmap_put(&m->named_site, key, si) != 0) m->oom = 1;
  return si;
}
