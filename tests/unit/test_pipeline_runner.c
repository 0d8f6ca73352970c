/*
 * Unit tests of the runner's loop (src/lib/pipeline/runner.c) with test doubles: a source that
 * reads one integer per line from a real file (so positions are real byte offsets with real
 * hashes) and a destination that keeps its "checkpoint" in memory and records every row, commit
 * and rejected record. Checked: epochs by rows, by time and at the end; committed offsets;
 * resume after append; nothing done on an up-to-date rerun; refusal of a rewritten input; bad
 * records failed, skipped or dead-lettered; recovery of a pending epoch; lanes.
 * Expected offsets are counted by hand from the test inputs ("1\n" is 2 bytes, "10\n" is 3).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pipeline/runner.h"

/* ---- A destination keeping everything in memory. ---- */

struct mem_dest {
    char *checkpoint; /* positions JSON of the last commit */
    bool pending;
    int starts;
    uint64_t epoch;
    int64_t rows[64]; /* rows put since the last commit, in order */
    unsigned lanes_of[64];
    size_t n_rows;
    int64_t committed[256]; /* all committed rows, in order */
    size_t n_committed;
    uint64_t epoch_rows[16]; /* rows of each committed epoch */
    size_t n_epochs;
    char rejected[8][64];
    size_t n_rejected;
    unsigned lane_in_use;
    int64_t value;
    int grows;                   /* grow requests */
    uint64_t epoch_at_grow;      /* D.epoch at the last grow request */
    size_t uncommitted_at_grow; /* rows put but not committed at the last grow request */
};

static struct mem_dest D;

static int sk_row_begin(void *ctx)
{
    (void)ctx;
    return 0;
}
static int sk_put_int(void *ctx, int64_t v)
{
    ((struct mem_dest *)ctx)->value = v;
    return 0;
}
static int sk_row_end(void *ctx, struct s3l_error *err)
{
    struct mem_dest *d = ctx;
    assert_true(d->n_rows < 64);
    d->lanes_of[d->n_rows] = d->lane_in_use;
    d->rows[d->n_rows++] = d->value;
    return 0;
}
static const struct s3l_row_sink_ops sink_ops = {
    .row_begin = sk_row_begin,
    .put_int = sk_put_int,
    .row_end = sk_row_end,
};

static int md_positions(void *ctx, char **json, bool *pending, struct s3l_error *err)
{
    struct mem_dest *d = ctx;
    *json = d->checkpoint ? s3l_strdup(d->checkpoint) : NULL;
    *pending = d->pending;
    return 0;
}

static int md_start(void *ctx, uint64_t *recovered, struct s3l_error *err)
{
    struct mem_dest *d = ctx;
    d->starts++;
    *recovered = 0;
    if (d->pending) {
        d->pending = false;
        *recovered = d->epoch;
    }
    return 0;
}

static struct s3l_row_sink md_sink(void *ctx, unsigned lane)
{
    struct mem_dest *d = ctx;
    d->lane_in_use = lane;
    struct s3l_row_sink s = {&sink_ops, d};
    return s;
}

static int md_commit(void *ctx, const char *json, struct s3l__commit_info *info,
                     struct s3l_error *err)
{
    struct mem_dest *d = ctx;
    s3l_free(d->checkpoint);
    d->checkpoint = s3l_strdup(json);
    if (d->n_rows == 0 && d->n_rejected == 0)
        return 0; /* no rows: no file, no marker, positions recorded */
    d->epoch++;
    d->epoch_rows[d->n_epochs++] = d->n_rows;
    memcpy(d->committed + d->n_committed, d->rows, d->n_rows * sizeof(int64_t));
    d->n_committed += d->n_rows;
    info->epoch = d->epoch;
    info->rows = d->n_rows;
    info->files = d->n_rows ? 1 : 0;
    info->bytes = 100;
    d->n_rows = 0;
    return 0;
}

static int md_reject(void *ctx, size_t input, const void *raw, size_t len, const char *reason,
                     struct s3l_error *err)
{
    (void)input;
    struct mem_dest *d = ctx;
    snprintf(d->rejected[d->n_rejected++], 64, "%.*s|%s", (int)len, (const char *)raw,
             strstr(reason, "offset") ? "reason ok" : "no reason");
    return 0;
}

