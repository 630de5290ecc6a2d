/* speedscope.c -- speedscope's own JSON file format
** (https://www.speedscope.app/file-format-schema.json), one profile per figure.
**
** A streaming exporter: it sees every allocation event in stream order with
** its call-tree node and time, and keeps "runs": the allocation events of
** one node within a slice of the stream (SS_SLICE_EVENTS events, and one
** time mark), in the order the nodes first allocate in the slice. So the
** file and the exporter's memory follow the nodes per slice, not the events
** (a run per stretch of one stack would make a sample of nearly every event
** of a stream whose stacks alternate, as most programs' do). Each run
** carries five figures:
**
**   alloc_bytes, alloc_count   the ALLOC/REALLOC events of the run
**   inuse_bytes, inuse_count   those of its blocks still live at the end
**   peak_bytes                 those of its blocks live when the live total
**                              first reached its maximum
**   temp_count                 those of its blocks freed right after they
**                              were made (temporary allocations, LjmFigures;
**                              a sixth profile, where the model counts them)
**
** so every profile lists its samples in stream order, which is time order:
** speedscope's "Time Order" view shows when (in allocation order) memory
** was allocated, leaked or held at the peak, and its "Left Heavy" and
** "Sandwich" views add the same numbers up per stack. The live blocks are
** the model's: it cuts the stream into the same slices
** (ljm_model_set_slices) and charges each block to an owner of one slice,
** so a freed or dropped block's owner names its run, with no table of
** addresses here (a second copy of the model's address map would cost
** much of the export's time). The
** peak is found the same way the model finds it (live bytes first
** reaching their maximum); a run saves its live figure lazily, the first
** time it changes after a new peak.
**
** A stream with time marks (decoder/EXTENSION.md) gets one more profile,
** evented, in microseconds: the stacks of the allocation events on the real
** time axis. A time mark dates the events after it only to "less than
** 10 ms later", so the events between two marks are spread evenly over the
** time after the first mark, up to the next mark and at most 10 ms; the
** stretches with no event stay empty.
**
** Frames are named as exporters/common/frames.h names them (valid UTF-8,
** no control characters), with "file" (Lua chunks named '@file' or '=name')
** and "line" (the line of a line frame, the definition line of a function
** frame, 1 for a main chunk) where known. Frames with the same name, file
** and line are one.
*/
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporters/common/buf.h"
#include "exporters/common/frames.h"
#include "exporters/common/json_str.h"
#include "exporters/common/sampled.h"
#include "exporters/common/uniq.h"
#include "exporters/common/state.h"
#include "exporters/common/value.h"
#include "exporters/ljm_exporter.h"
#include "model/ljm_hmap.h"

#define SS_SCHEMA "https://www.speedscope.app/file-format-schema.json"
#define SS_SLICE_EVENTS 16384u  /* events of the stream per slice */
#define SS_MARK_SPAN_US 10000u  /* events come < 10 ms after their mark */
#define SS_NONE UINT64_MAX

/* -- Runs and the live blocks ------------------------------------------- */

typedef struct SsRun {
  uint32_t node;
  uint64_t slice;          /* the model's slice (ljm_model_set_slices) */
  uint64_t time;           /* its events' time mark (0 when none) */
  uint64_t alloc_count, alloc_bytes;
  uint64_t inuse_count, inuse_bytes;
  uint64_t temp_count;
  uint64_t stamp;          /* event index of the last change of inuse_bytes */
  uint64_t snap;           /* inuse_bytes at event snap_for (a peak) */
  uint64_t snap_for;
} SsRun;

/* The shared frame table and the frame path of every node used. */
typedef struct SsFrameTab {
  LjmUniq frames;        /* serialized frames */
  uint32_t *pool;          /* frame indices of the paths */
  size_t npool, cappool;
  size_t *node_off;        /* path of node i: pool[node_off[i] ..] */
  uint32_t *node_len;      /* its length; UINT32_MAX: not computed */
  uint32_t *thru;          /* frame node i's children go below (frames.h),
                              SS_NO_FRAME when none; SS_UNSET: not computed */
  uint32_t cut;            /* the "[...]" frame, SS_UNSET until used */
  size_t nnodes;
} SsFrameTab;

#define SS_UNSET UINT32_MAX
#define SS_NO_FRAME (UINT32_MAX - 1)

#define SS_MAX_RUNS (1u << 31)

