/* ljm_heapreport.h -- the views `ljm heap` prints of a heap snapshot
** (model/ljm_heapgraph.h), as text for people or as one JSON object:
**
**   summary   objects and bytes per type, largest first, beside the VM's
**             own count and the process's (RSS, malloc); the top retainers
**             (dominator subtrees), each with up to 'paths' paths from the
**             roots, one per reference into it, best first
**   growth    signed differences by type from an older snapshot, then the
**             retainers that grew most, what grew inside one counted under
**             it (entries, bytes, two examples)
**   paths     the objects whose type name or label a predicate accepts,
**             each with up to 'paths' paths
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

#define LJM_HEAPREPORT_PATHS 3  /* paths shown per object by default */

/* Which type names and labels the paths view shows; nonzero: matches. */
typedef int (*LjmHeapLabelMatch)(void *ud, const char *text);

/* Types and the 'top' largest retainers of g; of those whose type name
** 'match' accepts when it is not NULL. */
int ljm_heapreport_summary(const LjmHeapGraph *g, uint32_t top, uint32_t paths,
                           LjmHeapLabelMatch match, void *ud, int json, FILE *f, char *err,
                           size_t errlen);

/* What grew from old to g: types, then the 'top' retainers by growth. */
int ljm_heapreport_growth(const LjmHeapGraph *old, const LjmHeapGraph *g, uint32_t top,
                          int json, FILE *f, char *err, size_t errlen);

/* The first 'top' objects (not VM internals) whose type name 'match'
** accepts, then those whose label it accepts, each with up to 'paths'
** paths; 'pattern' names the predicate in the text when nothing matches. */
int ljm_heapreport_paths(const LjmHeapGraph *g, LjmHeapLabelMatch match, void *ud,
                         const char *pattern, uint32_t top, uint32_t paths, int json, FILE *f,
                         char *err, size_t errlen);

#endif
