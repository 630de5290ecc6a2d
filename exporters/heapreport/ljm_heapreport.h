/* ljm_heapreport.h -- the views `ljm heap` prints of a heap snapshot
** (model/ljm_heapgraph.h), as text for people or as one JSON object:
**
**   summary   objects and bytes per type, largest first, beside the VM's
**             own count; the top retainers (dominator subtrees), each with
**             its shortest path from a root in Lua notation
**   growth    signed differences by type from an older snapshot, then the
**             retainers that grew most, followed path by path
**   paths     the objects whose label a predicate accepts, with all their
**             shortest paths from the roots
**
** Like the .heapsnapshot writer beside it, it reads the heap graph, not the
** event model. Each function returns 0, or -1 with err filled (out of
** memory); write errors are the caller's to find when it closes f.
*/
#ifndef LJM_HEAPREPORT_H
#define LJM_HEAPREPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/ljm_heapgraph.h"

#define LJM_HEAPREPORT_PATHS 20  /* shortest paths shown per object (paths view) */

/* Which labels the paths view shows; nonzero: matches. */
typedef int (*LjmHeapLabelMatch)(void *ud, const char *label);

/* Types and the 'top' largest retainers of g. */
int ljm_heapreport_summary(const LjmHeapGraph *g, uint32_t top, int json, FILE *f,
                           char *err, size_t errlen);

/* What grew from old to g: types, then the 'top' retainers by growth. */
int ljm_heapreport_growth(const LjmHeapGraph *old, const LjmHeapGraph *g, uint32_t top,
                          int json, FILE *f, char *err, size_t errlen);

/* The first 'top' objects whose label 'match' accepts (not VM internals),
** each with up to LJM_HEAPREPORT_PATHS shortest paths; 'pattern' names the
** predicate in the text when nothing matches. */
int ljm_heapreport_paths(const LjmHeapGraph *g, LjmHeapLabelMatch match, void *ud,
                         const char *pattern, uint32_t top, int json, FILE *f, char *err,
                         size_t errlen);

#endif
