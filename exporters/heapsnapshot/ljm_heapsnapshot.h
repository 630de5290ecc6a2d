/* ljm_heapsnapshot.h -- a heap snapshot (model/ljm_heapgraph.h) as Chrome
** DevTools' .heapsnapshot: the JSON whose "snapshot.meta" block names the
** fields of the flat "nodes" and "edges" arrays and whose "strings" array
** holds every name. The Memory panel then shows the summary by constructor
** (a table's metatable __name, else its Lua type), retainers and
** dominators of the Lua heap.
*/
#ifndef LJM_HEAPSNAPSHOT_H
#define LJM_HEAPSNAPSHOT_H

#include <stddef.h>
#include <stdio.h>

#include "model/ljm_heapgraph.h"

/* Writes g to f; 0, or -1 with err filled (out of memory, write error). */
int ljm_heapsnapshot_write(const LjmHeapGraph *g, FILE *f, char *err, size_t errlen);

#endif
