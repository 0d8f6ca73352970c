/*
 * Request counts (include/s3l/counts.h): the difference of two snapshots, so that the requests
 * of one step (an epoch, a run's start) are its counts after minus its counts before; and
 * tallies, the requests of one thread (the destination's committer: an epoch's requests when its
 * finish overlaps the staging of the next one, docs/internals/commit.md "Pipelined commit").
 */
#include <pthread.h>
#include <string.h>

#include "s3l/counts.h"
#include "util/util.h"

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

void s3l__counts_add(const struct s3l_store_counts *a, const struct s3l_store_counts *b,
                     struct s3l_store_counts *out)
{
    struct s3l_store_counts d = *a;
    if (!d.unit)
        d.unit = b->unit;
    for (size_t i = 0; i < b->n; i++) {
        size_t j = 0;
        while (j < d.n && strcmp(d.ops[j].op, b->ops[i].op) != 0)
            j++;
        if (j == d.n) {
            if (d.n == S3L_STORE_COUNTS_MAX)
                continue; /* more names than any store has: cannot happen, dropped */
            d.ops[d.n].op = b->ops[i].op;
            d.ops[d.n++].n = 0;
        }
        d.ops[j].n += b->ops[i].n;
        d.total += b->ops[i].n;
    }
    *out = d;
}

/* --- tallies: the requests of one thread (util.h) --- */

static _Thread_local struct s3l__tally *g_tally;

void s3l__tally_init(struct s3l__tally *t, const void *owner, const char *unit)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    t->owner = owner;
    t->counts.unit = unit;
}

void s3l__tally_cleanup(struct s3l__tally *t)
{
    pthread_mutex_destroy(&t->mu);
}

void s3l__tally_set(struct s3l__tally *t)
{
    g_tally = t;
}

struct s3l__tally *s3l__tally_current(void)
{
    return g_tally;
}

void s3l__tally_add(struct s3l__tally *t, const void *owner, const char *op, uint64_t n)
{
    if (!t || t->owner != owner || n == 0)
        return;
    pthread_mutex_lock(&t->mu);
    struct s3l_store_counts *c = &t->counts;
    size_t j = 0;
    while (j < c->n && strcmp(c->ops[j].op, op) != 0)
        j++;
    if (j < S3L_STORE_COUNTS_MAX) {
        if (j == c->n) {
            c->ops[j].op = op;
            c->ops[j].n = 0;
            c->n++;
        }
        c->ops[j].n += n;
        c->total += n;
    }
    pthread_mutex_unlock(&t->mu);
}

void s3l__tally_read(struct s3l__tally *t, struct s3l_store_counts *out)
{
    pthread_mutex_lock(&t->mu);
    *out = t->counts;
    pthread_mutex_unlock(&t->mu);
}
