/* frames.h -- the frame path of a site, shared by the folded and SVG exporters.
**
** An ljm event carries one location, not a call stack. To still get a
** useful flame graph each site is given a short path, root first:
**
**   Lua       <file> ; <function> ; <file>:<line>   cache.lua;Cache:put;cache.lua:26
**             (<function> is LjmSite.func: "Cache:put", "main chunk",
**             "function <cache.lua line 5>")
**   built-in  [builtin] ; <function>                [builtin];move
**   trace     <path of its start site> ; TRACE [n]  cache.lua;main chunk;cache.lua:7;TRACE [3]
**             [JIT] ; TRACE [n]                     (start unknown)
**   C         [C] ; <function>                      [C];lj_cf_package_require
**   internal  INTERNAL
**
** A function frame never looks like a line frame ("file:line"): a search
** for "cache.lua:26" finds line 26, not a function defined there. Names
** carry no run-specific address. A trace sits below the line it starts at,
** so a line's total includes what traces starting there allocated.
*/
#ifndef LJM_EXPORTERS_FRAMES_H
#define LJM_EXPORTERS_FRAMES_H

#include <stddef.h>

#include "exporters/common/buf.h"
#include "model/ljm_model.h"

#define LJM_FRAMES_MAX 4

/* Frame names of one site, root first. */
typedef struct LjmFrames {
  size_t n;                       /* frames used, 1..LJM_FRAMES_MAX */
  const char *s[LJM_FRAMES_MAX];  /* frame bytes (not cleaned) */
  size_t len[LJM_FRAMES_MAX];     /* frame lengths */
  LjmSiteKind kind[LJM_FRAMES_MAX];  /* kind of site each frame belongs to */
  char scratch[2][64];            /* holds "TRACE [n]" and "file:line" */
  LjmBuf line;                    /* "file:line" when longer than scratch */
  LjmSiteKind cur;                /* kind of the frames being added */
} LjmFrames;

/* Fills f with the frame path of site s. Call ljm_frames_free after. */
void ljm_frames_of(const LjmModel *m, const LjmSite *s, LjmFrames *f);
/* Frees what ljm_frames_of allocated (nothing, usually). */
void ljm_frames_free(LjmFrames *f);

/* Appends a one-line label of site s for tables (raw bytes, not cleaned):
**   Cache:put (cache.lua:26)    move [builtin]    lj_cf_package_require [C]
**   TRACE [3] (started at cache.lua:7)    INTERNAL */
void ljm_site_label(LjmBuf *b, const LjmModel *m, const LjmSite *s);

/* Appends one cleaned frame name (ljm_text_clean with flags; "?" if empty). */
void ljm_frame_clean(LjmBuf *b, const char *s, size_t len, unsigned flags);

/* Rewrites the last frame of a folded line, b->p[start..b->len), so that it
** does not end in whitespace + number: flamegraph.pl would read that number
** as a second count. The space before the number becomes '_'. */
void ljm_frame_fix_last(LjmBuf *b, size_t start);

/* Appends the folded stack of site s: cleaned frames joined by ';' with
** the last one fixed (formats doc C.5). No count, no newline. */
void ljm_frames_folded(LjmBuf *b, const LjmModel *m, const LjmSite *s);

#endif
