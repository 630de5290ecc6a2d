/* frames.h -- the frame path of a call-tree node, shared by the folded, SVG
** and Markdown exporters.
**
** A node of a standard stream is a site on its own (model/ljm_model.h). It
** carries one location, not a call stack, so it gets a short path, root first:
**
**   Lua       <file> ; <function> ; <file>:<line>   cache.lua;Cache:put;cache.lua:26
**             (<function> is LjmSite.func: "Cache:put", "main chunk",
**             "function <cache.lua:5>")
**   built-in  [builtin] ; <function>                [builtin];move
**   trace     <path of its start site> ; <trace>    cache.lua;main chunk;cache.lua:7;TRACE [3] cache.lua:7
**             [JIT] ; TRACE [n]                     (start unknown)
**             (<trace> is LjmSite.func: "TRACE [n] <file>:<line>" where it starts)
**   C         [C] ; <function>                      [C];lj_cf_package_require
**   internal  INTERNAL
**
** A node of an extended stream (ljm record --stacks) has its real stack:
** one frame per node from the outermost caller down, then the allocating
** line when the innermost frame is Lua:
**
**   main chunk (app.lua);fill (app.lua);Cache:put (lib.lua);lib.lua:9
**
**   Lua       <function> (<file>)                   Cache:put (lib.lua)
**             (a name without its own, "function <lib.lua:8>", as is)
**   built-in, C function: <function>; trace: TRACE [n] lib.lua:9; a coroutine
**   boundary: [coroutine]; a tail call: [tail call]; frames left out: [...]
**
** A tree grouped by a label (ljm_model_group_by) starts each path with the
** label's frame, "plugin=auth", then the path as above; a path cut to its
** innermost frames keeps it on top: plugin=auth;[...];...
**
** An event charged to another site than its stack's innermost frame ends in
** that site (ljm_node_is_charge): INTERNAL, a C function, or a Lua line alone
** (a built-in's calling line: ...;main chunk (app.lua);string.rep;app.lua:7).
**
** Frame names carry a file's last component ("lib.lua"), LjmFrames.file
** its path. A function is a frame of its own whatever it was called
** through: names tell functions apart (LjmSite.func). Names carry no
** run-specific address. In a standard stream a trace sits below the
** line it starts at, so a line's total includes what traces starting there
** allocated.
*/
#ifndef LJM_EXPORTERS_FRAMES_H
#define LJM_EXPORTERS_FRAMES_H

#include <stddef.h>

#include "exporters/common/buf.h"
#include "model/ljm_model.h"

/* Frame names of one path, root first, raw (not cleaned) bytes in 'text',
** with the source file and line each frame stands for, where it has one:
** a file frame (line 0), a function (its definition line; 1 for a main
** chunk) or a line. Only chunks that name a file or a source ('@file',
** '=stdin') have a file, not loaded strings; C, traces and markers none. */
typedef struct LjmFrames {
  size_t n, cap;
  size_t *off, *len;       /* frame i is text.p[off[i] .. off[i] + len[i]) */
  LjmSiteKind *kind;       /* kind of site each frame belongs to */
  const char **file;       /* the file (LjmSite.file), or NULL */
  int64_t *line;           /* its line, 0 when none (always 0 without file) */
  LjmBuf text;
  int oom;
  const char *cur_file;    /* (while building: what the next frame is) */
  int64_t cur_line;
} LjmFrames;

/* Most nodes of a stack a path shows: deeper stacks keep their innermost
** nodes below one "[...]" frame (as ljm record --stack-depth cuts them), so
** one path costs at most this many frames, whatever the input. */
#define LJM_FRAMES_SHOWN_MAX 256

/* Fills f (emptied first) with the path of node id. Frames of the same
** LjmFrames may be reused for many nodes; free it once at the end. */
void ljm_frames_of(const LjmModel *m, uint32_t node, LjmFrames *f);
/* The frames node adds below its parent's, for a tree built walking nodes
** in id order (parents first), in time linear in the nodes and uncut: f
** gets them (emptied first); its children continue below the first
** 'through' of them (the return value, 0 or 1), its own figures go below
** all of them. The path of a node within LJM_FRAMES_SHOWN_MAX is its
** ancestors' 'through' frames, root first, then its own step. */
size_t ljm_frames_step(const LjmModel *m, uint32_t node, LjmFrames *f);
/* Frees the frames' memory. */
void ljm_frames_free(LjmFrames *f);

/* The bytes of frame i. */
static inline const char *ljm_frame_s(const LjmFrames *f, size_t i)
{
  return f->text.p + f->off[i];
}

/* Appends a one-line label of site s for tables (raw bytes, not cleaned):
**   Cache:put (cache.lua:26)    move [builtin]    lj_cf_package_require [C]
**   TRACE [3] cache.lua:7 (in Cache:fill)    INTERNAL */
void ljm_site_label(LjmBuf *b, const LjmModel *m, const LjmSite *s);

/* Appends one cleaned frame name (ljm_text_clean with flags; "?" if empty). */
void ljm_frame_clean(LjmBuf *b, const char *s, size_t len, unsigned flags);

/* Rewrites the last frame of a folded line, b->p[start..b->len), so that it
** does not end in whitespace + number: flamegraph.pl would read that number
** as a second count. The space before the number becomes '_'. */
void ljm_frame_fix_last(LjmBuf *b, size_t start);

/* Appends the folded stack of node id: cleaned frames joined by ';' with
** the last one fixed (formats doc C.5). No count, no newline. f is scratch. */
void ljm_frames_folded(LjmBuf *b, const LjmModel *m, uint32_t node, LjmFrames *f);

#endif
