#!/usr/bin/env python3
"""ljm_totals.py -- whole-profile figures of an ljm stream, computed here.

An independent check for the exporter tests: it shares no code with the C
decoder. It reads the event stream (symbols are skipped, names are not
needed for totals) and replays the live heap the way ljm_model.h defines it:

  alloc_count/bytes  ALLOC and REALLOC events and their new sizes
  inuse_count/bytes  blocks allocated during the profile and live at its end
                     (a free or realloc of an unknown block takes nothing away;
                     an allocation over a live address drops the old block)
  peak_bytes/count   the highest live byte total, after any event
  by_stack           extended streams: per stack id ("0": none) the
                     allocations and bytes made under it and the blocks it
                     made that are live at the end [count, bytes, count, bytes]
  temporary          frees of a block right after an allocation of the same
                     size at the same location (heaptrack's "temporary"):
                     the events as the heaptrack exporter writes them, each
                     a free of the old block (when known), of a block the
                     new one overwrites (when any), then the allocation

Prints one JSON object: {"status": "ok"|"truncated"|"error", figures...}.
"""
import gzip
import json
import sys


class Cut(Exception):
    """The stream ends inside an item."""


class Bad(Exception):
    """The stream is not a valid profile."""


class Reader:
    def __init__(self, data):
        self.d = data
        self.i = 0

    def byte(self):
        if self.i >= len(self.d):
            raise Cut()
        b = self.d[self.i]
        self.i += 1
        return b

    def uleb(self):
        v, shift = 0, 0
        for _ in range(10):
            b = self.byte()
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v & 0xFFFFFFFFFFFFFFFF
        raise Bad("ULEB128 longer than 10 bytes")

    def skip_string(self):
        n = self.uleb()
        if self.i + n > len(self.d):
            raise Cut()
        self.i += n


def read_symtab(r):
    if r.d[0:3] != b"ljs":
        raise Bad("no ljs prologue")
    if len(r.d) < 7:
        raise Cut()
    if r.d[3] != 3:
        raise Bad("symtab version %d" % r.d[3])
    r.i = 7
    while True:
        h = r.byte()
        if h & 0x80:
            return
        t = h & 3
        if t == 0:
            r.uleb(); r.skip_string(); r.uleb()
        elif t == 1:
            r.uleb(); r.skip_string()
        elif t == 2:
            r.uleb(); r.uleb(); r.uleb()
        # type 3: no payload


def totals(data):
    f = dict(alloc_count=0, alloc_bytes=0, inuse_count=0, inuse_bytes=0,
             peak_count=0, peak_bytes=0, events=0, temporary=0, stacks=False,
             rss_max=0, by_stack={})
    live = {}          # address -> (size, location)
    live_bytes = 0
    last_plus = None   # (size, location) of the previous line when a '+'
    sums = [0, 0]      # freed and allocated bytes so far
    live_stack = {}    # address -> stack that (re)allocated it

    def minus(block):
        nonlocal last_plus
        if block == last_plus:
            f["temporary"] += 1
        last_plus = None

    r = Reader(data)
    status = "ok"
    try:
        read_symtab(r)
        start = r.i
        if len(r.d) < start + 7 and b"ljm"[:len(r.d) - start] == r.d[start:start + 3]:
            raise Cut()  # the stream stops inside the prologue
        if r.d[start:start + 3] != b"ljm":
            raise Bad("no ljm prologue")
        if r.d[start + 3] != 3:
            raise Bad("event stream version %d" % r.d[start + 3])
        flags = r.d[start + 4]  # extension flags (decoder/EXTENSION.md)
        if flags & ~3:
            raise Bad("unknown extension flags 0x%x" % flags)
        f["stacks"] = bool(flags & 1)
        r.i = start + 7
        stack = 0              # stack selected for the events that follow
        nodes = 0
        while True:
            h = r.byte()
            if h == 0x80:
                break
            if h in (0x20, 0x21) and flags & 1:
                parent = r.uleb()
                if h == 0x21:
                    if parent > nodes:
                        raise Bad("undefined stack node")
                    stack = parent
                    continue
                k = r.byte()
                if k == 1:
                    r.uleb(); r.uleb()
                elif k in (2, 3):
                    r.uleb()
                elif k not in (4, 5, 6):
                    raise Bad("unknown frame kind")
                if parent > nodes:
                    raise Bad("stack node before its parent")
                nodes += 1
                continue
            if h in (0x22, 0x23) and flags & 2:
                v = r.uleb()
                if h == 0x23:
                    f["rss_max"] = max(f["rss_max"], v)
                continue
            if h > 0x13:
                raise Bad("bad event header 0x%x" % h)
            kind, src = h & 3, h & 0x1C
            if kind == 0:  # symbol events; 0x00 and 0x04 carry nothing
                if src == 0x08:
                    r.uleb(); r.skip_string(); r.uleb()
                elif src == 0x0C:
                    r.uleb(); r.skip_string()
                elif src == 0x10:
                    r.uleb(); r.uleb(); r.uleb()
                continue
            if src == 0:
                raise Bad("unknown source 0")
            loc = (src,)
            if src == 0x08:
                loc = (src, r.uleb(), r.uleb())
            elif src in (0x0C, 0x10):
                loc = (src, r.uleb())
            # heaptrack's frame of a block: its stack, or its location
            # when it has none
            if stack:
                loc = ("stack", stack)

            oaddr = osize = naddr = nsize = None
            if kind in (2, 3):
                oaddr, osize = r.uleb(), r.uleb()
            if kind in (1, 3):
                naddr, nsize = r.uleb(), r.uleb()
            # The model's limits (ljm_model_load.h): a block above 2^56
            # bytes, or byte totals above 2^62, end the stream with an error.
            if (osize or 0) > 2**56 or (nsize or 0) > 2**56:
                raise Bad("impossible block size")
            sums[0] += osize or 0
            sums[1] += nsize or 0
            if max(sums) > 2**62:
                raise Bad("byte totals above 2^62")
            # The whole event is read: apply it.
            if oaddr is not None and oaddr in live:
                block = live.pop(oaddr)
                live_bytes -= block[0]
                minus(block)
            if naddr is not None:
                per = f["by_stack"].setdefault(str(stack), [0, 0, 0, 0])
                per[0] += 1          # allocations made under this stack
                per[1] += nsize
                live_stack[naddr] = stack
                f["alloc_count"] += 1
                f["alloc_bytes"] += nsize
                if naddr in live:
                    block = live.pop(naddr)
                    live_bytes -= block[0]
                    minus(block)
                live[naddr] = (nsize, loc)
                live_bytes += nsize
                last_plus = (nsize, loc)
            f["events"] += 1
            if live_bytes > f["peak_bytes"]:
                f["peak_bytes"] = live_bytes
                f["peak_count"] = len(live)
    except Cut:
        status = "truncated"
    except Bad as e:
        status = "error"
        f["why"] = str(e)
    f["inuse_count"] = len(live)
    f["inuse_bytes"] = live_bytes
    for a, (size, _) in live.items():  # live blocks by the stack that made them
        per = f["by_stack"].setdefault(str(live_stack[a]), [0, 0, 0, 0])
        per[2] += 1
        per[3] += size
    f["status"] = status
    return f


def load(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return totals(data)


if __name__ == "__main__":
    print(json.dumps(load(sys.argv[1]), sort_keys=True))
