/* heapsnapshot.c -- a heap snapshot (model/ljm_heapgraph.h) as Chrome
** DevTools' .heapsnapshot: the JSON whose "snapshot.meta" block names the
** fields of the flat "nodes" and "edges" arrays and whose "strings" array
** holds every name. The Memory panel then shows the summary by constructor
** (a table's metatable __name, else its Lua type), retainers and
** dominators of the Lua heap. The field lists of the meta block are the
** format: nodes are [type, name, id, self_size, edge_count, trace_node_id,
** detachedness], edges [type, name_or_index, to_node] with to_node the
** index of the target's first field. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/json_str.h"
#include "exporters/ljm_exporter.h"
#include "model/ljm_heapgraph.h"
#include "model/ljm_model.h"

#define NODE_FIELDS 7

/* Node and edge types, as indexes into the meta block's lists. */
enum { NT_HIDDEN, NT_ARRAY, NT_STRING, NT_OBJECT, NT_CODE, NT_CLOSURE, NT_REGEXP, NT_NUMBER,
       NT_NATIVE, NT_SYNTHETIC };
enum { ET_CONTEXT, ET_ELEMENT, ET_PROPERTY, ET_INTERNAL, ET_HIDDEN, ET_SHORTCUT, ET_WEAK };

/* The strings table: names interned by content. */
typedef struct Strings {
  const char **s;
  uint32_t n, cap;
  uint32_t *slot;   /* open addressing: index + 1, 0 empty */
  size_t nslot;
  char **owned;     /* names made here */
  uint32_t nowned, capowned;
  int oom;
} Strings;