static void md_close(void *ctx)
{
    (void)ctx;
}

/* The grow request: records the epoch committed by then and the rows not yet committed. */
static int md_grow(void *ctx, size_t input, struct s3l_error *err)
{
    (void)input;
    (void)err;
    struct mem_dest *d = ctx;
    d->grows++;
    d->epoch_at_grow = d->epoch;
    d->uncommitted_at_grow = d->n_rows;
    return 0;
}

/* Its commits finish before they return: no sync. */
static const struct s3l__dest_ops mem_dest_ops = {md_positions, md_start, md_commit, md_reject,
                                                  md_close,     md_grow,  NULL,      NULL};

/* The same destination as if its commits left the epoch finishing for a while: wait() says
 * "still finishing" to the next finish_readings calls after each commit (each a moment of the
 * fake clock's reading on), sync() ends it. */
static int finish_readings, finishing_left, waits_refused;

static int fd_commit(void *ctx, const char *json, struct s3l__commit_info *info,
                     struct s3l_error *err)
{
    int rc = md_commit(ctx, json, info, err);
    if (rc == 0 && info->epoch)
        finishing_left = finish_readings;
    return rc;
}

static int fd_sync(void *ctx, struct s3l__commit_info *info, struct s3l_error *err)
{
    (void)ctx;
    (void)err;
    finishing_left = 0;
    memset(info, 0, sizeof(*info));
    return 0;
}

static bool fd_wait(void *ctx, uint64_t timeout_ms)
{
    (void)ctx;
    (void)timeout_ms;
    if (finishing_left == 0)
        return true;
    finishing_left--;
    waits_refused++;
    return false;
}

static const struct s3l__dest_ops finishing_dest_ops = {
    md_positions, md_start, fd_commit, md_reject, md_close, md_grow, fd_sync, fd_wait};

/* ---- A source: one decimal integer per line; a line starting with 'x' is a bad record. ---- */

struct line_source {
    struct s3l__source base;
    int fd;
    uint64_t off, start;
    bool grew;
    uint64_t hold; /* rows it says it holds (read, not yet put): holds() while > 0 */
    char line[64];
};

/* Rows a new source holds when opened (as an inference sample would). */
static uint64_t hold_rows;

/* Rows a call may put at most (besides max_rows); 1 but in the tests of batching sources. */
static uint64_t batch_rows = 1;
/* max_rows the runner gave in each call, in order. */
static uint64_t max_rows_seen[64];
static size_t n_calls;

/* Reads the line at ls->off into ls->line; its length (0 at the end). */
static size_t ls_line(struct line_source *ls)
{
    size_t n = 0;
    char c;
    while (n < sizeof(ls->line) - 1 && pread(ls->fd, &c, 1, (off_t)(ls->off + n)) == 1) {
        ls->line[n++] = c;
        if (c == '\n')
            break;
    }
    ls->line[n] = 0;
    return n;
}

