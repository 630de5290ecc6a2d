/* svg_assets.h -- the CSS and JavaScript embedded in every flame graph SVG. */
#ifndef LJM_EXPORTERS_SVG_ASSETS_H
#define LJM_EXPORTERS_SVG_ASSETS_H

/* Namespace of the exact-value attributes (ljm:x, ljm:v) on each frame. */
#define SVG_LJM_NS "urn:ljmkit:flamegraph"

extern const char svg_css[];
extern const char svg_script[];

#endif
