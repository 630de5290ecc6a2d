/* ljm_symbols.c -- Lua prototypes, traces, C symbols and chunk aliases.
**
** Later entries for the same key replace earlier ones (as the reference). Any
** change bumps the generation so cached location names are recomputed. */
#include <stdio.h>
#include <string.h>

#include "model/ljm_model_int.h"

const Proto *ljm_sym_find_proto(const LjmModel *m, uint64_t addr)
{
  uint32_t i = ljm_hmap_get(&m->proto_by_addr, addr);
  return i == NONE ? NULL : &m->protos[i];
}

/* A chunk with a newline is shown as "function_alias_<k>", one per text;
** others as they are, cut when long. */
static uint32_t shown_chunk(LjmModel *m, uint32_t chunk, int *aliased)
{
  const LjmStrEntry *e = ljm_strtab_get(&m->str, chunk);
  *aliased = memchr(e->s, '\n', e->len) != NULL;
  if (!*aliased) return e->len > LJM_NAME_SHOWN_MAX ? ljm_model_intern_shown(m, e->s, e->len) : chunk;
  uint32_t a = ljm_hmap_get(&m->alias_by_chunk, chunk);
  if (a == NONE) {
    if (m->naliases == m->capaliases) {
      LjmAlias *al = ljm_model_grow(m, m->aliases, &m->capaliases, sizeof(*al));
      if (!al) return chunk;
      m->aliases = al;
    }
    a = m->naliases++;
    /* Re-fetch: interning may have moved the entry array. */
    e = ljm_strtab_get(&m->str, chunk);
    m->aliases[a].number = a + 1;
    m->aliases[a].text = (LjmStr){ e->s, e->len };
    if (ljm_hmap_put(&m->alias_by_chunk, chunk, a) != 0) m->oom = 1;
  }
  char name[40];
  int n = snprintf(name, sizeof(name), "function_alias_%u", a + 1);
  return ljm_model_intern(m, name, (size_t)n);
}

void ljm_sym_proto(LjmModel *m, uint64_t addr, const char *chunk, size_t len,
                   uint64_t firstline)
{
  uint32_t cid = ljm_model_intern(m, chunk, len);
  if (cid == NONE) return;
  int aliased;
  uint32_t shown = shown_chunk(m, cid, &aliased);
  if (shown == NONE) return;
  m->totals.protos++;
  uint32_t i = ljm_hmap_get(&m->proto_by_addr, addr);
  if (i != NONE) {
    Proto *p = &m->protos[i];
    if (p->chunk != cid || p->firstline != firstline) {
      *p = (Proto){ cid, shown, firstline, aliased, NONE };
      m->gen++;
    }
    p->defname = NONE;  /* another prototype: named by its own 0x25 */
    return;
  }
  if (m->nprotos == m->capprotos) {
    Proto *ps = ljm_model_grow(m, m->protos, &m->capprotos, sizeof(*ps));
    if (!ps) return;
    m->protos = ps;
  }
  m->protos[m->nprotos] = (Proto){ cid, shown, firstline, aliased, NONE };
  if (ljm_hmap_put(&m->proto_by_addr, addr, m->nprotos++) != 0) m->oom = 1;
  m->gen++;
}

void ljm_sym_cfunc(LjmModel *m, uint64_t addr, const char *name, size_t len)
{
  m->totals.cfuncs++;
  char cut[LJM_NAME_SHOWN_MAX + 3];
  name = ljm_model_shown(name, &len, cut);
  int added;
  LjmCsym *e = ljm_csyms_put(&m->csyms, addr, &added);
  if (!e) {
    m->oom = 1;
    return;
  }
  if (!added && e->len == len && memcmp(e->name, name, len) == 0) return;  /* a re-dump */
  /* A new address's name is copied (no hashing: most are never asked for); a
  ** changed one is interned, as a writer that re-dumps may give one address
  ** each of many names in turn (Tarantool's: an object's undefined symbols all
  ** at its load address, before every C event): bounded by the names. */
  const char *copy = NULL;
  if (added) {
    copy = ljm_strtab_copy(&m->str, name, len);
  } else {
    uint32_t id = ljm_strtab_intern(&m->str, name, len);
    if (id != NONE) copy = ljm_strtab_get(&m->str, id)->s;
  }
  if (!copy) {
    m->oom = 1;
    copy = "";
    len = 0;
  }
  e->name = copy;
  e->len = len;
  m->gen++;
}

void ljm_sym_trace(LjmModel *m, uint64_t traceno, uint64_t proto, uint64_t line)
{
  m->totals.traces++;
  uint32_t i = ljm_hmap_get(&m->trace_by_no, traceno);
  if (i != NONE) {
    Trace *t = &m->traces[i];
    if (t->proto != proto || t->line != line) {
      *t = (Trace){ proto, line };
      m->gen++;
    }
    return;
  }
  if (m->ntraces == m->captraces) {
    Trace *ts = ljm_model_grow(m, m->traces, &m->captraces, sizeof(*ts));
    if (!ts) return;
    m->traces = ts;
  }
  m->traces[m->ntraces] = (Trace){ proto, line };
  if (ljm_hmap_put(&m->trace_by_no, traceno, m->ntraces++) != 0) m->oom = 1;
  m->gen++;
}

void ljm_sym_proto_name(LjmModel *m, uint64_t addr, const char *name, size_t len)
{
  uint32_t i = ljm_hmap_get(&m->proto_by_addr, addr);
  if (i == NONE || len == 0 || len > LJM_NAME_SHOWN_MAX) return;
  uint32_t id = ljm_model_intern(m, name, len);
  if (id != NONE) m->protos[i].defname = id;
}
