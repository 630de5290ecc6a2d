/* check_core.c -- the Lua module ljm.check_core: reads back a recording
** that ljm.check made (check/ljm/check.lua) and returns what its reports
** name, as Lua tables.
**
**   core.analyze(path, what, max [, own]) -> table | nil, message
**     what  "inuse": the blocks live at the end of the recording (what the
**           recorded iterations left behind); "peak": the blocks live when
**           the recorded heap peaked
**     max   rows of each list (lines, stacks), largest first
**     own   the checker's source file: blocks whose innermost Lua frame
**           with a file is there (its collections, its loop) are left out
**   table:
**     events      allocation events recorded
**     heap_peak   most bytes the Lua heap held above where it stood when the
**                 recording began (every allocation minus every free, freed
**                 blocks from before the recording included)
**     bytes, blocks   totals of the figure (inuse or peak), all blocks
**     program_bytes, program_blocks   the same without the checker's own
**     lines       { {name = "leaky.lua:12", func = "leak", bytes, blocks}, ... }
**     stacks      { {frames = {"main chunk (t.lua)", ..., "t.lua:12"},
**                    files = {"t.lua", ...} (each frame's source file, or ""),
**                    bytes, blocks}, ... }
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "decoder/ljm_decoder.h"
#include "exporters/common/frames.h"
#include "model/ljm_model.h"
#include "model/ljm_model_load.h"

/* The heap's running balance, for heap_peak. */
typedef struct Balance {
  int64_t now, peak;
} Balance;

static void on_event(void *ud, const LjmModel *m, const LjmLiveEvent *ev)
{
  Balance *b = ud;
  (void)m;
  if (ev->kind != LJM_EV_ALLOC) b->now -= (int64_t)ev->old_size;
  if (ev->kind != LJM_EV_FREE) b->now += (int64_t)ev->new_size;
  if (b->now > b->peak) b->peak = b->now;
}

/* A row: an id (site or node) and its figure. */
typedef struct Row {
  uint32_t id;
  uint64_t bytes, blocks;
} Row;

static int row_order(const void *pa, const void *pb)
{
  const Row *a = pa, *b = pb;
  if (a->bytes != b->bytes) return a->bytes < b->bytes ? 1 : -1;
  return (a->id > b->id) - (a->id < b->id);
}

static void figure(const LjmFigures *f, int peak, uint64_t *bytes, uint64_t *blocks)
{
  *bytes = peak ? f->peak_bytes : f->inuse_bytes;
  *blocks = peak ? f->peak_count : f->inuse_count;
}

/* Which nodes are the checker's own: their innermost Lua frame with a file
** is in the file 'own' (a collection it runs, its loop). Nodes come parents
** first, so each takes its own frame's verdict or its parent's. *out: a
** flag per node (freed by the caller); -1 when out of memory. */
static int own_nodes(const LjmModel *m, const char *own, uint8_t **out)
{
  size_t n = ljm_model_nnodes(m);
  uint8_t *o = calloc(n ? n : 1, 1);
  if (!o) return -1;
  for (size_t i = 0; i < n; i++) {
    const LjmNode *nd = ljm_model_node(m, (uint32_t)i);
    const LjmSite *s = nd->site != LJM_NO_SITE ? ljm_model_site(m, nd->site) : NULL;
    if (nd->kind == LJM_NODE_FRAME && s && s->kind == LJM_SITE_LUA && s->file[0])
      o[i] = own && !strcmp(s->file, own);
    else if (nd->parent != LJM_NO_NODE)
      o[i] = o[nd->parent];
  }
  *out = o;
  return 0;
}

/* The rows with a non-zero figure, largest first, in *out (freed by the
** caller): one per node not the checker's own, or (sites) one per site
** summing those nodes; their count, or -1 when out of memory. */
static long rows_of(const LjmModel *m, const uint8_t *own, int sites, int peak, Row **out)
{
  size_t nn = ljm_model_nnodes(m), n = sites ? ljm_model_nsites(m) : nn;
  Row *r = calloc(n ? n : 1, sizeof(*r));
  size_t k = 0;
  if (!r) return -1;
  for (size_t i = 0; i < n; i++) r[i].id = (uint32_t)i;
  for (size_t i = 0; i < nn; i++) {
    const LjmNode *nd = ljm_model_node(m, (uint32_t)i);
    uint64_t bytes, blocks;
    if (own[i] || (sites && nd->site == LJM_NO_SITE)) continue;
    figure(ljm_model_node_self(m, (uint32_t)i), peak, &bytes, &blocks);
    Row *x = &r[sites ? nd->site : i];
    x->bytes += bytes;
    x->blocks += blocks;
  }
  for (size_t i = 0; i < n; i++)
    if (r[i].bytes) r[k++] = r[i];
  qsort(r, k, sizeof(*r), row_order);
  *out = r;
  return (long)k;
}

static void set_num(lua_State *L, const char *key, double v)
{
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}

