/* svg_tree.h -- the merged frame tree a flame graph draws, with its layout. */
#ifndef LJM_EXPORTERS_SVG_TREE_H
#define LJM_EXPORTERS_SVG_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "model/ljm_model.h"
#include "exporters/common/buf.h"
#include "exporters/ljm_exporter.h"

/* One frame of the graph: all site paths sharing a prefix end here. */
typedef struct SvgNode {
  size_t name_off, name_len;  /* cleaned name in SvgTree.names */
  LjmSiteKind kind;           /* kind of the first site through it */
  uint32_t parent;            /* parent node (the root is its own parent) */
  uint32_t depth;             /* 0 for the root "all" */
  uint64_t self;              /* value of sites ending here */
  uint64_t total;             /* self + children's totals */
  uint64_t x;                 /* start in value units: parent's x + earlier
                                 siblings' totals */
} SvgNode;

/* Nodes in preorder, children sorted by name: node 0 is the root. */
typedef struct SvgTree {
  SvgNode *nodes;
  size_t n, cap;
  LjmBuf names;       /* all node names, cleaned UTF-8 */
  uint32_t maxdepth;  /* deepest node */
} SvgTree;

/* Builds the tree of every site whose figure k is not 0. Returns 0, or -1
** when out of memory (the tree is then freed). */
int svg_tree_build(SvgTree *t, const LjmModel *m, LjmValueKind k);
/* Frees the tree's memory. */
void svg_tree_free(SvgTree *t);

#endif
