/* alloc_type.h -- what the VM allocated a block for.
**
** An allocator call does not say what its block is for, and the VM fills
** the block in only after the call returns. So a block is judged at the
** next allocator call, before the real allocator runs, by what the VM's
** own structures then say of it: the newest GC object (g->gc.root) is it
** and its header names its type; the string table's chain for its hash
** starts with it; the table or thread just made points at it as its array,
** hash part or stack; ... (vm/alloc_type.c lists the rules). A block no
** rule proves is REC_TYPE_INTERNAL: never a guess. The values are the
** stream's (item 0x29, decoder/EXTENSION.md, "Allocation types").
*/
#ifndef REC_ALLOC_TYPE_H
#define REC_ALLOC_TYPE_H

#include "recorder/vm/unit.h"

#include <stddef.h>
#include <stdint.h>

#include "recorder/vm/lj.h"

#define REC_TYPE_NONE 0       /* nothing proved (a reallocation keeps its old type) */
#define REC_TYPE_INTERNAL 1   /* anything else the VM allocates */
#define REC_TYPE_TABLE 2      /* a table (with its array part when colocated) */
#define REC_TYPE_ARRAY 3      /* a table's array part */
#define REC_TYPE_HASH 4       /* a table's hash part */
#define REC_TYPE_STRING 5
#define REC_TYPE_FUNCTION 6   /* a Lua or C closure */
#define REC_TYPE_UPVALUE 7
#define REC_TYPE_PROTO 8      /* a function prototype */
#define REC_TYPE_THREAD 9
#define REC_TYPE_STACK 10     /* a thread's stack */
#define REC_TYPE_USERDATA 11
#define REC_TYPE_CDATA 12
#define REC_TYPE_BUFFER 13    /* a string buffer (g->tmpbuf, string.buffer) */
#define REC_TYPE_TRACE 14     /* a compiled trace */

/* What block b (size bytes, made or moved by the allocator call before
** this one, still in use) is for: a REC_TYPE_* value, REC_TYPE_NONE when
** no rule proves one. Reads only live objects and b's first bytes. */
REC_API uint8_t rec_alloc_type(global_State *g, const void *b, size_t size);

/* The type a GC object's header byte (gct) names; REC_TYPE_NONE for none. */
static const uint8_t rec_type_of_gct[256] = {
  [(uint8_t)~LJ_TTAB] = REC_TYPE_TABLE,       [(uint8_t)~LJ_TSTR] = REC_TYPE_STRING,
  [(uint8_t)~LJ_TFUNC] = REC_TYPE_FUNCTION,   [(uint8_t)~LJ_TUPVAL] = REC_TYPE_UPVALUE,
  [(uint8_t)~LJ_TPROTO] = REC_TYPE_PROTO,     [(uint8_t)~LJ_TTHREAD] = REC_TYPE_THREAD,
  [(uint8_t)~LJ_TUDATA] = REC_TYPE_USERDATA,  [(uint8_t)~LJ_TCDATA] = REC_TYPE_CDATA,
  [(uint8_t)~LJ_TTRACE] = REC_TYPE_TRACE,
};

/* The first rule of rec_alloc_type alone, inline (most blocks are the
** newest GC object): its type, or REC_TYPE_NONE when the others must say. */
static inline uint8_t rec_alloc_type_root(global_State *g, const void *b)
{
  GCobj *root = gcref(g->gc.root);
  return (const void *)root == b ? rec_type_of_gct[root->gch.gct] : REC_TYPE_NONE;
}

#endif
