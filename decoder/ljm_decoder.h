/* ljm_decoder.h -- streaming decoder of LuaJIT memprof (ljm) profiles.
**
** A profile is a symbol table section followed by an event section:
**
**   file      := symtab events
**   symtab    := "ljs" ver 0 0 0  sym* final
**   events    := "ljm" ver flags 0 0  item* 0x80
**   sym       := 0x00 proto:U chunk:S firstline:U          (ljs v1-v3)
**              | 0x01 addr:U name:S                         (ljs v3: C symbol)
**              | 0x02 traceno:U proto:U line:U              (ljs v3: trace)
**              | 0x01 traceno:U mcode:U proto:U line:U      (ljs v2: trace)
**   final     := any byte with bit 0x80 set
**   item      := event | ext
**   event     := hdr loc [oaddr:U osize:U] [naddr:U nsize:U]   alloc/free/realloc
**              | 0x08 proto:U chunk:S firstline:U          (ljm v3: new prototype)
**              | 0x0C addr:U name:S                        (ljm v3: C symbol)
**              | 0x10 traceno:U proto:U line:U              (ljm v3: new trace)
**   hdr       := bits F UU SSS EE: EE 1 alloc, 2 free, 3 realloc;
**                SSS 0x04 internal, 0x08 Lua, 0x0C C, 0x10 trace (v2+)
**   loc       := ε | proto:U line:U | addr:U | traceno:U [mcode:U (v2)]
**   U         := ULEB128 (at most 10 bytes), S := U length + raw bytes
**                (names past LJM_STRING_MAX bytes are cut to it)
**
** ljmkit's extension (ljm v3 only; decoder/EXTENSION.md): 'flags' is 0 in a
** standard stream; in an extended one it says which items may follow:
**
**   flags     := 0x01 STACKS | 0x02 TIME | 0x04 SAMPLED | 0x08 TYPES
**                (other bits: error)
**   ext       := 0x20 parent:U frame                  stack node (STACKS)
**              | 0x21 node:U                          stack of later events
**              | 0x22 usec:U                          time mark (TIME)
**              | 0x23 bytes:U                         RSS sample (TIME)
**              | 0x24 len:U node:U what:U name        function name (STACKS)
**              | 0x25 len:U proto:U name               definition name (any flag)
**              | 0x26 len:U set:U pair*                label set (any flag)
**              | 0x27 len:U set:U                      labels of later events (any flag)
**              | 0x28 len:U folded:U                   label sets folded so far (any flag)
**              | 0x29 len:U type:U byte*              allocation type (TYPES; see below)
**              | 0x29..0x2F len:U byte*                reserved: skipped
**   TYPES     := an allocation or reallocation event may be followed
**                right away by 0x29, its new block's type (LjmType; the
**                bytes after it up to len are skipped, len at most
**                LJM_TYPE_ITEM_MAX); without it an allocation has the last
**                allocation's type (internal before any), a reallocation
**                its old block's; 0x29 anywhere else is an error
**   frame     := 0x01 proto:U line:U | 0x02 addr:U | 0x03 traceno:U
**              | 0x04 (coroutine boundary) | 0x05 (tail call) | 0x06 (cut)
**   name      := the item's remaining bytes (len counts node, what, name);
**                what: 1 global, 2 local, 3 method, 4 field, 5 upvalue,
**                6 metamethod; at most LJM_NAME_ITEM_MAX bytes (0x24 and
**                0x25 alike)
**   pair      := key:S value:S (keys distinct, at most LJM_LABEL_KEY_MAX and
**                LJM_LABEL_VALUE_MAX bytes, LJM_LABEL_PAIRS pairs); no pair:
**                the (other) set, where sets past the recorder's limit went;
**                set 1..LJM_LABEL_SETS, each defined once before it is used;
**                0x27 set 0: no labels; 0x26..0x28 at most LJM_LABEL_ITEM_MAX
**                bytes
**
** Input comes from a file, stdin ("-"), a gzip or a zstd file (recognised
** by its magic bytes) through a fixed-size buffer: memory does not grow with the
** stream. A stream that simply stops (a killed process) is not an error:
** everything before the cut is delivered and the result says where it stops.
*/
#ifndef LJM_DECODER_H
#define LJM_DECODER_H

