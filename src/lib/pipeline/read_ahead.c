/*
 * The start's first reads together (issue 14 item 2): before the landed-elsewhere check
 * (landed.c) lists each table's markers and the open (table.c) reads the checkpoint, both go out
 * at once through the store's read-ahead (commit/read_ahead.c), and those calls find their
 * answers kept. Only what the check will read: the markers of tables with an input it looks at
 * (a replayable one: stdin is never compared).
 */
#include "commit/commit.h"
#include "runner.h"

void s3l__glue_read_ahead(struct s3l__run *r, const struct s3l_input_position *pos, size_t n)
{
    bool *want = s3l_calloc(r->n_tables ? r->n_tables : 1, sizeof(*want));
    const char **tables = s3l_calloc(r->n_tables ? r->n_tables : 1, sizeof(*tables));
    size_t m = 0;
    for (size_t i = 0; want && tables && i < n; i++) {
        size_t k = r->input_table[i];
        if (pos[i].replayable && !want[k]) {
            want[k] = true;
            tables[m++] = r->tables[k].tpath;
        }
    }
    if (m)
        s3l__dest_read_ahead_start(r->store, r->id, tables, m);
    s3l_free(tables);
    s3l_free(want);
}
