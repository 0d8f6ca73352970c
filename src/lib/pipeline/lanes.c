/*
 * Parallel lanes: with --lanes N > 1, records are converted and encoded in N lanes of the
 * destination (each lane is its own Parquet writer: the destination allows its lane sinks to be
 * fed from different threads at once): lanes 1..N-1 by worker threads, lane 0 by the reading
 * thread itself, so that N lanes use N threads. NDJSON lines with a declared schema come as spans
 * of whole lines (s3l__lanes_put_lines): a span is one batch, its bytes copied in one memcpy, its
 * lines split and converted by the worker, so that the reading thread's work per line is only
 * finding its end. Other records come one by one (s3l__lanes_put), copied into batches.
 *
 * Each worker owns a ring of NBATCH batches: the one it converts, those handed over and waiting,
 * and the one the reader fills. A worker goes on to the next waiting batch as soon as it is done,
 * without waiting for the reader. When every batch of the next worker is taken, the reader does
 * not wait: it converts the span, or the next INLINE_RUN records, into lane 0 itself and then
 * looks again, so the reading thread's spare time goes to encoding and no core idles while
 * records wait. (NDJSON lines come unscanned with a declared schema: the workers scan them, see
 * s3l__convert_line.) A batch of records is
 * handed over at BATCH_RECORDS records or BATCH_BYTES bytes, so one wide record may make a batch
 * of its own; the bytes of the batches handed over and not yet converted are bounded by
 * queue_bytes (a quarter of --memory, at least 4 MiB): a batch that would pass it is not handed
 * over (the reader converts into lane 0 meanwhile; at a barrier it waits), but a batch always
 * passes when nothing else is queued, so a record larger than the bound still goes through. A batch's arena that grew past 2 BATCH_BYTES
 * for a wide record is freed when the batch is done, not kept. Raw bytes are copied only when
 * cfg->keep_raw (dead letters, line numbers in records that span lines).
 *
 * Epoch boundaries: s3l__lanes_barrier hands every partial batch over and waits until all workers
 * are idle; only then may the runner commit, so the committed input offsets cover exactly the
 * rows the lanes have put. Each lane closes its file at the barrier on its own thread (cfg->close:
 * the last row group's encoding and compression, the footer, staging), in parallel, instead of
 * one after another in the commit. A record that does not fit the schema is failed, skipped or
 * dead-lettered by the worker that meets it, as --bad-records says; a failure stops every lane
 * and is returned by the next put or barrier.
 */
#include <pthread.h>
#include <string.h>

#include "runner.h"
#include "input/steps.h"
#include "s3l/input.h"

#define BATCH_RECORDS 2048
#define BATCH_BYTES   (1u << 20)
#define INLINE_RUN    64 /* records the reader converts into lane 0 before looking again */
#define NBATCH        3  /* batches per worker: one converted, one waiting, one filled */

struct batch {
    struct s3l_arena arena;
    struct s3l_record *recs;
    size_t n;
    size_t bytes;
    bool has_span;        /* the batch is one span of lines (then n is 0) */
    struct s3l__lines span; /* its bytes and source name in the arena */
};

struct worker {
    struct s3l__lanes *l;
    unsigned lane;
    pthread_t thread;
    bool started;
    struct s3l_converter *conv;
    struct batch b[NBATCH];
    unsigned head;  /* the batch the worker converts (or will convert next); under mu */
    unsigned count; /* batches handed over and not done, the one converted included; under mu */
    unsigned tail;  /* the batch the reader fills: (head + count) % NBATCH; the reader's */
    bool tail_free; /* the reader may fill b[tail]: count < NBATCH when it last looked */
    bool closing;   /* close the lane's file once the batches are done (a barrier); under mu */
};

struct s3l__lanes {
    struct s3l__lanes_config cfg;
    unsigned n;
    struct worker *w;
    unsigned next;   /* the worker whose batch the reader fills (1..n-1) */
    unsigned inline_left; /* records still to convert into lane 0 before trying a hand-over */
    struct s3l_error inline_err; /* lane 0's, cleared only after an error (it is ~1 KiB) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int failed; /* first fatal code, 0 */
    struct s3l_error err;
    uint64_t bad;       /* records skipped or dead-lettered since the last barrier */
    size_t queued;      /* bytes of the batches handed over and not yet converted (under mu) */
    size_t queue_bytes; /* the bound on queued, see the top */
};

