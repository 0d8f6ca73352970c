/*
 * The memory budget shared by the writers of a process (include/s3l/parquet.h). Each writer
 * charges the bytes its row group in progress holds (compressed chunk pages, the raw page
 * buffers and the dictionaries) every 16 committed rows. When the sum reaches the budget, the
 * writer with the largest charge is asked to flush its row group early: at once when it is the
 * caller, otherwise at its own next row boundary (a flag it reads; writers may live on other
 * threads, so one writer never touches another's buffers). A mutex guards the registry.
 */
#include <pthread.h>

#include "parquet/pq.h"

#define DEFAULT_BUDGET ((size_t)48 << 20)

struct s3l_pq_budget {
    pthread_mutex_t mu;
    size_t limit;
    size_t total;
    size_t n, cap;
    struct s3l_pq_writer **writers;
};

struct s3l_pq_budget *s3l_pq_budget_new(size_t bytes)
{
    struct s3l_pq_budget *b = s3l_calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    if (pthread_mutex_init(&b->mu, NULL) != 0) {
        s3l_free(b);
        return NULL;
    }
    b->limit = bytes ? bytes : DEFAULT_BUDGET;
    return b;
}

void s3l_pq_budget_free(struct s3l_pq_budget *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->mu);
    s3l_free(b->writers);
    s3l_free(b);
}

int s3l__pq_budget_join(struct s3l_pq_budget *b, struct s3l_pq_writer *w)
{
    int rc = 0;
    pthread_mutex_lock(&b->mu);
    if (s3l__array_reserve(&b->writers, &b->cap, b->n + 1, sizeof(*b->writers), 8)) {
        rc = S3L_ENOMEM;
        goto out;
    }
    b->writers[b->n++] = w;
    w->budget_charged = 0;
out:
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void s3l__pq_budget_leave(struct s3l_pq_budget *b, struct s3l_pq_writer *w)
{
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < b->n; i++) {
        if (b->writers[i] == w) {
            b->total -= w->budget_charged;
            b->writers[i] = b->writers[--b->n];
            break;
        }
    }
    w->budget_charged = 0;
    pthread_mutex_unlock(&b->mu);
}

bool s3l__pq_budget_update(struct s3l_pq_budget *b, struct s3l_pq_writer *w, size_t bytes)
{
    bool self = false;
    pthread_mutex_lock(&b->mu);
    b->total = b->total - w->budget_charged + bytes;
    w->budget_charged = bytes;
    if (b->total >= b->limit) {
        struct s3l_pq_writer *big = w;
        for (size_t i = 0; i < b->n; i++)
            if (b->writers[i]->budget_charged > big->budget_charged)
                big = b->writers[i];
        if (big == w)
            self = bytes > 0;
        else
            __atomic_store_n(&big->flush_requested, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&b->mu);
    return self;
}