static uint64_t hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static uint32_t intern(Strings *t, const char *s)
{
  if (2 * ((size_t)t->n + 1) > t->nslot) {
    size_t ns = t->nslot ? t->nslot * 2 : 1024;
    uint32_t *slot = calloc(ns, sizeof(*slot));
    if (!slot) {
      t->oom = 1;
      return 0;
    }
    for (uint32_t i = 0; i < t->n; i++) {
      size_t j = hash(t->s[i]) & (ns - 1);
      while (slot[j]) j = (j + 1) & (ns - 1);
      slot[j] = i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = ns;
  }
  size_t j = hash(s) & (t->nslot - 1);
  while (t->slot[j]) {
    if (!strcmp(t->s[t->slot[j] - 1], s)) return t->slot[j] - 1;
    j = (j + 1) & (t->nslot - 1);
  }
  if (t->n == t->cap) {
    uint32_t nc = t->cap ? t->cap * 2 : 1024;
    const char **ns = realloc(t->s, nc * sizeof(*ns));
    if (!ns) {
      t->oom = 1;
      return 0;
    }
    t->s = ns;
    t->cap = nc;
  }
  t->s[t->n] = s;
  t->slot[j] = t->n + 1;
  return t->n++;
}

/* Interns a name made here (kept until the strings are written). */
static uint32_t intern_copy(Strings *t, const char *s)
{
  if (t->nowned == t->capowned) {
    uint32_t nc = t->capowned ? t->capowned * 2 : 256;
    char **no = realloc(t->owned, nc * sizeof(*no));
    if (!no) {
      t->oom = 1;
      return 0;
    }
    t->owned = no;
    t->capowned = nc;
  }
  char *c = strdup(s);
  if (!c) {
    t->oom = 1;
    return 0;
  }
  t->owned[t->nowned++] = c;
  return intern(t, c);
}

static uint32_t edge_end(const LjmHeapGraph *g, uint32_t i)
{
  return i + 1 < g->nobj ? g->obj[i + 1].first_edge : g->nref;
}

/* The node's type and name: the name is what the Summary groups by. */
static void node_kind(const LjmHeapGraph *g, uint32_t i, Strings *t, uint32_t *mtname,
                      int *type, uint32_t *name)
{
  const LjmHeapObj *o = &g->obj[i];
  char buf[160];
  switch (o->type) {
  case LJH_ROOT:
    *type = NT_SYNTHETIC;
    *name = intern(t, "(Lua roots)");
    return;
  case LJH_STR:
    *type = NT_STRING;
    *name = intern(t, ljm_heapgraph_label(g, i));
    return;
  case LJH_LFUNC:
  case LJH_CFUNC:
    /* Named as the profiles name it (string.rep, mymod.new): by where it
    ** is kept; else a Lua function by its chunk and line. */
    *type = NT_CLOSURE;
    if (!*ljm_heapgraph_func_name(g, i, buf, sizeof(buf))) {
      const char *l = ljm_heapgraph_label(g, i);
      size_t n = strlen(l);
      if (o->type == LJH_CFUNC) snprintf(buf, sizeof(buf), "C function %s", l);
      else if (n > 2 && !strcmp(l + n - 2, ":0"))  /* "@app.lua:0": the main chunk */
        snprintf(buf, sizeof(buf), "main chunk (%.*s)", (int)(n - 2 - (*l == '@')), l + (*l == '@'));
      else if (n > 3 && !strcmp(l + n - 3, ":-1") && ljm_builtin_name(l, n - 3))
        snprintf(buf, sizeof(buf), "%s", ljm_builtin_name(l, n - 3));  /* "len:-1" */
      else snprintf(buf, sizeof(buf), "%s", l + (*l == '@'));
    }
    *name = intern_copy(t, buf);
    return;
  case LJH_PROTO:
  case LJH_TRACE: {
    *type = NT_CODE;
    const char *l = ljm_heapgraph_label(g, i), *lib;
    size_t n = strlen(l);
    /* A built-in in bytecode, "len:-1": as its library names it. */
    if (n > 3 && !strcmp(l + n - 3, ":-1") && (lib = ljm_builtin_name(l, n - 3)))
      *name = intern(t, lib);
    else
      *name = intern(t, l);
    return;
  }
  case LJH_TAB:
  case LJH_UDATA:
    *type = NT_OBJECT;
    *name = intern(t, ljm_heapgraph_type_name(g, i, mtname));
    return;
  default:
    *type = NT_OBJECT;
    *name = intern(t, ljh_type_name((LjhType)o->type));
  }
}

/* An edge's type and name (a strings index, or the element index). */
static void edge_kind(const LjmHeapGraph *g, const LjmHeapRef *r, Strings *t, int *type,
                      uint64_t *name)
{
  char buf[96];
  switch (r->kind) {
  case LJH_EDGE_STRKEY:
    *type = ET_PROPERTY;
    *name = intern(t, ljm_heapgraph_label(g, (uint32_t)r->what));
    break;
  case LJH_EDGE_INDEX:
    *type = ET_ELEMENT;
    *name = r->what;
    break;
  case LJH_EDGE_OBJKEY:
    snprintf(buf, sizeof(buf), "[%s]", ljh_type_name((LjhType)g->obj[r->what].type));
    *type = ET_INTERNAL;
    *name = intern_copy(t, buf);
    break;
  case LJH_EDGE_KEY:
    *type = ET_INTERNAL;
    *name = intern(t, "(key)");
    break;
  default:
    *type = r->from == 0 ? ET_SHORTCUT : ET_INTERNAL;
    *name = intern(t, g->labels + r->what);
  }
  if (r->weak) *type = ET_WEAK;
}

/* Right after a write: the errno of the first failed one (later calls may
** change errno; the stream only keeps its error flag). */
static void note_werr(FILE *f, int *werr)
{
  if (!*werr && ferror(f)) *werr = errno ? errno : EIO;
}

/* Writes g to f; 0, or -1 with err filled (out of memory, write error). */
static int heapsnapshot_write(const LjmHeapGraph *g, const LjmExportOptions *o, FILE *f, char *err,
                              size_t errlen)
{
  (void)o;
  int werr = 0;
  Strings t;
  memset(&t, 0, sizeof(t));
  intern(&t, "");
  fprintf(f, "{\"snapshot\":{\"meta\":{"
             "\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\","
             "\"trace_node_id\",\"detachedness\"],"
             "\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\",\"code\",\"closure\","
             "\"regexp\",\"number\",\"native\",\"synthetic\",\"concatenated string\","
             "\"sliced string\",\"symbol\",\"bigint\",\"object shape\"],"
             "\"string\",\"number\",\"number\",\"number\",\"number\",\"number\"],"
             "\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],"
             "\"edge_types\":[[\"context\",\"element\",\"property\",\"internal\",\"hidden\","
             "\"shortcut\",\"weak\"],\"string_or_number\",\"node\"],"
             "\"trace_function_info_fields\":[\"function_id\",\"name\",\"script_name\","
             "\"script_id\",\"line\",\"column\"],"
             "\"trace_node_fields\":[\"id\",\"function_info_index\",\"count\",\"size\","
             "\"children\"],"
             "\"sample_fields\":[\"timestamp_us\",\"last_assigned_id\"],"
             "\"location_fields\":[\"object_index\",\"script_id\",\"line\",\"column\"]},"
             "\"node_count\":%" PRIu32 ",\"edge_count\":%" PRIu32 ",\"trace_function_count\":0},\n"
             "\"nodes\":[",
          g->nobj, g->nref);
  note_werr(f, &werr);
  uint32_t *mtname = calloc(g->nobj ? g->nobj : 1, sizeof(*mtname));
  if (!mtname) t.oom = 1;
  for (uint32_t i = 0; i < g->nobj && mtname; i++) {
    int type;
    uint32_t name;
    node_kind(g, i, &t, mtname, &type, &name);
    /* Ids: odd, as V8 gives heap objects; the root is 1. */
    fprintf(f, "%s%d,%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu32 ",0,0", i ? ",\n" : "", type,
            name, 2 * (uint64_t)i + 1, g->obj[i].size, edge_end(g, i) - g->obj[i].first_edge);
    note_werr(f, &werr);
  }
  free(mtname);
  fprintf(f, "],\n\"edges\":[");
  for (uint32_t e = 0; e < g->nref; e++) {
    int type;
    uint64_t name;
    edge_kind(g, &g->ref[e], &t, &type, &name);
    fprintf(f, "%s%d,%" PRIu64 ",%" PRIu64, e ? ",\n" : "", type, name,
            (uint64_t)g->ref[e].to * NODE_FIELDS);
    note_werr(f, &werr);
  }
  fprintf(f, "],\n\"trace_function_infos\":[],\"trace_tree\":[],\"samples\":[],\"locations\":[],"
             "\n\"strings\":[");
  LjmBuf out = {0}, tmp = {0};
  for (uint32_t i = 0; i < t.n; i++) {
    if (i) fputs(",\n", f);
    ljm_json_fputs(f, &out, &tmp, t.s[i]);
    note_werr(f, &werr);
  }
  ljm_buf_free(&out);
  ljm_buf_free(&tmp);
  fprintf(f, "]}\n");
  note_werr(f, &werr);
  int oom = t.oom;
  for (uint32_t i = 0; i < t.nowned; i++) free(t.owned[i]);
  free(t.owned);
  free(t.s);
  free(t.slot);
  if (oom) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (ferror(f)) {
    snprintf(err, errlen, "write error: %s", strerror(werr ? werr : EIO));
    return -1;
  }
  return 0;
}

const LjmExporter ljm_exporter_heapsnapshot = {
  .name = "heapsnapshot", .command = "convert", .reads = LJM_READS_SNAPSHOT,
  .summary = "a heap snapshot (.ljh) for Chrome DevTools' Memory panel",
  .suffixes = (const char *const[]){".heapsnapshot", NULL}, .write_heap = heapsnapshot_write,
};