static void batch_reset(struct batch *b)
{
    if (b->bytes > 2 * (size_t)BATCH_BYTES)
        s3l_arena_free(&b->arena); /* blocks are allocated again at the configured size */
    else
        s3l_arena_reset(&b->arena);
    b->n = 0;
    b->bytes = 0;
    b->has_span = false;
}

/*
 * Copies rec (tape, strings, raw bytes, the input's name) into the batch's arena, in one
 * allocation. The input's name is copied too: the reader that owns it may be gone when the batch
 * is converted (the last batch of an input is converted at the next barrier).
 */
static int batch_add(struct batch *b, const struct s3l_record *rec, bool keep_raw)
{
    size_t tape = rec->n_values * sizeof(struct s3l_value), text = 0;
    for (size_t i = 0; i < rec->n_values; i++) {
        const struct s3l_value *v = &rec->values[i];
        if ((v->kind == S3L_VALUE_STRING || v->kind == S3L_VALUE_NUMBER) && v->str)
            text += v->len + 1;
    }
    size_t src_len = rec->source ? strlen(rec->source) + 1 : 0;
    /* The raw bytes serve dead letters and the line of a bad value in a multi-line record. */
    size_t raw_len = rec->raw && (keep_raw || !rec->values) ? rec->raw_len + 1 : 0;
    char *mem = s3l_arena_alloc(&b->arena, tape + text + raw_len + src_len + 1);
    if (!mem)
        return S3L_ENOMEM;
    struct s3l_record *c = &b->recs[b->n];
    *c = *rec;
    struct s3l_value *v = (struct s3l_value *)(void *)mem;
    char *p = mem + tape;
    if (tape)
        memcpy(v, rec->values, tape);
    for (size_t i = 0; i < rec->n_values; i++) {
        if ((v[i].kind != S3L_VALUE_STRING && v[i].kind != S3L_VALUE_NUMBER) || !v[i].str)
            continue;
        memcpy(p, v[i].str, v[i].len);
        p[v[i].len] = 0;
        v[i].str = p;
        p += v[i].len + 1;
    }
    c->values = rec->values ? v : NULL; /* NULL: an unscanned NDJSON line, scanned by a worker */
    if (!raw_len) {
        c->raw = NULL;
        c->raw_len = 0;
    } else {
        memcpy(p, rec->raw, rec->raw_len);
        p[rec->raw_len] = 0;
        c->raw = p;
        p += raw_len;
    }
    if (rec->source) {
        memcpy(p, rec->source, src_len);
        c->source = p;
    }
    b->n++;
    b->bytes += tape + text + raw_len;
    return 0;
}

/* Copies span s (its bytes, line lengths and the input's name) into the empty batch b. */
static int batch_add_lines(struct batch *b, const struct s3l__lines *s)
{
    size_t len = (size_t)(s->end - s->p), src_len = s->source ? strlen(s->source) + 1 : 0;
    size_t n = 0;
    for (size_t off = 0; s->lens && off < len; off += s->lens[n++])
        ;
    uint32_t *lens = n ? s3l_arena_alloc(&b->arena, n * sizeof(uint32_t)) : NULL;
    char *mem = s3l_arena_alloc(&b->arena, len + src_len + 1);
    if (!mem || (n && !lens))
        return S3L_ENOMEM;
    memcpy(mem, s->p, len);
    mem[len] = 0;
    if (n)
        memcpy(lens, s->lens, n * sizeof(uint32_t));
    b->span = *s;
    b->span.p = mem;
    b->span.end = mem + len;
    b->span.lens = lens;
    if (s->source) {
        memcpy(mem + len + 1, s->source, src_len);
        b->span.source = mem + len + 1;
    }
    b->has_span = true;
    b->bytes += len;
    return 0;
}

