/* frames.h -- the frame path of a site, shared by the folded and SVG exporters.
**
** An ljm event carries one location, not a call stack. To still get a
** useful flame graph each site is given a short path, root first:
**
**   Lua       <file> ; <function> ; <line>   test.lua;test.lua:5;@test.lua:14
**                                            (function defined on line 5 of test.lua)
**   C         C ; <name>                     C;io_file_iter:0x5636..  C;CFUNC 0x10
**   trace     JIT ; TRACE [n] ; <start>      JIT;TRACE [3];@x.lua:7
**             JIT ; TRACE [n]                (start unknown)
**   internal  INTERNAL
**
** <file>, <function> and <line> are the site's file, func and name fields
** (ljm_model.h); <start> is the name of the trace's start site. An empty
** file falls back to the chunk name, an empty function is left out, an
** empty name becomes "?". A Lua file literally named "C", "JIT" or
** "INTERNAL" shares its root frame with that kind.
*/
#ifndef LJM_EXPORTERS_FRAMES_H
#define LJM_EXPORTERS_FRAMES_H

#include <stddef.h>

#include "model/ljm_model.h"
#include "exporters/common/buf.h"

#define LJM_FRAMES_MAX 3

/* Raw frame names of one site, root first, pointing into the model. */
typedef struct LjmFrames {
  size_t n;                       /* frames used, 1..LJM_FRAMES_MAX */
  const char *s[LJM_FRAMES_MAX];  /* frame bytes (not cleaned) */
  size_t len[LJM_FRAMES_MAX];     /* frame lengths */
  char scratch[40];               /* holds "TRACE [n]" */
} LjmFrames;

/* Fills f with the frame path of site s. */
void ljm_frames_of(const LjmModel *m, const LjmSite *s, LjmFrames *f);

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
