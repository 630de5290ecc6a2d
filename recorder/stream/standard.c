/* standard.c -- one ljm stream: its buffer and what it has announced. */
#include "recorder/stream/standard.h"

#include <stdio.h>
#include <string.h>

#include "recorder/base/elf_symbols.h"
#include "recorder/vm/cfunc_names.h"

#define SYM_LFUNC 0x00
#define SYM_CFUNC 0x01
#define SYM_TRACE 0x02
#define SYM_FINAL 0x80
#define EV_SYMTAB 0x00
#define EV_EPILOGUE 0x80

int rec_stream_init(RecStream *s, size_t bufsize, RecSinkFn sink, void *ud)
{
  memset(s, 0, sizeof(*s));
  rec_map_init(&s->protos);
  rec_map_init(&s->traces);
  rec_map_init(&s->cfuncs);
  return rec_buf_init(&s->out, bufsize, sink, ud);
}

void rec_stream_free(RecStream *s)
{
  if (s->hooks) s->hooks->free(s);
  rec_buf_free(&s->out);
  rec_map_free(&s->protos);
  rec_map_free(&s->traces);
  rec_map_free(&s->cfuncs);
}

#define proto_id rec_lj_proto_id
#define trace_id rec_lj_trace_id

/* Body of a sym-lfunc entry: address, chunk name, first line. */
static void put_proto(RecBuf *b, const GCproto *pt)
{
  const char *name = proto_chunknamestr(pt);
  rec_buf_need(b, 10);
  rec_buf_uleb(b, (uint64_t)(uintptr_t)pt);
  /* strlen, as the reference: a chunk name is cut at an embedded NUL. */
  rec_buf_str(b, name, strlen(name));
  rec_buf_need(b, 10);
  rec_buf_uleb(b, (uint64_t)(int64_t)pt->firstline);  /* -1 -> 2^64-1 */
}

/* Body of a sym-trace entry: number, start prototype, start line. */
static void put_trace(RecBuf *b, const GCtrace *T)
{
  rec_buf_need(b, 30);
  rec_buf_uleb(b, T->traceno);
  rec_buf_uleb(b, (uint64_t)(uintptr_t)gcref(T->startpt));
  rec_buf_uleb(b, (uint64_t)(int64_t)rec_lj_trace_line(T));
}

void rec_stream_begin(RecStream *s, global_State *g)
{
  static const uint8_t ljs[] = {'l', 'j', 's', 3, 0, 0, 0};
  static const uint8_t ljm[] = {'l', 'j', 'm', 3, 0, 0, 0};
  RecBuf *b = &s->out;
  GCobj *o;
  size_t i;

  if (s->hooks) s->hooks->start(s);
  rec_buf_need(b, sizeof(ljs));
  memcpy(b->p, ljs, sizeof(ljs));
  b->p += sizeof(ljs);
  /* Every prototype and trace alive now (newest first, as the reference). */
  for (o = gcref(g->gc.root); o; o = gcref(o->gch.nextgc)) {
    if (isdead(g, o)) continue;  /* swept soon; its strings may be freed already */
    if (o->gch.gct == (uint8_t)~LJ_TPROTO) {
      rec_buf_need(b, 1);
      rec_buf_byte(b, SYM_LFUNC);
      put_proto(b, &o->pt);
      rec_map_put(&s->protos, (uint64_t)(uintptr_t)o, proto_id(&o->pt));
    } else if (o->gch.gct == (uint8_t)~LJ_TTRACE) {
      GCtrace *T = (GCtrace *)o;
      rec_buf_need(b, 1);
      rec_buf_byte(b, SYM_TRACE);
      put_trace(b, T);
      rec_map_put(&s->traces, T->traceno, trace_id(T));
    }
  }
  rec_csym_refresh();
  for (i = 0; i < rec_csym_nobjs(); i++) rec_csym_emit(b, i, SYM_CFUNC);
  s->csym_objs = rec_csym_nobjs();
  rec_buf_need(b, 1 + sizeof(ljm));
  rec_buf_byte(b, SYM_FINAL);
  memcpy(b->p, ljm, sizeof(ljm));
  b->p[4] = (uint8_t)(s->ext_flags | (s->sample_rate ? REC_EXT_SAMPLED : 0));
  b->p += sizeof(ljm);
  if (s->sample_rate) {  /* first item of a sampled stream: its rate */
    rec_buf_need(b, 11);
    rec_buf_byte(b, REC_IT_RATE);
    rec_buf_uleb(b, s->sample_rate);
  }
  if (s->hooks) s->hooks->begin(s, g);
}