/* A record that does not fit, met by a worker: fail, skip or dead-letter it. */
static int bad_record(struct s3l__lanes *l, const struct s3l_record *rec, struct s3l_error *e)
{
    const struct s3l__lanes_config *c = &l->cfg;
    if (c->bad_records == S3L_BAD_RECORDS_FAIL)
        return e->code;
    char reason[S3L_ERROR_MESSAGE_MAX];
    memcpy(reason, e->message, sizeof(reason));
    s3l_error_clear(e);
    if (c->bad_records == S3L_BAD_RECORDS_DEAD_LETTER) {
        int rc = c->reject(c->ctx, rec->raw, rec->raw_len, reason, e);
        if (rc)
            return rc;
    }
    pthread_mutex_lock(&l->mu);
    l->bad++;
    if (c->report)
        c->report(c->ctx, reason);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

int s3l__lane_failure(const struct s3l_row_sink *lane, int rc, struct s3l_error *err)
{
    if (rc >= 0 || !err || err->code != 0)
        return rc;
    int end = lane->ops->row_end(lane->ctx, err);
    return end ? end : rc;
}

/* Records a fatal failure for every lane (the first one wins) and returns rc. */
static int fail(struct s3l__lanes *l, int rc, const struct s3l_error *e)
{
    pthread_mutex_lock(&l->mu);
    if (!l->failed) {
        l->failed = rc;
        l->err = *e;
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* Converts rec into w's lane; a record that does not fit is handled as --bad-records says. A
 * fatal failure is recorded for every lane and returned. e is clear on entry. */
static int convert_one(struct worker *w, const struct s3l_record *rec, struct s3l_error *e)
{
    struct s3l__lanes *l = w->l;
    int rc = s3l__convert_line(w->conv, rec, &l->cfg.sinks[w->lane], e);
    if (rc < 0)
        rc = s3l__lane_failure(&l->cfg.sinks[w->lane], rc, e);
    if (rc == S3L_EINVALID_INPUT || rc == S3L_ETOO_LARGE)
        rc = bad_record(l, rec, e);
    return rc ? fail(l, rc, e) : 0;
}

/*
 * Converts the lines of span s into w's lane: runs of lines through the fast path, and each line
 * it does not take through convert_one (scanned, converted or handled as a bad record). A fatal
 * failure is recorded for every lane and returned. e is clear on entry.
 */
static int convert_lines(struct worker *w, struct s3l__lines *s, struct s3l_error *e)
{
    struct s3l__lanes *l = w->l;
    const struct s3l_row_sink *sink = &l->cfg.sinks[w->lane];
    for (;;) {
        uint64_t rows = 0;
        int rc = s3l__convert_fast_lines(w->conv, s, UINT64_MAX, sink, &rows, e);
        if (rc)
            return fail(l, s3l__lane_failure(sink, rc, e), e);
        struct s3l_record rec;
        if (!s3l__lines_next(s, &rec))
            return 0;
        if (e->code)
            s3l_error_clear(e);
        if ((rc = convert_one(w, &rec, e)) != 0)
            return rc;
        if (e->code)
            s3l_error_clear(e);
    }
}

static void convert_batch(struct worker *w, struct batch *b)
{
    struct s3l_error e = {0};
    if (b->has_span) {
        convert_lines(w, &b->span, &e);
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (e.code)
            s3l_error_clear(&e); /* clearing ~1 KiB per record cost 5% of a run */
        if (convert_one(w, &b->recs[i], &e) != 0)
            return;
    }
}

/* Closes w's lane's file (cfg->close) unless skip; a failure is recorded for every lane. */
static int close_lane(struct worker *w, bool skip)
{
    struct s3l__lanes *l = w->l;
    if (skip || !l->cfg.close)
        return 0;
    struct s3l_error e = {0};
    int rc = l->cfg.close(l->cfg.ctx, w->lane, &e);
    return rc ? fail(l, rc, &e) : 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct s3l__lanes *l = w->l;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (w->count == 0 && !w->closing && !l->stop)
            pthread_cond_wait(&l->cv, &l->mu);
        if (w->count == 0 && w->closing) {
            bool skip = l->failed != 0; /* the epoch does not commit: the file may stay */
            pthread_mutex_unlock(&l->mu);
            close_lane(w, skip);
            pthread_mutex_lock(&l->mu);
            w->closing = false;
            pthread_cond_broadcast(&l->cv);
            continue;
        }
        if (w->count == 0)
            break;
        struct batch *b = &w->b[w->head];
        bool skip = l->failed != 0;
        pthread_mutex_unlock(&l->mu);
        if (!skip)
            convert_batch(w, b);
        size_t bytes = b->bytes;
        batch_reset(b);
        pthread_mutex_lock(&l->mu);
        l->queued -= bytes;
        w->head = (w->head + 1) % NBATCH;
        w->count--;
        pthread_cond_broadcast(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int s3l__lanes_new(const struct s3l__lanes_config *cfg, struct s3l__lanes **out,
                   struct s3l_error *err)
{
    struct s3l__lanes *l = s3l_calloc(1, sizeof(*l));
    if (!l)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting %u lanes", cfg->n);
    l->cfg = *cfg;
    l->n = cfg->n;
    size_t memory = cfg->memory ? cfg->memory : 48u << 20;
    l->queue_bytes = memory / 4 > (4u << 20) ? memory / 4 : 4u << 20;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    l->next = 1;
    l->w = s3l_calloc(l->n, sizeof(*l->w));
    int rc = l->w ? 0 : s3l_error_set(err, S3L_ENOMEM, "out of memory starting lanes");
    for (unsigned i = 0; rc == 0 && i < l->n; i++) {
        struct worker *w = &l->w[i];
        w->l = l;
        w->lane = i;
        w->tail_free = true;
        for (int k = 0; k < NBATCH; k++) {
            s3l_arena_init(&w->b[k].arena, 256u << 10);
            w->b[k].recs = s3l_calloc(BATCH_RECORDS, sizeof(struct s3l_record));
            if (!w->b[k].recs)
                rc = s3l_error_set(err, S3L_ENOMEM, "out of memory starting lanes");
        }
        if (rc == 0)
            rc = s3l_converter_new(cfg->schema, NULL, &w->conv, err);
        if (rc == 0 && i > 0) { /* lane 0 is the reading thread's */
            if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
                rc = s3l_error_set(err, S3L_EINTERNAL, "cannot start lane thread %u", i);
            else
                w->started = true;
        }
    }
    if (rc) {
        s3l__lanes_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

/* Hands b[tail] over to w under mu (the queue bound allowing it). */
static void push(struct s3l__lanes *l, struct worker *w, size_t bytes)
{
    l->queued += bytes;
    w->count++;
    w->tail = (w->tail + 1) % NBATCH;
    w->tail_free = w->count < NBATCH;
    pthread_cond_broadcast(&l->cv);
}

/*
 * Hands worker w the batch the reader filled, once the queued bytes leave room for it (or nothing
 * else is queued).
 */
static void hand_over(struct s3l__lanes *l, struct worker *w)
{
    size_t bytes = w->b[w->tail].bytes;
    pthread_mutex_lock(&l->mu);
    while (l->queued > 0 && l->queued + bytes > l->queue_bytes)
        pthread_cond_wait(&l->cv, &l->mu);
    push(l, w, bytes);
    pthread_mutex_unlock(&l->mu);
}

/* hand_over without waiting: false when the queue is full. */
static bool try_hand_over(struct s3l__lanes *l, struct worker *w)
{
    size_t bytes = w->b[w->tail].bytes;
    pthread_mutex_lock(&l->mu);
    bool ok = !(l->queued > 0 && l->queued + bytes > l->queue_bytes);
    if (ok)
        push(l, w, bytes);
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* The batch the reader may fill for w, or NULL while all of w's batches are taken. */
static struct batch *fill_slot(struct s3l__lanes *l, struct worker *w)
{
    if (!w->tail_free) {
        pthread_mutex_lock(&l->mu);
        w->tail_free = w->count < NBATCH;
        pthread_mutex_unlock(&l->mu);
    }
    return w->tail_free ? &w->b[w->tail] : NULL;
}

static int failure(struct s3l__lanes *l, struct s3l_error *err)
{
    pthread_mutex_lock(&l->mu);
    int rc = l->failed;
    if (rc && err)
        *err = l->err;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

static bool batch_full(const struct batch *b)
{
    return b->has_span || b->n == BATCH_RECORDS || b->bytes >= BATCH_BYTES;
}

/* Hands the reader's filled batch to its worker (unless the queue is full) and moves on to the
 * next worker. Returns whether it did. */
static bool pass_on(struct s3l__lanes *l)
{
    if (!try_hand_over(l, &l->w[l->next]))
        return false;
    l->next = l->next + 1 < l->n ? l->next + 1 : 1;
    return true;
}

static bool batch_empty(const struct batch *b)
{
    return b->n == 0 && !b->has_span;
}

/*
 * The batch to fill for the next worker, handing over a filled one first; NULL when every batch
 * of that worker is taken (or the queue is full). full(b) says whether b can take no more.
 */
static struct batch *next_slot(struct s3l__lanes *l, bool (*full)(const struct batch *))
{
    struct batch *b = fill_slot(l, &l->w[l->next]);
    if (b && full(b)) {
        b = pass_on(l) ? fill_slot(l, &l->w[l->next]) : NULL;
        if (b && full(b))
            b = NULL;
    }
    return b;
}

static bool span_full(const struct batch *b)
{
    return !batch_empty(b);
}

int s3l__lanes_put(struct s3l__lanes *l, const struct s3l_record *rec, struct s3l_error *err)
{
    struct batch *b = NULL;
    if (l->inline_left == 0) {
        b = fill_slot(l, &l->w[l->next]);
        if (!b || batch_full(b)) {
            b = next_slot(l, batch_full);
            int rc = failure(l, err); /* a worker's failure stops the reader early */
            if (rc)
                return rc;
            if (!b)
                l->inline_left = INLINE_RUN;
        }
    }
    if (l->inline_left) {
        /* Every batch is taken: the reading thread encodes this record into lane 0 itself. */
        l->inline_left--;
        if (l->inline_err.code)
            s3l_error_clear(&l->inline_err);
        int rc = convert_one(&l->w[0], rec, &l->inline_err);
        if (rc)
            *err = l->inline_err;
        return rc;
    }
    if (batch_add(b, rec, l->cfg.keep_raw) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory queueing a record");
    if (batch_full(b) && pass_on(l))
        return failure(l, err);
    return 0;
}

int s3l__lanes_put_lines(struct s3l__lanes *l, struct s3l__lines *s, struct s3l_error *err)
{
    struct batch *b = next_slot(l, span_full);
    int rc = failure(l, err); /* a worker's failure stops the reader early */
    if (rc)
        return rc;
    if (!b) {
        /* Every batch is taken: the reading thread converts the span into lane 0 itself. */
        if (l->inline_err.code)
            s3l_error_clear(&l->inline_err);
        rc = convert_lines(&l->w[0], s, &l->inline_err);
        if (rc)
            *err = l->inline_err;
        return rc;
    }
    if (batch_add_lines(b, s) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory queueing lines");
    s->p = s->end;
    pass_on(l); /* else it is handed over by the next call, or the barrier */
    return 0;
}

int s3l__lanes_barrier(struct s3l__lanes *l, uint64_t *bad, struct s3l_error *err)
{
    for (unsigned i = 1; i < l->n; i++) {
        struct worker *w = &l->w[i];
        if (w->tail_free && !batch_empty(&w->b[w->tail]))
            hand_over(l, w);
    }
    pthread_mutex_lock(&l->mu);
    for (unsigned i = 1; i < l->n; i++)
        l->w[i].closing = l->cfg.close != NULL;
    pthread_cond_broadcast(&l->cv);
    bool skip = l->failed != 0;
    pthread_mutex_unlock(&l->mu);
    close_lane(&l->w[0], skip); /* lane 0 is this thread's, closed while the workers close theirs */
    pthread_mutex_lock(&l->mu);
    for (unsigned i = 1; i < l->n; i++)
        while (l->w[i].count > 0 || l->w[i].closing)
            pthread_cond_wait(&l->cv, &l->mu);
    *bad = l->bad;
    l->bad = 0;
    pthread_mutex_unlock(&l->mu);
    l->next = 1;
    l->inline_left = 0;
    return failure(l, err);
}

uint64_t s3l__lanes_ignored(struct s3l__lanes *l)
{
    uint64_t n = 0;
    pthread_mutex_lock(&l->mu);
    for (unsigned i = 0; i < l->n; i++)
        n += s3l_converter_ignored(l->w[i].conv); /* workers are idle or between records */
    pthread_mutex_unlock(&l->mu);
    return n;
}

void s3l__lanes_free(struct s3l__lanes *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (unsigned i = 0; l->w && i < l->n; i++) {
        struct worker *w = &l->w[i];
        if (w->started)
            pthread_join(w->thread, NULL);
        s3l_converter_free(w->conv);
        for (int k = 0; k < NBATCH; k++) {
            s3l_arena_free(&w->b[k].arena);
            s3l_free(w->b[k].recs);
        }
    }
    s3l_free(l->w);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    s3l_free(l);
}
