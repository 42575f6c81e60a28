/*
 * advice_html.c - the advice section of index.html (advice_html.h): one
 * table row per change, one column per op, names HTML-escaped.
 */
#include <stdlib.h>
#include <string.h>

#include "report/advice_html.h"
#include "report/explain.h"

#define ADVICE_ROWS 20
#define ADVICE_OPS 16

static int64_t newest_advice(sqlite3 *db, const char *scenario)
{
	sqlite3_stmt *st;
	int64_t id = 0;

	if (sqlite3_prepare_v2(db, "SELECT max(advice_id) FROM advice WHERE scenario = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;	/* no advice table */
	sqlite3_bind_text(st, 1, scenario, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

void dl_advice_html(sqlite3 *db, const char *scenario, FILE *f)
{
	char *ops[ADVICE_OPS] = { 0 };
	int nops = 0;
	int64_t id = scenario ? newest_advice(db, scenario) : 0, rank = -1;
	sqlite3_stmt *st;
	int unsafe_seen = 0;

	fputs("<h2 id=\"advice\">What single change pays most</h2>\n", f);
	if (!id) {
		fputs("<p>No ranking for this scenario: <code>dlsim advise SCENARIO --db DB</code> "
		      "stores one.</p>\n", f);
		return;
	}
	/* the ops, in the order of the first change's rows */
	if (sqlite3_prepare_v2(db, "SELECT op FROM advice WHERE advice_id = ?1 AND rank = "
			       "(SELECT min(rank) FROM advice WHERE advice_id = ?1) ORDER BY rowid",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW && nops < ADVICE_OPS)
		ops[nops++] = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT rank, change, unsafe, status, op, saved_ns, order_name, "
			       "workers, resims, created_at FROM advice WHERE advice_id = ?1 AND "
			       "rank <= ?2 ORDER BY rank, rowid", -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, ADVICE_ROWS);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t r = sqlite3_column_int64(st, 0);

		if (rank < 0) {
			fputs("<p>Ranking of <code>dlsim advise</code> (", f);
			dl_html_put(f, (const char *)sqlite3_column_text(st, 9));
			fputs(") under ", f);
			dl_html_put(f, (const char *)sqlite3_column_text(st, 6));
			fprintf(f, " on %lld CPUs, %lld re-simulations: makespan saved per op in ms "
				"(negative: the change costs time).</p>\n<table>\n<tr><th>rank</th>"
				"<th>change</th>", (long long)sqlite3_column_int64(st, 7),
				(long long)sqlite3_column_int64(st, 8));
			for (int k = 0; k < nops; k++) {
				fputs("<th>", f);
				dl_html_put(f, ops[k]);
				fputs("</th>", f);
			}
			fputs("</tr>\n", f);
		}
		if (r != rank) {
			if (rank >= 0)
				fputs("</tr>\n", f);
			fprintf(f, "<tr><td>%lld</td><td>", (long long)r);
			dl_html_put(f, (const char *)sqlite3_column_text(st, 1));
			fputs("</td>", f);
			unsafe_seen |= sqlite3_column_int(st, 2);
			rank = r;
		}
		fprintf(f, "<td class=\"num\">%.3f</td>", sqlite3_column_double(st, 5) / 1e6);
	}
	sqlite3_finalize(st);
	if (rank >= 0)
		fputs("</tr>\n</table>\n", f);
	if (unsafe_seen)
		fputs("<p>UNSAFE: dropping a link removes the guarantee that the consumer suspends "
		      "before and resumes after its supplier.</p>\n", f);
out:
	for (int k = 0; k < nops; k++)
		free(ops[k]);
}
