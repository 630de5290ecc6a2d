/* ljh_decoder.h -- the heap snapshot ("ljh") and its streaming decoder.
**
** A snapshot lists every GC object reachable from a LuaJIT VM's roots at
** one moment, each once, with its own size and its references; written by
** the recorder (ljm_recorder_snapshot, rec.snapshot(path)), read here.
** Numbers are ULEB128; a string is its length and its bytes. Addresses
** name objects only: an edge's target is an object's address, which some
** object record of the same snapshot carries (the root's is 0).
**
**   snapshot := 'l' 'j' 'h' version(0x01) build:string gctotal:uleb
**               root internal* object* end
**            |  'l' 'j' 'h' version(0x02) build:string gctotal:uleb
**               nfigures:uleb figure* root internal* object* end
**   figure   := name:string bytes:uleb      the process at that moment: "rss"
**                                            (resident set), "malloc_in_use" and
**                                            "malloc_held" (glibc's malloc: in
**                                            use, and held from the system),
**                                            "recorder" (the part of malloc's in
**                                            use the recorder itself holds) and
**                                            "recorder_rss" (the part of that in
**                                            RAM);
**                                            absent when unknown, others ignored
**   root     := 0x01 addr(0) size(0) label("") nedges:uleb edge*
**   internal := 0x0C addr:uleb size:uleb label:string nedges(0)
**   object   := type:byte addr:uleb size:uleb label:string nedges:uleb edge*
**   edge     := kind:byte target:uleb what
**   what     := name:string        kind & 0x7F = 1  named (internal) edge:
**                                                    "metatable", "env", "proto",
**                                                    "upvalue N", "stack slot N",
**                                                    "constant N", "value", a
**                                                    root's name, "[1.5]", "[true]"
**            |  key:uleb           kind & 0x7F = 2  table value under a string key:
**                                                    the key string's address
**            |  index:uleb         kind & 0x7F = 3  table value under an integer key
**            |  key:uleb           kind & 0x7F = 4  table value under another object
**                                                    key: that object's address
**            |  (nothing)          kind & 0x7F = 5  a table's key object itself
**   end      := 0x00
**
**   kind & 0x80: the reference is weak (a weak table's key or value).
**   type: 0x02 string, 0x03 table, 0x04 Lua function, 0x05 C function,
**         0x06 prototype, 0x07 upvalue, 0x08 thread, 0x09 userdata,
**         0x0A cdata, 0x0B trace, 0x0C VM internal (string table, buffers:
**         what the GC counts that is no object).
**   size:  the bytes the VM allocated for the object (a table with its array
**          and hash parts, a thread with its stack); the sizes of a snapshot
**          taken after a full collection add up to nearly gctotal (the VM's
**          count of allocated bytes, collectgarbage("count") * 1024).
**   label: a string's first 64 bytes; "chunk:line" of a function or
**          prototype; a C function's exported symbol, else its object and
**          offset ("luajit+0x8a00"), else its address ("0x55d3..."); a
**          userdata's metatable __name; "ctype N" of a cdata;
**          "TRACE [N]"; an internal's name.
**
** Impossible figures are errors at the number's offset, as in ljm streams:
** an object above 2^56 bytes (LJH_SIZE_MAX: no address space holds one),
** sizes adding up to more than 2^62 (LJH_TOTAL_MAX), a gctotal above 2^62.
** So any sum of a snapshot's sizes (per type, retained) is exact in a
** uint64_t and in an int64_t, and differences of two such sums too.
*/
#ifndef LJH_DECODER_H
#define LJH_DECODER_H

#include <stddef.h>
#include <stdint.h>

#include "ljm_decoder.h"

typedef enum LjhType {
  LJH_ROOT = 1, LJH_STR, LJH_TAB, LJH_LFUNC, LJH_CFUNC, LJH_PROTO, LJH_UPVAL,
  LJH_THREAD, LJH_UDATA, LJH_CDATA, LJH_TRACE, LJH_INTERNAL, LJH_NTYPES
} LjhType;

typedef enum LjhEdgeKind {
  LJH_EDGE_NAME = 1, LJH_EDGE_STRKEY, LJH_EDGE_INDEX, LJH_EDGE_OBJKEY, LJH_EDGE_KEY
} LjhEdgeKind;

#define LJH_EDGE_WEAK 0x80

#define LJH_SIZE_MAX (1ull << 56)   /* largest object size accepted */
#define LJH_TOTAL_MAX (1ull << 62)  /* largest sum of sizes, gctotal, a figure */
#define LJH_FIELDS_MAX 64           /* process figures in a header */

/* One edge: for NAME, name/len; for STRKEY and OBJKEY, key (an address);
** for INDEX, key (the integer). */
typedef struct LjhEdge {
  uint8_t kind;        /* LjhEdgeKind */
  uint8_t weak;
  uint64_t target;
  uint64_t key;
  const char *name;    /* valid during the callback */
  size_t len;
} LjhEdge;

typedef struct LjhCallbacks {
  void (*header)(void *ud, const char *build, size_t len, uint64_t gctotal);
  /* A process figure (version 2), after the header; may be NULL. */
  void (*field)(void *ud, const char *name, size_t len, uint64_t bytes);
  /* An object and, in edges[0..n), its references (valid during the call). */
  void (*object)(void *ud, LjhType type, uint64_t addr, uint64_t size,
                 const char *label, size_t len, const LjhEdge *edges, size_t n);
} LjhCallbacks;

/* Decodes a whole snapshot (plain, gzip or zstd input). LJM_OK; LJM_TRUNCATED
** when it stops before its end byte (every whole object was delivered);
** LJM_ERROR with diag (offset, one-line message) for anything else. */
LjmStatus ljh_decode(LjmInput *in, const LjhCallbacks *cb, void *ud, LjmDiag *diag);

/* 1 when the regular file at path (plain, gzip or zstd) begins as a heap
** snapshot does ("ljh"), else 0: standard input, a pipe or a FIFO (none
** can be read twice), an unreadable file or anything else. */
int ljh_sniff(const char *path);

/* The name of a type: "string", "table", "function", "C function", ... */
const char *ljh_type_name(LjhType t);

#endif