typedef struct SsState {
  LjmExportBase base;
  SsRun *runs;
  size_t nruns, caprun;
  uint32_t *run_of;                /* owner -> its run + 1 (0: none yet) */
  size_t caprun_of;
  LjmHmap node_run;                /* node -> its latest run */
  uint64_t live_bytes, max_bytes, peak_at;  /* peak_at: SS_NONE until one */
  int oom;
} SsState;

static void *ss_begin(const LjmExportOptions *o, FILE *out, char *err, size_t errlen)
{
  SsState *st = ljm_export_state_new(sizeof(SsState), o, out, err, errlen);
  if (!st) return NULL;
  if (ljm_hmap_init(&st->node_run) != 0) {
    free(st);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  st->peak_at = SS_NONE;
  return st;
}

/* Before the live figure of r changes at event idx: keep its value at the
** current peak when this is its first change since that peak. */
static void run_touch(const SsState *st, SsRun *r, uint64_t idx)
{
  if (st->peak_at != SS_NONE && r->stamp <= st->peak_at && r->snap_for != st->peak_at) {
    r->snap = r->inuse_bytes;
    r->snap_for = st->peak_at;
  }
  r->stamp = idx;
}

/* Its live bytes when the live total peaked. */
static uint64_t run_peak(const SsState *st, const SsRun *r)
{
  if (st->peak_at == SS_NONE) return 0;
  if (r->stamp <= st->peak_at) return r->inuse_bytes;
  return r->snap_for == st->peak_at ? r->snap : 0;
}

/* The run of a block's owner (LJM_NO_OWNER: a block the model did not
** know), or NULL. */
static SsRun *run_of(const SsState *st, uint32_t owner)
{
  return owner < st->caprun_of && st->run_of[owner] ? &st->runs[st->run_of[owner] - 1] : NULL;
}

/* The run of a new block: its node's run in this event's slice, or a new
** one. The model gives blocks of different slices different owners. */
static SsRun *run_for(SsState *st, const LjmLiveEvent *ev)
{
  SsRun *r = run_of(st, ev->owner);
  if (r) return r;
  if (ev->owner == LJM_NO_OWNER) return NULL;
  if (ev->owner >= st->caprun_of) {
    size_t cap = st->caprun_of ? st->caprun_of : 256;
    while (cap <= ev->owner) cap *= 2;
    uint32_t *p = realloc(st->run_of, cap * sizeof(*p));
    if (!p) return NULL;
    memset(p + st->caprun_of, 0, (cap - st->caprun_of) * sizeof(*p));
    st->run_of = p;
    st->caprun_of = cap;
  }
  uint32_t known = ljm_hmap_get(&st->node_run, ev->node);
  if (known != LJM_HMAP_NONE && st->runs[known].slice == ev->slice) {
    st->run_of[ev->owner] = known + 1;  /* another site on the same stack */
    return &st->runs[known];
  }
  if (st->nruns == SS_MAX_RUNS) return NULL;
  if (st->nruns == st->caprun) {
    size_t cap = st->caprun ? st->caprun * 2 : 256;
    SsRun *p = realloc(st->runs, cap * sizeof(*p));
    if (!p) return NULL;
    st->runs = p;
    st->caprun = cap;
  }
  if (ljm_hmap_put(&st->node_run, ev->node, (uint32_t)st->nruns) != 0) return NULL;
  r = &st->runs[st->nruns++];
  memset(r, 0, sizeof(*r));
  r->node = ev->node;
  r->slice = ev->slice;
  r->time = ev->time == LJM_NO_TIME_US ? 0 : ev->time;
  r->stamp = ev->index;
  r->snap_for = st->peak_at;  /* held nothing at any earlier peak */
  st->run_of[ev->owner] = (uint32_t)st->nruns;
  return r;
}

/* A block of run r (NULL: unknown) goes away at event idx; it stood for
** count blocks (more than one in a sampled stream); temp: it was a
** temporary allocation. */
static void run_release(SsState *st, SsRun *r, uint64_t size, uint64_t count, uint64_t idx,
                        int temp)
{
  st->live_bytes -= size;
  if (!r) return;
  r->temp_count += (uint64_t)temp;
  run_touch(st, r, idx);
  r->inuse_bytes -= size;
  r->inuse_count -= count;
}

static void ss_on_event(void *p, const LjmModel *m, const LjmLiveEvent *ev)
{
  SsState *st = p;
  (void)m;
  if (st->oom) return;
  /* The model keeps the live blocks: a freed block's owner names its run. */
  if (ev->kind != LJM_EV_ALLOC && ev->old_owner != LJM_NO_OWNER)
    run_release(st, run_of(st, ev->old_owner), ev->old_size, ev->old_count, ev->index,
                (ev->temp & LJM_TEMP_OLD) != 0);
  if (ev->kind != LJM_EV_FREE) {
    if (ev->dropped_owner != LJM_NO_OWNER)  /* a block the stream overwrote */
      run_release(st, run_of(st, ev->dropped_owner), ev->dropped_size, ev->dropped_count,
                  ev->index, (ev->temp & LJM_TEMP_DROPPED) != 0);
    SsRun *r = run_for(st, ev);
    if (!r) {
      st->oom = 1;
      return;
    }
    if (ev->kind != LJM_EV_CARRIED) {  /* in use at a window's start: not allocated in it */
      r->alloc_count += ev->new_count;
      r->alloc_bytes += ev->new_size;
    }
    run_touch(st, r, ev->index);
    r->inuse_count += ev->new_count;
    r->inuse_bytes += ev->new_size;
    st->live_bytes += ev->new_size;
  }
  if (st->live_bytes > st->max_bytes) {
    st->max_bytes = st->live_bytes;
    st->peak_at = ev->index;
  }
}

/* -- Frames -------------------------------------------------------------- */

static int pool_push(SsFrameTab *t, uint32_t v)
{
  if (t->npool == t->cappool) {
    size_t cap = t->cappool ? t->cappool * 2 : 1024;
    uint32_t *p = realloc(t->pool, cap * sizeof(*p));
    if (!p) return -1;
    t->pool = p;
    t->cappool = cap;
  }
  t->pool[t->npool++] = v;
  return 0;
}

typedef struct SsScratch {
  LjmFrames fr;
  LjmBuf tmp;
} SsScratch;

/* The index of frame i of sc->fr in the shared table (added when new). */
static uint32_t frame_index(SsFrameTab *t, SsScratch *sc, size_t i)
{
  size_t start = t->frames.b.len;
  ljm_buf_puts(&t->frames.b, "{\"name\":");
  ljm_json_name(&t->frames.b, &sc->tmp, ljm_frame_s(&sc->fr, i), sc->fr.len[i]);
  if (sc->fr.file[i]) {
    ljm_buf_puts(&t->frames.b, ",\"file\":");
    ljm_json_name(&t->frames.b, &sc->tmp, sc->fr.file[i], strlen(sc->fr.file[i]));
  }
  if (sc->fr.line[i] > 0) ljm_buf_printf(&t->frames.b, ",\"line\":%" PRId64, sc->fr.line[i]);
  ljm_buf_putc(&t->frames.b, '}');
  return ljm_uniq_add(&t->frames, start);
}

/* The frame node id's children go below, made once per node. */
static uint32_t thru_frame(SsFrameTab *t, const LjmModel *m, uint32_t id, SsScratch *sc)
{
  if (t->thru[id] != SS_UNSET) return t->thru[id];
  size_t through = ljm_frames_step(m, id, &sc->fr);
  if (sc->fr.oom) return SS_UNSET;
  uint32_t k = through ? frame_index(t, sc, 0) : SS_NO_FRAME;
  return k == LJM_UNIQ_NONE ? SS_UNSET : (t->thru[id] = k);
}

/* Computes the path (frame indices, root first) of node id once: what
** ljm_frames_of gives, from frames made once per node (a frame's text is
** cleaned and looked up once, not once per path through it). */
static int tab_node(SsFrameTab *t, const LjmModel *m, uint32_t id, SsScratch *sc)
{
  uint32_t anc[LJM_FRAMES_SHOWN_MAX], na = 0, a;
  if (t->node_len[id] != UINT32_MAX) return 0;
  for (a = ljm_model_node(m, id)->parent; a != LJM_NO_NODE && na < LJM_FRAMES_SHOWN_MAX - 1;
       a = ljm_model_node(m, a)->parent)
    anc[na++] = a;
  t->node_off[id] = t->npool;
  if (a != LJM_NO_NODE) {  /* deeper than shown: "[...]" first, as frames.h */
    uint32_t root = ljm_model_node_group(m, id), k;  /* below a grouped path's label */
    if (root != LJM_NO_NODE &&
        ((k = thru_frame(t, m, root, sc)) == SS_UNSET || (k != SS_NO_FRAME && pool_push(t, k))))
      return -1;
    if (t->cut == SS_UNSET) {
      size_t start = t->frames.b.len;
      ljm_buf_puts(&t->frames.b, "{\"name\":\"[...]\"}");
      if ((t->cut = ljm_uniq_add(&t->frames, start)) == LJM_UNIQ_NONE) return -1;
    }
    if (a != root && pool_push(t, t->cut) != 0) return -1;  /* none left out but the label */
  }
  while (na-- > 0) {
    uint32_t k = thru_frame(t, m, anc[na], sc);
    if (k == SS_UNSET || (k != SS_NO_FRAME && pool_push(t, k) != 0)) return -1;
  }
  ljm_frames_step(m, id, &sc->fr);
  if (sc->fr.oom) return -1;
  for (size_t i = 0; i < sc->fr.n; i++) {
    uint32_t k = frame_index(t, sc, i);
    if (k == LJM_UNIQ_NONE || pool_push(t, k) != 0) return -1;
  }
  t->node_len[id] = (uint32_t)(t->npool - t->node_off[id]);
  return 0;
}

static void tab_free(SsFrameTab *t)
{
  ljm_uniq_free(&t->frames);
  free(t->pool);
  free(t->node_off);
  free(t->node_len);
  free(t->thru);
}

/* Same frame path? */
static int same_path(const SsFrameTab *t, uint32_t a, uint32_t b)
{
  if (a == b) return 1;
  if (t->node_len[a] != t->node_len[b]) return 0;
  return memcmp(t->pool + t->node_off[a], t->pool + t->node_off[b],
                t->node_len[a] * sizeof(uint32_t)) == 0;
}

/* -- Writing --------------------------------------------------------------- */

typedef enum SsFig { FIG_ALLOC_BYTES, FIG_ALLOC_COUNT, FIG_INUSE_BYTES, FIG_INUSE_COUNT,
                     FIG_PEAK_BYTES, FIG_TEMP_COUNT, FIG_N } SsFig;

static const struct {
  const char *key, *what, *unit;
} ss_figs[FIG_N] = {
  { "alloc_bytes", "bytes allocated", "bytes" },
  { "alloc_count", "allocations", "none" },
  { "inuse_bytes", "bytes still live at the end", "bytes" },
  { "inuse_count", "blocks still live at the end", "none" },
  { "peak_bytes", "bytes live at the peak", "bytes" },
  { "temp_count", "temporary allocations (freed right after they were made)", "none" },
};

static uint64_t run_value(const SsState *st, const SsRun *r, SsFig f)
{
  switch (f) {
  case FIG_ALLOC_BYTES: return r->alloc_bytes;
  case FIG_ALLOC_COUNT: return r->alloc_count;
  case FIG_INUSE_BYTES: return r->inuse_bytes;
  case FIG_INUSE_COUNT: return r->inuse_count;
  case FIG_TEMP_COUNT: return r->temp_count;
  default: return run_peak(st, r);
  }
}

static void put_u64(FILE *f, uint64_t v)
{
  char buf[LJM_NUM_MAX];
  fputs(ljm_fmt_u64(buf, v), f);
}

static void put_path(FILE *f, const SsFrameTab *t, uint32_t node)
{
  putc('[', f);
  for (uint32_t i = 0; i < t->node_len[node]; i++) {
    if (i) putc(',', f);
    put_u64(f, t->pool[t->node_off[node] + i]);
  }
  putc(']', f);
}

/* One sampled profile: the runs with a non-zero figure in stream order,
** consecutive ones with the same frame path merged. */
static void write_sampled(const SsState *st, const SsFrameTab *t, SsFig fig,
                          const char *order)
{
  FILE *f = st->base.out;
  uint64_t total = 0;
  for (size_t i = 0; i < st->nruns; i++) total += run_value(st, &st->runs[i], fig);
  fprintf(f, "{\"type\":\"sampled\",\"name\":\"%s: %s, %s\",\"unit\":\"%s\","
             "\"startValue\":0,\"endValue\":",
          ss_figs[fig].key, ss_figs[fig].what, order, ss_figs[fig].unit);
  put_u64(f, total);
  for (int pass = 0; pass < 2; pass++) {
    fputs(pass ? ",\n\"weights\":[" : ",\n\"samples\":[", f);
    uint32_t prev = LJM_NO_NODE;
    uint64_t acc = 0;
    int first = 1;
    for (size_t i = 0; i <= st->nruns; i++) {
      const SsRun *r = i < st->nruns ? &st->runs[i] : NULL;
      uint64_t v = r ? run_value(st, r, fig) : 0;
      if (r && (v == 0 || r->node >= t->nnodes)) continue;
      if (r && prev != LJM_NO_NODE && same_path(t, prev, r->node)) {
        acc += v;
        continue;
      }
      if (prev != LJM_NO_NODE) {  /* the group before this run is complete */
        if (!first) putc(',', f);
        first = 0;
        if (pass) put_u64(f, acc);
        else put_path(f, t, prev);
      }
      if (!r) break;
      prev = r->node;
      acc = v;
    }
    putc(']', f);
  }
  putc('}', f);
}

typedef struct SsOpen {     /* the frames open in the evented profile */
  const uint32_t *path;
  uint32_t n;
  uint64_t end;             /* where the last run ends (usec) */
  int first;
} SsOpen;

static void put_event(FILE *f, SsOpen *o, char type, uint32_t frame, uint64_t at)
{
  fputs(o->first ? "{\"type\":\"" : ",{\"type\":\"", f);
  o->first = 0;
  putc(type, f);
  fputs("\",\"frame\":", f);
  put_u64(f, frame);
  fputs(",\"at\":", f);
  put_u64(f, at);
  putc('}', f);
}

/* Closes the open frames down to depth keep at a time. */
static void close_to(FILE *f, SsOpen *o, uint32_t keep, uint64_t at)
{
  while (o->n > keep) {
    o->n--;
    put_event(f, o, 'C', o->path[o->n], at);
  }
}

/* The evented profile of a timed stream: each allocation event's stack on
** the real time axis (see the top of the file), in whole microseconds: a
** run shorter than one is not drawn (speedscope could not show it either;
** the sampled profiles count it). */
static void write_timeline(const SsState *st, const SsFrameTab *t, uint64_t duration)
{
  FILE *f = st->base.out;
  SsOpen o = { NULL, 0, 0, 1 };
  uint64_t last_end = 0;
  fputs("{\"type\":\"evented\",\"name\":\"time: allocation events on the real time axis "
        "(events between two time marks spread evenly)\",\"unit\":\"microseconds\","
        "\"startValue\":0,\"events\":[", f);
  for (size_t i = 0; i < st->nruns;) {
    /* One time mark: runs i .. j-1, N events over [mark, mark + span). */
    size_t j = i;
    uint64_t mark = st->runs[i].time, nev = 0;
    while (j < st->nruns && st->runs[j].time == mark) nev += st->runs[j++].alloc_count;
    uint64_t next = j < st->nruns ? st->runs[j].time : duration;
    uint64_t span = next > mark ? next - mark : SS_MARK_SPAN_US;
    if (span > SS_MARK_SPAN_US) span = SS_MARK_SPAN_US;
    uint64_t k = 0;
    for (; i < j; i++) {
      const SsRun *r = &st->runs[i];
      if (!nev) continue;  /* only blocks a time window carried in: nothing allocated */
      /* Starts at mark + span * k / nev, ends at mark + span * (k + n) / nev. */
      uint64_t a = mark + (uint64_t)((unsigned __int128)span * k / nev);
      k += r->alloc_count;
      uint64_t b = mark + (uint64_t)((unsigned __int128)span * k / nev);
      if (r->node >= t->nnodes || a == b) continue;  /* no visible width */
      const uint32_t *path = t->pool + t->node_off[r->node];
      uint32_t len = t->node_len[r->node], c = 0;
      if (o.n && a != o.end) close_to(f, &o, 0, o.end);  /* a gap */
      while (c < o.n && c < len && o.path[c] == path[c]) c++;
      close_to(f, &o, c, a);
      for (; c < len; c++) put_event(f, &o, 'O', path[c], a);
      o.path = path;
      o.n = len;
      o.end = b;
      last_end = b;
    }
  }
  close_to(f, &o, 0, o.end);
  fputs("],\"endValue\":", f);
  put_u64(f, duration > last_end ? duration : last_end);
  putc('}', f);
}

static int profile_index(LjmValueKind v)
{
  switch (v) {
  case LJM_VALUE_ALLOC_COUNT: return FIG_ALLOC_COUNT;
  case LJM_VALUE_INUSE_BYTES: return FIG_INUSE_BYTES;
  case LJM_VALUE_INUSE_COUNT: return FIG_INUSE_COUNT;
  case LJM_VALUE_PEAK_BYTES: return FIG_PEAK_BYTES;
  case LJM_VALUE_TEMP_COUNT: return FIG_TEMP_COUNT;
  default: return FIG_ALLOC_BYTES;
  }
}

static int ss_write(SsState *st, const LjmModel *m, char *err, size_t errlen)
{
  FILE *f = st->base.out;
  const LjmStreamInfo *si = ljm_model_stream(m);
  SsFrameTab t;
  SsScratch sc;
  LjmBuf name = {0};
  const char *in = st->base.o.in_path ? st->base.o.in_path : "";
  int rc = -1, timed = (si->ext_flags & 2) != 0;
  memset(&t, 0, sizeof(t));
  memset(&sc, 0, sizeof(sc));
  t.cut = SS_UNSET;
  if (st->oom) goto oom;
  if (profile_index(st->base.value) == FIG_TEMP_COUNT && !ljm_model_totals(m)->temporaries) {
    snprintf(err, errlen, "--value temp_count: %s", ljm_temp_refusal(m));
    return -1;
  }
  t.nnodes = ljm_model_nnodes(m);
  if (t.nnodes) {
    t.node_off = malloc(t.nnodes * sizeof(*t.node_off));
    t.node_len = malloc(t.nnodes * sizeof(*t.node_len));
    t.thru = malloc(t.nnodes * sizeof(*t.thru));
    if (!t.node_off || !t.node_len || !t.thru) goto oom;
    for (size_t i = 0; i < t.nnodes; i++) t.node_len[i] = t.thru[i] = UINT32_MAX;
  }
  for (size_t i = 0; i < st->nruns; i++)
    if (st->runs[i].node < t.nnodes && tab_node(&t, m, st->runs[i].node, &sc) != 0) goto oom;

  {
    /* The title speedscope shows: the input, and whether it is estimated. */
    char note[1024];
    LjmBuf title = {0};
    ljm_buf_puts(&title, in);
    if (si->snapshot)  /* every object of the snapshot under what retains it */
      ljm_buf_puts(&title, " (heap snapshot: bytes retained at the snapshot)");
    if (ljm_sampled_note(m, note, sizeof(note))) ljm_buf_printf(&title, " (%s)", note);
    if (ljm_filter_line(m, note, sizeof(note))) ljm_buf_printf(&title, "; %s", note);
    if (!title.oom) ljm_json_name(&name, &sc.tmp, title.p, title.len);
    else name.oom = 1;
    ljm_buf_free(&title);
  }
  if (name.oom || t.frames.b.oom) goto oom;
  fputs("{\"$schema\":\"" SS_SCHEMA "\",\n\"exporter\":\"ljmkit (ljm convert)\",\n\"name\":", f);
  fwrite(name.p, 1, name.len, f);
  fprintf(f, ",\n\"activeProfileIndex\":%d,\n\"shared\":{\"frames\":[",
          profile_index(st->base.value));
  for (uint32_t i = 0; i < t.frames.n; i++) {
    fputs(i ? ",\n" : "\n", f);
    size_t len;
    const char *item = ljm_uniq_item(&t.frames, i, &len);
    fwrite(item, 1, len, f);
  }
  fputs("\n]},\n\"profiles\":[\n", f);
  int nfig = ljm_model_totals(m)->temporaries ? FIG_N : FIG_TEMP_COUNT;
  for (int k = 0; k < nfig; k++) {
    if (k) fputs(",\n", f);
    write_sampled(st, &t, (SsFig)k, timed ? "in time order" : "in event order");
  }
  if (timed) {
    fputs(",\n", f);
    write_timeline(st, &t, si->duration == LJM_NO_TIME_US ? 0 : si->duration);
  }
  fputs("\n]}\n", f);
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "out of memory");
done:
  ljm_buf_free(&name);
  tab_free(&t);
  ljm_frames_free(&sc.fr);
  ljm_buf_free(&sc.tmp);
  return rc;
}

static int ss_finish(void *p, const LjmModel *m, char *err, size_t errlen)
{
  SsState *st = p;
  int rc = ss_write(st, m, err, errlen);
  free(st->runs);
  free(st->run_of);
  ljm_hmap_free(&st->node_run);
  free(st);
  return rc;
}

const LjmExporter ljm_exporter_speedscope = {
  .name = "speedscope", .command = "convert", .reads = LJM_READS_PROFILE | LJM_READS_SNAPSHOT,
  .summary = "speedscope JSON: a profile per figure, samples in time order",
  .suffixes = (const char *const[]){".speedscope.json", NULL}, .streaming = 1,
  .slice_events = SS_SLICE_EVENTS, .begin = ss_begin, .on_event = ss_on_event, .finish = ss_finish,
};