static int ls_next(struct s3l__source *s, unsigned lane, uint64_t max_rows,
                   uint64_t *offset_after, uint64_t *line_after, struct s3l_slice *raw,
                   enum s3l__source_signal *signal, struct s3l_error *err)
{
    struct s3l_row_sink sink = md_sink(&D, lane);
    struct line_source *ls = (struct line_source *)s;
    if (n_calls < 64)
        max_rows_seen[n_calls] = max_rows;
    n_calls++;
    assert_true(max_rows >= 1);
    int rows = 0;
    while ((uint64_t)rows < max_rows && (uint64_t)rows < batch_rows) {
        size_t n = ls_line(ls);
        if (n == 0)
            return rows;
        uint64_t line_start = ls->off;
        bool special = ls->line[0] == 'g' || ls->line[0] == 'x';
        if (special && rows > 0)
            return rows; /* the rows so far first; this line at the next call */
        ls->off += n;
        *offset_after = ls->off;
        *line_after += ls->line[n - 1] == '\n';
        if (ls->line[0] == 'g' && !ls->grew) {
            /* "g<n>": a record that needs a barrier first (like one bringing new columns). */
            ls->grew = true;
            ls->off = line_start;
            *signal = S3L__SOURCE_GROW;
            return 0;
        }
        ls->grew = false;
        if (ls->line[0] == 'g')
            memmove(ls->line, ls->line + 1, n);
        if (ls->line[0] == 'x') {
            *raw = s3l_slice_make(ls->line, n - 1);
            return s3l_error_set(err, S3L_EINVALID_INPUT, "bad record at offset %llu",
                                 (unsigned long long)line_start);
        }
        sink.ops->row_begin(sink.ctx);
        sink.ops->put_int(sink.ctx, strtoll(ls->line, NULL, 10));
        if (sink.ops->row_end(sink.ctx, err) != 0)
            return -1;
        rows++;
        if (ls->hold)
            ls->hold--;
        if (special)
            break;
    }
    return rows;
}

static uint64_t ls_bytes(struct s3l__source *s)
{
    struct line_source *ls = (struct line_source *)s;
    return ls->off - ls->start;
}

static void ls_free(struct s3l__source *s)
{
    free(s);
}

static bool ls_holds(struct s3l__source *s)
{
    return ((struct line_source *)s)->hold > 0;
}

static const struct s3l__source_ops line_source_ops = {ls_next, ls_bytes, ls_free, ls_holds};

static int ls_open(void *ctx, size_t i, struct s3l_input_position *pos, int fd, uint64_t offset,
                   uint64_t skip, struct s3l__source **out, struct s3l_error *err)
{
    (void)skip; /* files only here */
    struct line_source *ls = calloc(1, sizeof(*ls));
    assert_non_null(ls);
    ls->base.ops = &line_source_ops;
    ls->fd = fd;
    ls->off = ls->start = offset;
    ls->hold = hold_rows;
    *out = &ls->base;
    return 0;
}

static int64_t fake_now;
static int64_t fake_clock(void)
{
    return fake_now += 1000000000LL; /* every call: one second later */
}

/* ---- Harness ---- */

static char dir[128], file[160];

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/s3l_test_runner_XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof(file), "%s/in.txt", dir);
    s3l_free(D.checkpoint);
    memset(&D, 0, sizeof(D));
    batch_rows = 1;
    n_calls = 0;
    hold_rows = 0;
    return 0;
}

static int teardown(void **state)
{
    s3l_free(D.checkpoint);
    D.checkpoint = NULL;
    unlink(file);
    rmdir(dir);
    return 0;
}

