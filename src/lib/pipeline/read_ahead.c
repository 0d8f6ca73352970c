/*
 * The start's reads together (issue 14 item 2): before the landed-elsewhere check (landed.c)
 * lists each table's markers, the open (table.c) reads the checkpoint and each stream's open its
 * schema records, all go out at once through the store's read-ahead (commit/read_ahead.c), and
 * those calls find their answers kept: the start costs one round trip. The markers only of tables
 * with an input the check looks at (a replayable one: stdin is never compared); the records of
 * every table of the run.
 */
#include "commit/commit.h"
#include "runner.h"

void s3l__glue_read_ahead(struct s3l__run *r, const struct s3l_input_position *pos, size_t n)
{
    size_t nt = r->n_tables ? r->n_tables : 1;
    bool *want = s3l_calloc(nt, sizeof(*want));
    const char **tables = s3l_calloc(nt, sizeof(*tables));
    const char **streams = s3l_calloc(nt, sizeof(*streams));
    size_t m = 0;
    for (size_t i = 0; want && tables && i < n; i++) {
        size_t k = r->input_table[i];
        if (pos[i].replayable && !want[k]) {
            want[k] = true;
            tables[m++] = r->tables[k].tpath;
        }
    }
    for (size_t k = 0; streams && k < r->n_tables; k++)
        streams[k] = r->tables[k].tpath;
    if (want && tables && streams)
        s3l__dest_read_ahead_start(r->store, r->id, tables, m, streams, r->n_tables);
    s3l_free(streams);
    s3l_free(tables);
    s3l_free(want);
}
