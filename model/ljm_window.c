/* ljm_window.c -- a time window over a stream (ljm_model_set_window): where
** it starts, the live heap carries in. */
#include "model/ljm_model_int.h"

void ljm_model_set_window(LjmModel *m, uint64_t from, uint64_t to)
{
  m->win = 1;
  m->win_from = from;
  m->win_to = to > from ? to : from;
  m->info.windowed = 1;
  m->info.window_from = m->win_from;
  m->info.window_to = m->win_to;
}

typedef struct Carry {
  LjmModel *m;
  LjmLiveEvent ev;
} Carry;

/* One block in use at the window's start, to the listener; the last one
** is the '+' line temporaries count from (heaptrack's file has it last). */
static void carry(void *ud, uint64_t key, uint64_t stored, uint32_t owner)
{
  Carry *c = ud;
  LjmModel *m = c->m;
  (void)key;
  uint64_t count = 1, bytes = stored;
  if (m->rate) {
    uint64_t size = stored & ~LJM_SAMPLE_UP;
    ljm_sample_weight(m->rate, size, (stored & LJM_SAMPLE_UP) != 0, &count, &bytes);
  }
  c->ev.owner = owner;
  c->ev.site = m->ctx_owners ? m->ctxs[owner].site : owner;
  c->ev.node = m->ctx_owners ? m->ctxs[owner].node : owner;
  c->ev.new_size = bytes;
  c->ev.new_count = count;
  m->tmp_plus = 1;
  m->tmp_node = c->ev.node;
  m->tmp_size = bytes;
  if (m->listener) m->listener->on_event(m->listener_ud, m, &c->ev);
}

void ljm_window_start(LjmModel *m)
{
  m->win_in = 1;
  /* The window's peak is at least what it starts with. */
  m->totals.fig.peak_bytes = m->live_bytes;
  m->totals.fig.peak_count = m->live_count;
  m->totals.peak_event = m->totals.events;
  m->epoch++;
  /* Exact streams walk the blocks for the temporaries even without a
  ** listener, so that every view counts the same. */
  if ((!m->listener && m->rate) || m->oom || m->bad) return;
  Carry c = { m, { .kind = LJM_EV_CARRIED, .index = m->totals.events, .old_site = LJM_NO_SITE,
                   .dropped_site = LJM_NO_SITE, .old_node = LJM_NO_NODE,
                   .dropped_node = LJM_NO_NODE, .time = 0, .old_owner = LJM_NO_OWNER,
                   .dropped_owner = LJM_NO_OWNER, .slice = m->slice } };
  ljm_addrmap_each(&m->blocks, carry, &c);
}
