/* arena_room.h -- room for LuaJIT's arena in ljm record's process.
**
** LuaJIT's allocator maps its arena 128 KiB at a time, each segment right
** below the last (the kernel hands out addresses top down), and merges
** neighbours into one segment; segments it cannot merge it gives back and
** maps again as the heap breathes, and every page comes back as a fault.
** Under `luajit` little lies in the way. The ljm CLI loads many libraries,
** whose gaps catch the first segments, and the recorder's own buffers and
** tables, mapped by glibc from 128 KiB on, land next to the arena.
*/
#ifndef REC_ARENA_ROOM_H
#define REC_ARENA_ROOM_H

/* Before the Lua state is made: reserves (PROT_NONE, no memory) the gaps
** of 128 KiB to 64 MiB between the loaded libraries, and sets glibc's mmap
** threshold to its dynamic maximum (32 MiB: where a long run's threshold
** ends up anyway). Best effort: anything that fails is left as it was.
** For a process of ljm's own, never for a host's. */
void rec_arena_room(void);

#endif