/* A site as a person reads it: "file.lua:12", a C function's name, "INTERNAL". */
static void push_site_name(lua_State *L, const LjmSite *s)
{
  if (s->kind == LJM_SITE_LUA && s->file[0])
    lua_pushfstring(L, "%s:%d", s->file, (int)s->line);
  else
    lua_pushstring(L, s->func && s->func[0] ? s->func : s->name);
}

static void push_lines(lua_State *L, const LjmModel *m, const Row *r, long n, int max)
{
  lua_newtable(L);
  for (long i = 0; i < n && i < max; i++) {
    const LjmSite *s = ljm_model_site(m, r[i].id);
    lua_newtable(L);
    push_site_name(L, s);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, s->func ? s->func : "");
    lua_setfield(L, -2, "func");
    set_num(L, "bytes", (double)r[i].bytes);
    set_num(L, "blocks", (double)r[i].blocks);
    lua_rawseti(L, -2, (int)i + 1);
  }
}

static int push_stacks(lua_State *L, const LjmModel *m, const Row *r, long n, int max)
{
  LjmFrames f;
  memset(&f, 0, sizeof(f));
  lua_newtable(L);
  for (long i = 0; i < n && i < max; i++) {
    ljm_frames_of(m, r[i].id, &f);
    if (f.oom) break;
    lua_newtable(L);
    lua_newtable(L);
    for (size_t k = 0; k < f.n; k++) {
      lua_pushlstring(L, (const char *)f.text.p + f.off[k], f.len[k]);
      lua_rawseti(L, -2, (int)k + 1);
    }
    lua_setfield(L, -2, "frames");
    lua_newtable(L);
    for (size_t k = 0; k < f.n; k++) {
      lua_pushstring(L, f.file[k] ? f.file[k] : "");
      lua_rawseti(L, -2, (int)k + 1);
    }
    lua_setfield(L, -2, "files");
    set_num(L, "bytes", (double)r[i].bytes);
    set_num(L, "blocks", (double)r[i].blocks);
    lua_rawseti(L, -2, (int)i + 1);
  }
  int oom = f.oom;
  ljm_frames_free(&f);
  return oom ? -1 : 0;
}

static int analyze(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  const char *what = luaL_checkstring(L, 2);
  int max = (int)luaL_optinteger(L, 3, 5);
  const char *own = luaL_optstring(L, 4, NULL);
  int peak = !strcmp(what, "peak");
  if (!peak && strcmp(what, "inuse")) return luaL_argerror(L, 2, "'inuse' or 'peak'");
  if (max < 0) max = 0;
  LjmDiag d;
  LjmInput *in = ljm_input_open(path, &d);
  if (!in) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, d.msg);
    return 2;
  }
  LjmModel *m = ljm_model_new();
  Balance bal = { 0, 0 };
  LjmListener l = { on_event, NULL };
  if (!m) {
    ljm_input_close(in);
    return luaL_error(L, "ljm.check: out of memory");
  }
  ljm_model_set_listener(m, &l, &bal);
  LjmStatus st = ljm_model_load(m, in, path, &d);
  ljm_input_close(in);
  if (st != LJM_OK) {
    char line[512];
    ljm_diag_format(&d, path, line, sizeof(line));
    ljm_model_free(m);
    lua_pushnil(L);
    lua_pushstring(L, line);
    return 2;
  }
  Row *sites = NULL, *nodes = NULL;
  uint8_t *mine = NULL;
  long ns = own_nodes(m, own, &mine) ? -1 : rows_of(m, mine, 1, peak, &sites);
  long nn = ns < 0 ? -1 : rows_of(m, mine, 0, peak, &nodes);
  const LjmTotals *t = ljm_model_totals(m);
  uint64_t bytes, blocks;
  figure(&t->fig, peak, &bytes, &blocks);
  int bad = ns < 0 || nn < 0;
  if (!bad) {
    lua_newtable(L);
    set_num(L, "events", (double)t->events);
    set_num(L, "heap_peak", (double)bal.peak);
    set_num(L, "bytes", (double)bytes);
    set_num(L, "blocks", (double)blocks);
    uint64_t pb = 0, pk = 0;  /* the program's: all but the checker's own */
    for (long i = 0; i < nn; i++) {
      pb += nodes[i].bytes;
      pk += nodes[i].blocks;
    }
    set_num(L, "program_bytes", (double)pb);
    set_num(L, "program_blocks", (double)pk);
    push_lines(L, m, sites, ns, max);
    lua_setfield(L, -2, "lines");
    bad = push_stacks(L, m, nodes, nn, max) != 0;
    lua_setfield(L, -2, "stacks");
  }
  free(sites);
  free(nodes);
  free(mine);
  ljm_model_free(m);
  if (bad) return luaL_error(L, "ljm.check: out of memory");
  return 1;
}

__attribute__((visibility("default"))) int luaopen_ljm_check_core(lua_State *L);

int luaopen_ljm_check_core(lua_State *L)
{
  static const luaL_Reg funcs[] = {
    {"analyze", analyze},
    {NULL, NULL}
  };
  lua_newtable(L);
  luaL_register(L, NULL, funcs);
  return 1;
}
