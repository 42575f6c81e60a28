/*
 * assets.h - the page's JavaScript and CSS, compiled in from timeline.js,
 * timeline.css and page.css by report/embed.cmake (no "</script" or "</style" in them).
 */
#ifndef DL_REPORT_ASSETS_H
#define DL_REPORT_ASSETS_H

#include <stddef.h>

extern const char rp_asset_timeline_js[], rp_asset_timeline_css[], rp_asset_page_css[];
extern const size_t rp_asset_timeline_js_len, rp_asset_timeline_css_len, rp_asset_page_css_len;

#endif
