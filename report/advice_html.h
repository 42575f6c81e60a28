/*
 * advice_html.h - the report's section "What single change pays most": the
 * newest ranking `dlsim advise --db` stored for the chosen run's scenario.
 */
#ifndef DL_REPORT_ADVICE_HTML_H
#define DL_REPORT_ADVICE_HTML_H

#include <stdio.h>

#include <sqlite3.h>

/* Writes the section to F (a note saying how to get one when DB has none). */
void dl_advice_html(sqlite3 *db, const char *scenario, FILE *f);

#endif