/* Cold paths stay out of line: the event writer must stay small. */
#define REC_COLD __attribute__((noinline, cold))

static REC_COLD void announce_proto(RecStream *s, const GCproto *pt)
{
  uint64_t id;
  RecMapEntry *e;
  id = proto_id(pt);
  e = rec_map_get(&s->protos, (uint64_t)(uintptr_t)pt);
  s->last_pt = pt;
  s->last_pt_len =
      (uint8_t)(rec_uleb_put(s->last_pt_enc, (uint64_t)(uintptr_t)pt) - s->last_pt_enc);
  if (e && e->val == id) return;
  rec_buf_need(&s->out, 1);
  rec_buf_byte(&s->out, EV_SYMTAB | REC_SRC_LFUNC);
  put_proto(&s->out, pt);
  rec_map_put(&s->protos, (uint64_t)(uintptr_t)pt, id);
  if (s->hooks) s->hooks->proto(s, pt);
}

REC_COLD void rec_stream_announce_trace(RecStream *s, global_State *g, int32_t n)
{
  GCtrace *T = rec_lj_trace(g, n);
  RecMapEntry *e;
  if (!T || T->traceno != (TraceNo1)n) return;  /* unknown: plain TRACE [n] */
  e = rec_map_get(&s->traces, (uint64_t)n);
  if (e && e->val == trace_id(T)) return;
  {  /* its start prototype must be known to name the trace */
    const GCproto *pt = &gcref(T->startpt)->pt;
    RecMapEntry *pe = rec_map_get(&s->protos, (uint64_t)(uintptr_t)pt);
    if (!pe || pe->val != proto_id(pt)) announce_proto(s, pt);
  }
  rec_buf_need(&s->out, 1);
  rec_buf_byte(&s->out, EV_SYMTAB | REC_SRC_TRACE);
  put_trace(&s->out, T);
  rec_map_put(&s->traces, (uint64_t)n, trace_id(T));
}

/* A C address seen for the first time: write the symbols of objects
** loaded since the stream began; if no symbol covers the address, name
** it by its Lua name ("package.loaders[2]") or after its object
** ("libfoo.so+0x1234") rather than leave the reader to pick the nearest
** lower symbol of some other function. */
REC_COLD void rec_stream_announce_cfunc(RecStream *s, global_State *g, uint64_t addr)
{
  RecBuf *b = &s->out;
  char name[256];
  if (rec_map_get(&s->cfuncs, addr)) return;
  rec_map_put(&s->cfuncs, addr, 1);
  rec_csym_refresh();
  for (; s->csym_objs < rec_csym_nobjs(); s->csym_objs++)
    rec_csym_emit(b, s->csym_objs, EV_SYMTAB | REC_SRC_CFUNC);
  if (rec_csym_covers(addr)) return;
  {
    const char *lname = rec_cname_get(addr);
    if (!lname && g) {  /* a C module required since the last scan */
      rec_cname_rescan(g);
      lname = rec_cname_get(addr);
    }
    if (!lname && s->ext) lname = rec_cname_get_ff(addr);
    if (lname) snprintf(name, sizeof(name), "%s", lname);
    else if (!rec_csym_describe(addr, name, sizeof(name))) return;
  }
  rec_buf_need(b, 11);
  rec_buf_byte(b, EV_SYMTAB | REC_SRC_CFUNC);
  rec_buf_uleb(b, addr);
  rec_buf_str(b, name, strlen(name));
}

REC_COLD void rec_stream_announce_proto(RecStream *s, const GCproto *pt)
{
  announce_proto(s, pt);
}

void rec_stream_event_out(RecStream *s, const RecLoc *loc, int ev, const void *optr,
                          uint64_t osize, const void *nptr, uint64_t nsize)
{
  rec_stream_event(s, loc, ev, optr, osize, nptr, nsize);
}

int rec_stream_end(RecStream *s)
{
  if (s->hooks) s->hooks->end(s);
  rec_buf_need(&s->out, 1);
  rec_buf_byte(&s->out, EV_EPILOGUE);
  return rec_buf_sync(&s->out);
}