static void put_file(const char *mode, const char *text)
{
    FILE *f = fopen(file, mode);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

struct events {
    int commits, up_to_date, recovered, bad;
};
static void on_report(void *ctx, const struct s3l_pipeline_report *r)
{
    struct events *e = ctx;
    e->commits += r->event == S3L_EVENT_COMMIT;
    e->up_to_date += r->event == S3L_EVENT_UP_TO_DATE;
    e->recovered += r->event == S3L_EVENT_RECOVERED;
    e->bad += r->event == S3L_EVENT_BAD_RECORD;
}

/* One run over `file` with the given options; returns the code. */
static int run(struct s3l_pipeline_options *o, struct events *ev, struct s3l_pipeline_stats *st,
               enum s3l_pipeline_side *side, struct s3l_error *err)
{
    struct s3l_input_position pos;
    int fd;
    assert_int_equal(s3l_input_open(file, &pos, &fd, err), 0);
    memset(ev, 0, sizeof(*ev));
    o->report = on_report;
    o->report_ctx = ev;
    struct s3l__runner_env env = {finish_readings ? &finishing_dest_ops : &mem_dest_ops,
                                  &D, ls_open, NULL, fake_clock, 1, NULL, NULL, 1,
                                  NULL, 0, NULL, NULL};
    memset(st, 0, sizeof(*st));
    int rc = s3l__runner_loop(o, &env, &pos, &fd, 1, st, side, err);
    close(fd);
    s3l_input_position_cleanup(&pos);
    return rc;
}

/* The committed offset of the single input, from the destination's checkpoint. */
static uint64_t committed_offset(void)
{
    struct s3l_input_position *p;
    size_t n;
    struct s3l_error err = {0};
    assert_non_null(D.checkpoint);
    assert_int_equal(s3l_positions_from_json(D.checkpoint, strlen(D.checkpoint), &p, &n, &err), 0);
    assert_int_equal(n, 1);
    uint64_t off = p[0].offset;
    s3l_positions_free(p, n);
    return off;
}

static void epochs_by_rows_then_resume_after_append(void **state)
{
    put_file("w", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"); /* 9 * 2 + 3 = 21 bytes */
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.epoch_rows = 4;
    o.commit_interval_ns = 0;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.n_epochs, 3);
    assert_int_equal(D.epoch_rows[0], 4);
    assert_int_equal(D.epoch_rows[1], 4);
    assert_int_equal(D.epoch_rows[2], 2);
    assert_int_equal(D.n_committed, 10);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(D.committed[i], (int64_t)i + 1);
    assert_int_equal(committed_offset(), 21);
    assert_int_equal(ev.commits, 3);
    assert_int_equal(st.rows, 10);
    assert_int_equal(st.bytes_in, 21);
    assert_int_equal(st.epochs, 3);
    assert_int_equal(st.last_epoch, 3);
    assert_int_equal(side, S3L_SIDE_NONE);

    /* A rerun finds everything committed: the destination is not even started. */
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(ev.up_to_date, 1);
    assert_int_equal(D.starts, 1);
    assert_int_equal(D.n_epochs, 3);

    /* Appended lines land once. */
    put_file("a", "11\n12\n");
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.starts, 2);
    assert_int_equal(D.n_epochs, 4);
    assert_int_equal(D.epoch_rows[3], 2);
    assert_int_equal(D.committed[10], 11);
    assert_int_equal(D.committed[11], 12);
    assert_int_equal(committed_offset(), 27);
    assert_int_equal(st.rows, 2);
}

static void rewritten_input_is_refused_before_start(void **state)
{
    put_file("w", "1\n2\n3\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.starts, 1);
    put_file("w", "7\n2\n3\n4\n");
    assert_int_equal(run(&o, &ev, &st, &side, &err), S3L_EINVALID_INPUT);
    assert_int_equal(side, S3L_SIDE_INPUT);
    assert_non_null(strstr(err.message, "rewritten"));
    assert_non_null(strstr(err.message, "in.txt"));
    assert_int_equal(D.starts, 1);
    assert_int_equal(D.n_committed, 3);
}

static void bad_records_fail_skip_dead_letter(void **state)
{
    put_file("w", "1\n2\nxbad\n3\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.epoch_rows = 2;
    o.commit_interval_ns = 0;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    /* fail: the epoch holding the bad record is not committed; the one before it is. */
    assert_int_equal(run(&o, &ev, &st, &side, &err), S3L_EINVALID_INPUT);
    assert_int_equal(side, S3L_SIDE_INPUT);
    assert_non_null(strstr(err.message, "offset 4"));
    assert_int_equal(D.n_committed, 2);
    assert_int_equal(committed_offset(), 4);

    /* skip: a rerun resumes after "2\n" and drops the bad line. */
    o.bad_records = S3L_BAD_RECORDS_SKIP;
    s3l_error_clear(&err);
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.n_committed, 3);
    assert_int_equal(D.committed[2], 3);
    assert_int_equal(st.rows_bad, 1);
    assert_int_equal(ev.bad, 1);
    assert_int_equal(committed_offset(), 11); /* 2 + 2 + 5 + 2 */
    assert_int_equal(D.n_rejected, 0);

    /* dead-letter: the raw record and its reason go to the destination. */
    put_file("a", "xworse\n4\n");
    o.bad_records = S3L_BAD_RECORDS_DEAD_LETTER;
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.n_rejected, 1);
    assert_string_equal(D.rejected[0], "xworse|reason ok");
    assert_int_equal(D.committed[3], 4);
    assert_int_equal(committed_offset(), 20); /* 11 + 7 + 2 */
}

