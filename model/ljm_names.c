/* ljm_names.c -- naming a location the way the reference report does
** (doc/ljm-format.md, "Names"),
** and the site a (location, name) pair stands for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ljm_funcname.h"
#include "model/ljm_model_int.h"

const char *ljm_builtin_name(const char *chunk, size_t len)
{
  /* The functions LuaJIT 2.1's libraries define in bytecode (LJLIB_LUA in
  ** lib_string.c, lib_math.c, lib_table.c): their prototypes are named by
  ** the last part of the name alone and defined on line -1. */
  static const char *const names[][2] = {
    {"len", "string.len"},        {"deg", "math.deg"},         {"rad", "math.rad"},
    {"foreachi", "table.foreachi"}, {"foreach", "table.foreach"}, {"getn", "table.getn"},
    {"remove", "table.remove"},   {"move", "table.move"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strlen(names[i][0]) == len && !memcmp(names[i][0], chunk, len)) return names[i][1];
  return NULL;
}

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
  LjmCsym sym;          /* C with a symbol; name NULL without */
} Res;

static void resolve(const LjmModel *m, uint64_t addr, Res *r)
{
  memset(r, 0, sizeof(*r));
  if (addr == 0) {
    r->kind = LJM_SITE_INTERNAL;
    return;
  }
  if ((r->proto = ljm_sym_find_proto(m, addr))) {
    r->kind = LJM_SITE_LUA;
    return;
  }
  r->kind = LJM_SITE_C;
  const LjmCsym *sym = ljm_csyms_floor(&m->csyms, addr);
  if (sym) r->sym = *sym;
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
    if (r->sym.name) {
      sb_add(b, r->sym.name, r->sym.len);
      sb_str(b, ":");
      fmt_lua_hex(num, sizeof(num), r->sym.addr);
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

/* The last component of a path. */
static const char *base_of(const char *file)
{
  const char *b = strrchr(file, '/');
  return b ? b + 1 : file;
}

/* The shortest end of path mine, at a '/', that the path of chunk other
** does not end with ("stages/init.lua" beside "builtin_standards/init.lua");
** the file's name alone when both are one file. */
static const char *short_place(const char *mine, const char *other)
{
  if (other[0] == '@' || other[0] == '=') other++;
  const char *a = mine + strlen(mine), *b = other + strlen(other);
  if (!strcmp(mine, other)) return base_of(mine);
  while (a > mine && b > other && a[-1] == b[-1]) a--, b--;
  while (a > mine && a[-1] != '/') a--;
  return a;
}

/* The text a function shows, told apart from other functions: the first
** function (chunk, definition line) to show a text in a file of that name
** keeps it; another one shows "text <place:line>" ("main chunk <place>"),
** its place the end of its path that tells the two files apart. */
static const char *unique_text(LjmModel *m, const LjmSite *s, const Proto *p, uint32_t text)
{
  uint32_t base = ljm_model_intern(m, base_of(s->file), strlen(base_of(s->file)));
  if (text == NONE || base == NONE) return str_of(m, text);
  uint64_t key = (uint64_t)text << 32 | base;
  uint32_t i = ljm_hmap_get(&m->fn_by_text, key);
  if (i == NONE) {
    if (m->nfnids == m->capfnids) {
      FnId *f = ljm_model_grow(m, m->fnids, &m->capfnids, sizeof(*f));
      if (!f) return str_of(m, text);
      m->fnids = f;
    }
    m->fnids[m->nfnids] = (FnId){ p->chunk, p->firstline };
    if (ljm_hmap_put(&m->fn_by_text, key, m->nfnids++) != 0) m->oom = 1;
    return str_of(m, text);
  }
  if (m->fnids[i].chunk == p->chunk && m->fnids[i].firstline == p->firstline)
    return str_of(m, text);
  char num[32];
  Sb b;
  sb_init(&b);
  sb_str(&b, str_of(m, text));
  sb_str(&b, " <");
  sb_str(&b, short_place(s->file, str_of(m, m->fnids[i].chunk)));
  if (p->firstline) snprintf(num, sizeof(num), ":%llu>", (unsigned long long)p->firstline);
  else snprintf(num, sizeof(num), ">");  /* a main chunk: its file says it */
  sb_str(&b, num);
  const char *r = str_of(m, intern_sb(m, &b));
  sb_done(&b);
  return r;
}

/* The function name of a Lua site for viewers (LjmSite.func): the
** stream's definition name, else its definition line's, else
** "function <file:line>". */
static void name_function(LjmModel *m, const Proto *p, LjmSite *s)
{
  char name[LJM_FUNCNAME_MAX + 1];
  size_t len = 0, n;
  if (p->firstline == 0) {  /* two files of one name: "main chunk <b/init.lua>" */
    s->func = unique_text(m, s, p, ljm_model_intern(m, "main chunk", 10));
    s->func_from = LJM_FUNC_MAIN;
    return;
  }
  if (p->defname != NONE) {
    s->func = unique_text(m, s, p, p->defname);
    s->func_from = LJM_FUNC_DEFINED;
    return;
  }
  const char *def = ljm_sources_line(m, p->chunk, p->firstline, &len);
  if (def && (n = ljm_funcname_parse(def, len, name)) > 0) {
    s->func = unique_text(m, s, p, ljm_model_intern(m, name, n));
    s->func_from = LJM_FUNC_SOURCE;
    return;
  }
  s->func_from = def || ljm_sources_readable(m, p->chunk) ? LJM_FUNC_ANONYMOUS
                                                         : LJM_FUNC_UNKNOWN;
  Sb b;
  sb_init(&b);
  sb_str(&b, "function <");
  sb_str(&b, base_of(s->file));
  snprintf(name, sizeof(name), ":%llu>", (unsigned long long)p->firstline);
  sb_str(&b, name);
  s->func = unique_text(m, s, p, intern_sb(m, &b));
  sb_done(&b);
}

void ljm_names_finish(LjmModel *m)
{
  for (uint32_t i = 0; i < m->nsites && !m->oom; i++) {
    LjmSite *s = &m->sites[i];
    if (s->kind != LJM_SITE_LUA || s->func_from == LJM_FUNC_MAIN ||
        s->func_from == LJM_FUNC_BUILTIN || s->func_from == LJM_FUNC_DEFINED)
      continue;
    const Proto *p = ljm_sym_find_proto(m, s->addr);
    if (p && p->defname != NONE && p->firstline == s->func_line &&
        str_of(m, p->shown) == s->chunk)
      name_function(m, p, s);
  }
}

/* A trace's name for viewers says where it starts, so that a row means
** something and two runs compare: "TRACE [12] parser.lua:118", or the C
** function it starts in. */
static void name_trace(LjmModel *m, LjmSite *t, const LjmSite *start)
{
  char num[32];
  Sb b;
  sb_init(&b);
  sb_str(&b, t->func);
  if (start->kind == LJM_SITE_LUA && start->func_from != LJM_FUNC_BUILTIN) {
    sb_str(&b, " ");
    sb_str(&b, base_of(start->file));
    snprintf(num, sizeof(num), ":%lld", (long long)start->line);
    sb_str(&b, num);
  } else if (start->kind == LJM_SITE_LUA || start->kind == LJM_SITE_C) {
    sb_str(&b, " ");
    sb_str(&b, start->func);
  }
  t->func = str_of(m, intern_sb(m, &b));
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
      const char *lib = ljm_builtin_name(s->file, strlen(s->file));
      s->func = lib ? lib : s->file;
      s->file = "[builtin]";
      s->func_from = LJM_FUNC_BUILTIN;
    } else {
      s->func_line = r->proto->firstline;
      name_function(m, r->proto, s);
    }
    break;
  }
  default:
    if (r->sym.name) {
      s->symbol_addr = r->sym.addr;
      s->func = r->sym.name;
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

uint32_t ljm_names_label_site(LjmModel *m, uint32_t name)
{
  uint32_t si = site_slot(m);
  if (si == NONE) return NONE;
  const LjmStrEntry *e = ljm_strtab_get(&m->str, name);
  LjmSite *s = &m->sites[si];
  s->kind = LJM_SITE_LABEL;
  s->name = s->func = e->s;
  s->name_len = e->len;
  s->file = s->chunk = "";
  s->trace_start = LJM_NO_SITE;
  m->sitex[si].loc = NONE;
  m->sitex[si].name = name;
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
      if (ss != NONE) name_trace(m, &m->sites[si], &m->sites[ss]);
    }
  }
  m->locs[li].site = si;
  return si;
}