#include <stddef.h>
#include <stdint.h>


#ifdef __cplusplus
extern "C" {
#endif

/* Result of decoding. */
typedef enum LjmStatus {
  LJM_OK = 0,        /* complete stream */
  LJM_TRUNCATED = 1, /* stream stops early; all decoded data delivered */
  LJM_ERROR = 2      /* bad input or I/O error; data before it delivered */
} LjmStatus;

/* What went wrong, or where a truncated stream stops. */
typedef struct LjmDiag {
  uint64_t offset;   /* byte offset in the (decompressed) stream */
  char msg[256];     /* one line, no file name or offset: "unknown event header 0x14" */
} LjmDiag;

/* Location of an event as written in the stream. */
typedef enum LjmSource {
  LJM_SRC_INTERNAL = 0x04,
  LJM_SRC_LUA = 0x08,
  LJM_SRC_C = 0x0C,
  LJM_SRC_TRACE = 0x10
} LjmSource;

typedef struct LjmLoc {
  LjmSource source;
  uint64_t addr;     /* Lua: prototype; C: function address; else 0 */
  uint64_t line;     /* Lua: current line; else 0 */
  uint64_t traceno;  /* TRACE: trace number; else 0 */
} LjmLoc;

/* Kind of an allocation event: the header's EE bits. */
typedef enum LjmRawKind {
  LJM_RAW_ALLOC = 1,
  LJM_RAW_FREE = 2,
  LJM_RAW_REALLOC = 3
} LjmRawKind;

/* One raw allocation event. Fields not used by the kind are 0. */
typedef struct LjmRawEvent {
  LjmRawKind kind;
  LjmLoc loc;
  uint64_t oaddr, osize, naddr, nsize;
  uint64_t offset;   /* offset of the header byte */
  uint32_t stack;    /* extended streams: node of its stack, 0 if none */
  uint64_t time;     /* extended streams: last time mark (usec), else LJM_NO_TIME */
  int nosample;      /* sampled streams: a REALLOC whose new block is not
                        in the sample (item 0x31): only its old half counts */
  uint32_t labels;   /* extended streams: label set of the event (0x27), 0 if none */
  uint8_t type;      /* TYPES streams: the new block's type (LjmType); 0: none
                        recorded, or a reallocation keeping its old block's */
} LjmRawEvent;

#define LJM_NO_TIME UINT64_MAX

/* Extension flags (byte 4 of the event section). */
#define LJM_EXT_STACKS 0x01u
#define LJM_EXT_TIME   0x02u
#define LJM_EXT_SAMPLED 0x04u
#define LJM_EXT_TYPES  0x08u
#define LJM_EXT_KNOWN  (LJM_EXT_STACKS | LJM_EXT_TIME | LJM_EXT_SAMPLED | LJM_EXT_TYPES)

/* What the VM allocated a block for (TYPES streams, item 0x29). */
typedef enum LjmType {
  LJM_TYPE_NONE = 0,      /* not recorded */
  LJM_TYPE_INTERNAL = 1,  /* anything else, or not told */
  LJM_TYPE_TABLE,         /* a table (with its array part when colocated) */
  LJM_TYPE_ARRAY,         /* a table's array part */
  LJM_TYPE_HASH,          /* a table's hash part */
  LJM_TYPE_STRING,
  LJM_TYPE_FUNCTION,      /* a Lua or C closure */
  LJM_TYPE_UPVALUE,
  LJM_TYPE_PROTO,         /* a function prototype */
  LJM_TYPE_THREAD,
  LJM_TYPE_STACK,         /* a thread's stack */
  LJM_TYPE_USERDATA,
  LJM_TYPE_CDATA,
  LJM_TYPE_BUFFER,        /* a string buffer */
  LJM_TYPE_TRACE,         /* a compiled trace */
  LJM_TYPES               /* types run from 1 to LJM_TYPES - 1 */
} LjmType;

#define LJM_TYPE_ITEM_MAX 16  /* longest 0x29 body read */

/* A type's name: "table", "table.array", ..., "internal"; NULL for
** LJM_TYPE_NONE and values past the last. */
const char *ljm_type_name(unsigned type);
/* Largest sampling rate a sampled stream may declare (bytes). */
#define LJM_SAMPLE_RATE_MAX (1ull << 32)

/* Labels (0x26..0x28): limits a stream must keep. */
#define LJM_LABEL_SETS 4096
#define LJM_LABEL_PAIRS 16
#define LJM_LABEL_KEY_MAX 63
#define LJM_LABEL_VALUE_MAX 127
#define LJM_LABEL_ITEM_MAX 4096

/* One label of a set; strings valid during the callback only. */
typedef struct LjmLabel {
  const char *key, *value;
  size_t klen, vlen;
} LjmLabel;

/* One frame of a stack node (the 'frame' of the grammar). */
typedef enum LjmFrameKind {
  LJM_FRAME_LUA = 1,     /* addr: prototype, line */
  LJM_FRAME_C = 2,       /* addr: C function or built-in */
  LJM_FRAME_TRACE = 3,   /* traceno */
  LJM_FRAME_RESUME = 4,  /* coroutine boundary */
  LJM_FRAME_TAIL = 5,    /* tail call */
  LJM_FRAME_CUT = 6      /* frames left out */
} LjmFrameKind;

typedef struct LjmRawFrame {
  LjmFrameKind kind;
  uint64_t addr, line, traceno;  /* as the kind says; else 0 */
} LjmRawFrame;

/* Callbacks of the low-level decoder; any may be NULL. Strings are valid
** only during the call. 'in_events' is 1 for symtab events in the event
** section (0x08/0x0C/0x10), 0 for entries of the leading symtab. */
typedef struct LjmCallbacks {
  void (*on_versions)(void *ud, int ljs_version, int ljm_version);
  void (*on_proto)(void *ud, uint64_t addr, const char *chunk, size_t len,
                   uint64_t firstline, int in_events);
  void (*on_cfunc)(void *ud, uint64_t addr, const char *name, size_t len,
                   int in_events);
  void (*on_trace)(void *ud, uint64_t traceno, uint64_t proto, uint64_t line,
                   int in_events);
  void (*on_event)(void *ud, const LjmRawEvent *ev);
  /* Optional: events in batches instead of one by one (order kept: no
  ** other call overtakes the events before it). Lets a consumer prefetch
  ** what the next events will touch. */
  void (*on_events)(void *ud, const LjmRawEvent *evs, size_t n);
  /* Optional: polled after events are handed over; nonzero stops decoding
  ** with LJM_ERROR (the consumer refused an event and says why itself). */
  int (*stopped)(void *ud);
  /* Optional: called each time another part of the input has been read,
  ** with the stream offset reached so far (for progress displays). */
  void (*on_progress)(void *ud, uint64_t offset);
  /* Extended streams (EXTENSION.md): the flags, before any item; each stack
  ** node (ids 1, 2, ... in order; parent 0 = outermost), delivered before
  ** any event that uses it; each RSS sample with the last time mark. */
  void (*on_flags)(void *ud, unsigned flags);
  void (*on_stack_node)(void *ud, uint32_t id, uint32_t parent, const LjmRawFrame *f);
  void (*on_rss)(void *ud, uint64_t time, uint64_t bytes);
  void (*on_time)(void *ud, uint64_t usec);   /* each time mark */
  /* The function name of stack node id (once per node, after the node),
  ** as the recorder read it from the calling instruction (LJM_NAME_*). */
  void (*on_node_name)(void *ud, uint32_t id, unsigned what, const char *name, size_t len);
  /* A chunk or C symbol name (S) of len bytes at offset was longer than
  ** LJM_STRING_MAX: its first LJM_STRING_MAX bytes were delivered. */
  void (*on_long_string)(void *ud, uint64_t offset, uint64_t len);
  /* A sampled stream's rate (item 0x30), after on_flags, before any event. */
  void (*on_sample_rate)(void *ud, uint64_t rate);
  /* Optional (0x25): the name the bytecode defining it gives the prototype last announced
  ** at addr ("make_tables", "M.new", "Obj:m"); an announcement at addr
  ** after it is another prototype, unnamed until named again. */
  void (*on_proto_name)(void *ud, uint64_t addr, const char *name, size_t len);
  /* Optional (0x26): label set id, before any event that carries it; n 0:
  ** the (other) set. (0x28): how many label sets the recorder folded into
  ** (other) so far. */
  void (*on_label_set)(void *ud, uint32_t id, const LjmLabel *labels, unsigned n);
  void (*on_labels_folded)(void *ud, uint64_t folded);
} LjmCallbacks;

/* Longest name (S) delivered whole. A real one this long is a loaded
** string's source (load(s) names its chunk s); a longer one is cut, not
** refused, so the rest of the stream still counts. */
#define LJM_STRING_MAX (1u << 20)

/* What a node's name is (0x24 items). */
enum { LJM_NAME_GLOBAL = 1, LJM_NAME_LOCAL, LJM_NAME_METHOD, LJM_NAME_FIELD,
       LJM_NAME_UPVALUE, LJM_NAME_META };
/* Largest 0x24 and 0x25 item body read (longer: an error at the item);
** 0x29..0x2F items of any length are skipped. */
#define LJM_NAME_ITEM_MAX 4096

typedef struct LjmInput LjmInput;

/* Opens a profile for reading: a path, or "-" for stdin. gzip and zstd
** input are detected by their magic bytes. On failure returns NULL and fills diag
** (the message includes strerror). */
LjmInput *ljm_input_open(const char *path, LjmDiag *diag);
/* Wraps an already open file descriptor (not closed by ljm_input_close
** unless own_fd is set). */
LjmInput *ljm_input_fdopen(int fd, int own_fd, LjmDiag *diag);
/* Wraps a memory buffer (not copied; must outlive the input). */
LjmInput *ljm_input_mem(const void *data, size_t len);
/* Whether the input turned out to be gzip-compressed (after the first read). */
int ljm_input_is_gzip(const LjmInput *in);
/* Whether the input turned out to be zstd-compressed (after the first read). */
int ljm_input_is_zstd(const LjmInput *in);
/* Bytes of the underlying file read so far (compressed bytes for a gzip
** or zstd file; on a pipe, the bytes decoded), and its size when known (a regular
** file), else -1. */
uint64_t ljm_input_position(const LjmInput *in);
int64_t ljm_input_size(const LjmInput *in);
/* Follows an input still being written (ljm top): where its data ends, a
** read calls wait(ud) and reads on when it returns 0, or ends the input
** there when it returns nonzero. A regular file (plain, gzip or zstd) is
** read again at its end, and shrinking below what was read is an error; a
** pipe is read as its data comes, plain only (gzip or zstd data there is
** an error at its first bytes). Call before the first read. */
void ljm_input_follow(LjmInput *in, int (*wait)(void *ud), void *ud);
/* The stream bytes read so far (after decompression). */
uint64_t ljm_input_decoded(const LjmInput *in);
/* Ends the input after that many stream bytes (after decompression; 0: no
** limit), as if the file ended there: a second reading of a file still
** being written then reads what the first one read (ljm top's filters by
** fate). Not with ljm_input_follow. */
void ljm_input_limit(LjmInput *in, uint64_t bytes);
/* The input's file descriptor, -1 for a memory input. */
int ljm_input_fd(const LjmInput *in);
/* Closes the input; NULL is allowed. */
void ljm_input_close(LjmInput *in);

/* Decodes the whole stream, calling cb for every entry in stream order.
** 'bytes' (may be NULL) receives the number of stream bytes consumed and
** 'trailing' (may be NULL) the bytes seen after the epilogue. */
LjmStatus ljm_decode(LjmInput *in, const LjmCallbacks *cb, void *ud,
                     LjmDiag *diag, uint64_t *bytes, uint64_t *trailing);

/* Formats "<path>: byte <offset>: <msg>" into buf. */
void ljm_diag_format(const LjmDiag *d, const char *path, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