static void epochs_by_time(void **state)
{
    put_file("w", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.epoch_rows = 0;
    o.commit_interval_ns = 3500000000LL; /* 3.5 s; the fake clock moves 1 s per reading */
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    /* Clock readings (1 s apart): 1 at start, then one per row: rows 1..4 read 2..5, and
     * 5 - 1 >= 3.5 s commits rows 1-4 at t = 5; rows 5..8 read 6..9 and commit at 9; row 9
     * reads 10 and is committed at the end. */
    assert_int_equal(D.n_epochs, 3);
    assert_int_equal(D.epoch_rows[0], 4);
    assert_int_equal(D.epoch_rows[1], 4);
    assert_int_equal(D.epoch_rows[2], 1);
    assert_int_equal(D.n_committed, 9);
}

/*
 * An epoch due by the interval alone waits while the one before still finishes: the run reads
 * on into it instead of waiting for that finish in the commit. The finish lasts 3 clock readings
 * after each commit; interval 3.5 s, 1 s a reading: rows 1-4 commit at t = 5 as above; rows
 * 5..8 read 6..9, due at 9 but finishing (3 refusals at 9, 10, 11 while rows 9, 10 read), so
 * rows 5-11 commit at 12; row 12 (t = 13) is committed at the end. Without the wait: 4, 4, 4.
 */
static void epochs_by_time_wait_for_the_finish_before(void **state)
{
    put_file("w", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.epoch_rows = 0;
    o.commit_interval_ns = 3500000000LL;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    finish_readings = 3;
    waits_refused = 0;
    int rc = run(&o, &ev, &st, &side, &err);
    finish_readings = 0;
    assert_int_equal(rc, 0);
    assert_int_equal(waits_refused, 3);
    assert_int_equal(D.n_epochs, 3);
    assert_int_equal(D.epoch_rows[0], 4);
    assert_int_equal(D.epoch_rows[1], 7);
    assert_int_equal(D.epoch_rows[2], 1);
    assert_int_equal(D.n_committed, 12);
    /* By rows (--epoch-rows), an epoch is what was asked for, finishing or not. */
    s3l_free(D.checkpoint);
    memset(&D, 0, sizeof(D));
    put_file("w", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    o.commit_interval_ns = 0;
    o.epoch_rows = 4;
    finish_readings = 3;
    rc = run(&o, &ev, &st, &side, &err);
    finish_readings = 0;
    assert_int_equal(rc, 0);
    assert_int_equal(D.n_epochs, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(D.epoch_rows[i], 4);
}

static void pending_epoch_is_recovered_even_when_up_to_date(void **state)
{
    put_file("w", "1\n2\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    D.pending = true; /* as if the last run died after its commit point */
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(ev.up_to_date, 0);
    assert_int_equal(ev.recovered, 1);
    assert_int_equal(D.starts, 2);
    assert_int_equal(D.n_committed, 2);
}

static void lanes_take_rows_in_turn(void **state)
{
    put_file("w", "1\n2\n3\n4\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.lanes = 2;
    o.epoch_rows = 100;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    /* Look at the lanes before the commit empties the row list: commit at the end only. */
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.n_committed, 4);
    assert_int_equal(D.lanes_of[0], 0);
    assert_int_equal(D.lanes_of[1], 1);
    assert_int_equal(D.lanes_of[2], 0);
    assert_int_equal(D.lanes_of[3], 1);
}

/*
 * A source that puts several rows per call (as the NDJSON spans do) never crosses an epoch: the
 * runner asks for at most the rows left in it. 10 rows, epochs of 4, up to 3 rows per call:
 * calls put 3,1 | 3,1 | 2 (hand count), so the epochs hold 4, 4 and 2 rows; a bad record in the
 * middle of a batch comes alone and is skipped, counted once.
 */
static void batches_stop_at_the_epoch(void **state)
{
    put_file("w", "1\n2\n3\n4\n5\nx\n6\n7\n8\n9\n10\n");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.epoch_rows = 4;
    o.commit_interval_ns = 0;
    o.bad_records = S3L_BAD_RECORDS_SKIP;
    batch_rows = 3;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(st.rows, 10);
    assert_int_equal(st.rows_bad, 1);
    assert_int_equal(D.n_epochs, 3);
    assert_int_equal(D.epoch_rows[0], 4);
    assert_int_equal(D.epoch_rows[1], 4);
    assert_int_equal(D.epoch_rows[2], 2);
    for (int i = 0; i < 10; i++)
        assert_int_equal(D.committed[i], i + 1);
    /* calls: [1 2 3] max 4, [4] max 1, [5] max 4 (stops before x), x max 3, [6 7] max 3 ... */
    assert_int_equal(max_rows_seen[0], 4);
    assert_int_equal(max_rows_seen[1], 1);
    assert_int_equal(max_rows_seen[2], 4);
    assert_int_equal(max_rows_seen[3], 3);
    assert_int_equal(max_rows_seen[4], 3);
    assert_int_equal(committed_offset(), 23); /* 9 * 2 + "10\n" + "x\n" */
}

/* An empty file is not an error (issue 10, item 12): it lands nothing (no epoch starts), and the
 * run is up to date, as with a file of blank lines. */
static void empty_input_lands_nothing(void **state)
{
    put_file("w", "");
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(err.code, 0);
    assert_int_equal(side, S3L_SIDE_NONE);
    assert_int_equal(ev.up_to_date, 1);
    assert_int_equal(ev.commits, 0);
    assert_int_equal(st.rows, 0);
    assert_int_equal(D.starts, 0);
    assert_int_equal(D.n_epochs, 0);
}

static void barrier_commits_the_epoch_before_the_record(void **state)
{
    put_file("w", "1\n2\ng3\n4\n"); /* offsets after each line: 2, 4, 7, 9 */
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.epoch_rows = 100;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_int_equal(D.n_epochs, 2);
    assert_int_equal(D.epoch_rows[0], 2); /* 1, 2: committed before the barrier record */
    assert_int_equal(D.epoch_rows[1], 2); /* 3, 4 */
    assert_int_equal(D.committed[2], 3);
    assert_int_equal(st.rows, 4);
    assert_int_equal(committed_offset(), 9);
    /* The destination was asked to grow once, after the epoch before the record committed. */
    assert_int_equal(D.grows, 1);
    assert_int_equal(D.epoch_at_grow, 1);
    assert_int_equal(D.uncommitted_at_grow, 0);
}

/*
 * A stop requested while the source holds records it read (an inference sample): the runner
 * still has them put and commits them (issue 10, item 1), then stops without reading on.
 */
static void stop_puts_what_the_source_holds(void **state)
{
    put_file("w", "1\n2\n3\n4\n5\n"); /* offsets after each line: 2, 4, 6, 8, 10 */
    hold_rows = 3;
    static volatile sig_atomic_t stop = 1;
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.stop = &stop;
    struct events ev;
    struct s3l_pipeline_stats st;
    enum s3l_pipeline_side side;
    struct s3l_error err = {0};
    assert_int_equal(run(&o, &ev, &st, &side, &err), 0);
    assert_true(st.stopped);
    assert_int_equal(st.rows, 3);
    assert_int_equal(D.n_committed, 3);
    assert_int_equal(D.committed[2], 3);
    assert_int_equal(committed_offset(), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(epochs_by_rows_then_resume_after_append, setup, teardown),
        cmocka_unit_test_setup_teardown(rewritten_input_is_refused_before_start, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_records_fail_skip_dead_letter, setup, teardown),
        cmocka_unit_test_setup_teardown(epochs_by_time, setup, teardown),
        cmocka_unit_test_setup_teardown(epochs_by_time_wait_for_the_finish_before, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(pending_epoch_is_recovered_even_when_up_to_date, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(lanes_take_rows_in_turn, setup, teardown),
        cmocka_unit_test_setup_teardown(empty_input_lands_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(batches_stop_at_the_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(barrier_commits_the_epoch_before_the_record, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stop_puts_what_the_source_holds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
