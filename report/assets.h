/*
 * assets.h - the page's JavaScript and CSS, compiled in from timeline.js,
 * timeline.css, page.css and beside.js by report/embed.cmake (no "</script" or "</style" in them).
 */
#ifndef DL_REPORT_ASSETS_H
#define DL_REPORT_ASSETS_H

#include <stddef.h>

extern const char rp_asset_timeline_js[], rp_asset_timeline_css[], rp_asset_page_css[];
extern const size_t rp_asset_timeline_js_len, rp_asset_timeline_css_len, rp_asset_page_css_len;
/* beside.js: the beside view (beside.c) */
extern const char rp_asset_beside_js[];
extern const size_t rp_asset_beside_js_len;

#endif
