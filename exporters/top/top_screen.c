/* top_screen.c -- ljm top's terminal screen (top.h), drawn with ncurses: it
** knows the terminal's size and capabilities, reads keys with a timeout,
** follows resizes and gives the terminal back as it found it. */
#include <curses.h>
#include <locale.h>
#include <string.h>

#include "exporters/common/value.h"
#include "exporters/top/top_rows.h"

static int open_ = 0;

int ljm_top_screen_open(void)
{
  setlocale(LC_ALL, "");
  if (!initscr()) return -1;
  open_ = 1;
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  curs_set(0);
  return 0;
}

void ljm_top_screen_close(void)
{
  if (!open_) return;
  open_ = 0;
  endwin();
}

int ljm_top_screen_key(int ms)
{
  timeout(ms);
  int c = getch();
  return c == ERR ? -1 : c == KEY_RESIZE ? LJM_TOP_KEY_REDRAW : c;
}

/* A line clipped to the screen's width. */
static void put_line(int y, const char *s, int bold)
{
  int w = COLS;
  if (bold) attron(A_BOLD);
  mvaddnstr(y, 0, s, w);
  if (bold) attroff(A_BOLD);
  clrtoeol();
}

/* A sparkline of v[0..n) scaled to its largest value, in eight heights. */
static void spark(int y, int x, const uint64_t *v, size_t n)
{
  static const char *const bars[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584",
                                     "\u2585", "\u2586", "\u2587", "\u2588"};
  uint64_t max = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i] > max) max = v[i];
  move(y, x);
  for (size_t i = 0; i < n; i++) {
    unsigned h = max ? (unsigned)((v[i] * 8 + max - 1) / max) : 0;
    addstr(bars[h > 8 ? 8 : h]);
  }
}

void ljm_top_screen_draw(LjmLive *l, const LjmModel *m, const LjmTopShow *o)
{
  LjmBuf line = {0}, name = {0};
  LjmFrames frames;
  memset(&frames, 0, sizeof(frames));
  erase();
  ljm_top_header(&line, l, m, o);
  put_line(0, ljm_buf_str(&line), 1);
  /* The last minutes: a point per refresh, as many as fit. */
  uint64_t inuse[LJM_LIVE_HISTORY], rss[LJM_LIVE_HISTORY];
  int width = COLS - 22 > 8 ? COLS - 22 : 8;
  size_t n = ljm_live_history(l, inuse, rss, (size_t)width);
  char a[32];
  const LjmLiveTotals *t = ljm_live_totals(l);
  mvprintw(1, 0, "in use %10s ", ljm_fmt_human(a, sizeof(a), (double)t->all.inuse_bytes));
  spark(1, 22, inuse, n);
  if (ljm_model_stream(m)->ext_flags & 2) {
    mvprintw(2, 0, "RSS    %10s ", ljm_fmt_human(a, sizeof(a), (double)t->rss));
    spark(2, 22, rss, n);
  } else {
    put_line(2, "RSS    not recorded (ljm record --time, --stacks or --sample record it)", 0);
  }
  ljm_buf_reset(&line);
  ljm_buf_printf(&line, "keys: i in use  a alloc/s  g growth  v %s  p %s  q quit%s%s",
                 ljm_live_key(l) ? "lines/stacks/labels" : "lines/stacks",
                 o->paused ? "resume" : "pause", o->status ? "   " : "",
                 o->status ? o->status : "");
  put_line(3, ljm_buf_str(&line), 0);
  ljm_buf_reset(&line);
  ljm_buf_printf(&line, "%s  [%s by %s]%s", ljm_top_titles(o->view), ljm_top_view_name(o->view),
                 ljm_top_sort_name(o->sort), o->paused ? "  PAUSED" : "");
  attron(A_REVERSE);
  put_line(5, ljm_buf_str(&line), 0);
  attroff(A_REVERSE);
  const LjmLiveRow *rows;
  size_t nrows = ljm_live_rows(l, o->view, o->sort, &rows);
  for (size_t i = 0; i < nrows && (int)i + 6 < LINES; i++) {
    ljm_top_row(&line, &rows[i]);
    ljm_top_label(&name, l, m, o->view, rows[i].id, &frames);
    ljm_buf_puts(&line, ljm_buf_str(&name));
    put_line((int)i + 6, ljm_buf_str(&line), 0);
  }
  refresh();
  ljm_buf_free(&line);
  ljm_buf_free(&name);
  ljm_frames_free(&frames);
}
