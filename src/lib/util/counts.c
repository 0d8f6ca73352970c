/*
 * Request counts (include/s3l/counts.h): the difference of two snapshots, so that the requests
 * of one step (an epoch, a run's start) are its counts after minus its counts before.
 */
#include <string.h>

#include "s3l/counts.h"

void s3l_counts_diff(const struct s3l_store_counts *after, const struct s3l_store_counts *before,
                     struct s3l_store_counts *out)
{
    struct s3l_store_counts d;
    memset(&d, 0, sizeof(d));
    d.unit = after->unit;
    for (size_t i = 0; i < after->n; i++) {
        uint64_t n = after->ops[i].n, was = before ? s3l_counts_get(before, after->ops[i].op) : 0;
        n = n >= was ? n - was : 0;
        if (n == 0)
            continue;
        d.ops[d.n].op = after->ops[i].op;
        d.ops[d.n++].n = n;
        d.total += n;
    }
    *out = d;
}

uint64_t s3l_counts_get(const struct s3l_store_counts *c, const char *op)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->ops[i].op, op) == 0)
            return c->ops[i].n;
    return 0;
}
