/*
 * The runner's destination side: the table it writes, over the exactly-once destination
 * (include/s3l/destination.h). It opens the destination (which commits an epoch left pending),
 * hands the runner the recorded input positions, opens the table's stream with the run's schema,
 * owns the converter, the lane sinks and the parallel lanes the sources write through, commits
 * epochs and dead-letters bad records. When the source side finds a record that grows an
 * inferred schema, the runner commits the epoch before it and then asks this side to grow
 * (t_grow): the stream is reopened with the grown schema, so the epochs after the growing record
 * have its columns and the table's schema record gains them.
 */
#include <string.h>

#include "commit/commit.h"
#include "runner.h"
#include "s3l/destination.h"
#include "s3l/input.h"
#include "schema/schema_int.h"

bool s3l__glue_need_raw(const struct s3l__glue *g)
{
    return g->o->bad_records == S3L_BAD_RECORDS_DEAD_LETTER || g->fmt != S3L_INPUT_NDJSON;
}

/* Opens (or reopens, after a schema grew) the destination for this pipeline. */
static int open_dest(struct s3l__run *r, struct s3l_error *err)
{
    const struct s3l_pipeline_options *o = r->o;
    struct s3l_pq_options pq;
    s3l_pq_options_init(&pq);
    pq.codec = o->codec;
    pq.level = o->codec_level;
    if (o->row_group_bytes)
        pq.row_group_bytes = o->row_group_bytes;
    pq.row_group_rows = o->row_group_rows;
    struct s3l_dest_options d = {0};
    d.version = S3L_DEST_OPTIONS_VERSION;
    d.pipeline_id = r->id;
    d.file_size = o->file_size;
    d.lanes = o->lanes;
    d.allow_type_changes = o->allow_type_changes;
    /* The runner reads its inputs again from the recorded positions after a crash, and settles
     * every commit whose positions it hands on (pipeline.md "Pipelined commits"): the files'
     * uploads and the commit point can run behind the reading too (issue 14 item 3). */
    d.defer_commit_point = true;
    d.parquet = &pq;
    d.memory = o->memory;
    /* Recorded in the checkpoint for gc's liveness rule (issue 10 item 12), rounded up to ms. */
    d.has_commit_interval = true;
    d.commit_interval_ms =
        o->commit_interval_ns > 0 ? (uint64_t)(o->commit_interval_ns + 999999) / 1000000 : 0;
    return s3l_dest_open(r->store, &d, &r->dest, err);
}

/*
 * Opens the destination and hands the runner the positions recorded with the last committed
 * epoch. Opening commits an epoch left pending by an interrupted run (same copies, same names)
 * and otherwise writes nothing: the destination claims its generation only when it first stages
 * something, so a rerun with nothing new leaves the destination byte-identical. The checkpoint is
 * read once, by the open; whether it recovered a pending epoch (for the user's report) comes from
 * the destination (issue 14 item 2).
 */
static int t_positions(void *ctx, char **json, bool *pending, struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    *json = NULL;
    *pending = false;
    int rc = open_dest(r, err);
    if (rc)
        return rc;
    r->saw_pending = s3l_dest_recovered(r->dest) != 0; /* no second read of the checkpoint */
    *pending = r->saw_pending; /* committed by now; the runner reports it */
    r->stats->last_epoch = s3l_dest_committed_epoch(r->dest); /* also when nothing is new */
    const char *state = s3l_dest_state(r->dest);
    if (state && !(*json = s3l_strdup(state)))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    r->bytes0 = s3l__store_access_bytes_written(r->store);
    return 0;
}

static int t_start(void *ctx, uint64_t *recovered, struct s3l_error *err)
{
    (void)err;
    struct s3l__run *r = ctx;
    *recovered = r->saw_pending ? s3l_dest_committed_epoch(r->dest) : 0;
    return 0;
}

/* What the destination reported (an epoch finished, or the one now finishing), for the runner;
 * bytes are those written since the last report. */
static void t_info(struct s3l__run *r, const struct s3l_dest_commit_info *ci,
                   struct s3l__commit_info *info)
{
    info->epoch = ci->epoch;
    info->files = ci->files;
    info->rows = ci->rows;
    info->requests = ci->requests;
    info->finishing = ci->finishing;
    info->staged_left = ci->staged_left;
    info->staged_left_why = ci->staged_left_why;
    if (!ci->epoch && ci->finishing) {
        /* Handed over, nothing finished yet: the bytes so far (the epoch's data files) go with
         * the report of its finish, which the runner accounts (an epoch 0 report it drops). */
        info->bytes = 0;
        return;
    }
    info->bytes = s3l__store_access_bytes_written(r->store) - r->bytes0;
    r->bytes0 = s3l__store_access_bytes_written(r->store);
}

static int t_commit(void *ctx, const char *positions_json, struct s3l__commit_info *info,
                    struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    struct s3l_dest_commit_info ci;
    memset(&ci, 0, sizeof(ci));
    for (size_t k = 0; k < r->n_tables; k++) {
        struct s3l__glue *g = &r->tables[k];
        if (!g->lanes)
            continue;
        /* Every row the positions cover must be in the lanes' files before the commit point. */
        uint64_t bad = 0;
        int rc = s3l__lanes_barrier(g->lanes, &bad, err);
        r->stats->rows -= bad;
        r->stats->rows_bad += bad;
        if (rc)
            return rc;
    }
    int rc = s3l_dest_commit(r->dest, positions_json, &ci, err);
    if (rc == 0)
        t_info(r, &ci, info);
    return rc;
}

/* Waits for the epoch a commit left finishing (s3l_dest_sync) and reports it. */
static int t_sync(void *ctx, struct s3l__commit_info *info, struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    struct s3l_dest_commit_info ci;
    memset(&ci, 0, sizeof(ci));
    int rc = r->dest ? s3l_dest_sync(r->dest, &ci, err) : 0;
    if (rc == 0)
        t_info(r, &ci, info);
    return rc;
}

static bool t_wait(void *ctx, uint64_t timeout_ms)
{
    struct s3l__run *r = ctx;
    return !r->dest || s3l_dest_wait_finish(r->dest, timeout_ms);
}

static int t_reject(void *ctx, size_t input, const void *raw, size_t len, const char *reason,
                    struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    struct s3l__glue *g = &r->tables[r->input_table[input]];
    int rc = s3l__glue_ensure_stream(g, err);
    if (rc == S3L_EINVALID_INPUT && g->schema && g->schema->n_fields == 0) {
        /* A bad record before any record gave a column (every sampled record bad): its dead
         * letter goes with an epoch of the table, which cannot open without a column. The error
         * names the record (its file, line and column), not only the table. */
        s3l_error_clear(err);
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "%.600s: not dead-lettered: no record before it gave table %s a "
                             "column, so no epoch can hold it; declare the schema with --schema",
                             reason, g->tpath);
    }
    return rc ? rc : s3l_dest_reject(g->stream, raw, len, reason, err);
}

static void t_close(void *ctx)
{
    (void)ctx; /* the run is torn down by s3l__glue_run */
}

/* Frees a table's stream parts (its lanes first: they feed its sinks), keeping its schema. */
static void close_stream(struct s3l__glue *g)
{
    s3l__lanes_free(g->lanes);
    g->lanes = NULL;
    if (g->conv)
        g->ignored += s3l_converter_ignored(g->conv);
    s3l_converter_free(g->conv);
    g->conv = NULL;
    s3l_free(g->sinks);
    g->sinks = NULL;
    g->stream = NULL;
}

/*
 * The runner committed the epoch before the record that brought new columns to the table of
 * `input`: the destination is reopened (a stream's schema is fixed while it is open), the other
 * tables' streams as they were, then that table's with the grown schema (g->grown), whose new
 * stream records the added columns in the table's schema record; the files of later epochs have
 * them. A drift met reopening it stops that table only (its stream stays closed).
 */
static int t_grow(void *ctx, size_t input, struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    struct s3l__glue *grown = &r->tables[r->input_table[input]];
    if (!grown->grown)
        return 0;
    bool *open = s3l_calloc(r->n_tables, sizeof(*open));
    if (!open)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory growing table %s", grown->tpath);
    for (size_t k = 0; k < r->n_tables; k++) {
        open[k] = r->tables[k].stream != NULL;
        close_stream(&r->tables[k]);
    }
    s3l_dest_free(r->dest);
    r->dest = NULL;
    s3l_schema_free(grown->schema);
    grown->schema = grown->grown;
    grown->grown = NULL;
    int rc = open_dest(r, err);
    for (size_t k = 0; rc == 0 && k < r->n_tables; k++)
        if (open[k] && &r->tables[k] != grown)
            rc = s3l__glue_open_stream(&r->tables[k], err);
    s3l_free(open);
    return rc ? rc : s3l__glue_open_stream(grown, err);
}

const struct s3l__dest_ops s3l__glue_dest_ops = {t_positions, t_start, t_commit, t_reject,
                                                 t_close,     t_grow,  t_sync, t_wait};

/* ---- The stream and its lanes -------------------------------------------------------------- */

static int lanes_reject(void *ctx, const void *raw, size_t len, const char *reason,
                        struct s3l_error *err)
{
    struct s3l__glue *g = ctx;
    return s3l_dest_reject(g->stream, raw, len, reason, err);
}

static int lanes_close(void *ctx, unsigned lane, struct s3l_error *err)
{
    struct s3l__glue *g = ctx;
    return s3l_dest_lane_close(g->stream, lane, err);
}

static void lanes_report(void *ctx, const char *reason)
{
    struct s3l__glue *g = ctx;
    if (!g->o->report)
        return;
    struct s3l_pipeline_report r = {S3L_EVENT_BAD_RECORD, g->stats, NULL, 0, reason, NULL, NULL};
    g->o->report(g->o->report_ctx, &r);
}

int s3l__glue_open_stream(struct s3l__glue *g, struct s3l_error *err)
{
    if (g->schema->n_fields == 0)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "table %s: the sampled records give no column: no key that can "
                             "name a column (not empty, without NUL) has a non-null value; "
                             "declare the schema with --schema",
                             g->tpath);
    int rc = s3l_dest_stream(g->run->dest, g->o->ns, g->o->table, g->schema, &g->stream, err);
    if (rc == 0)
        rc = s3l_converter_new(g->schema, NULL, &g->conv, err);
    unsigned lanes = g->o->lanes ? g->o->lanes : 1;
    if (rc == 0 && !(g->sinks = s3l_calloc(lanes, sizeof(*g->sinks))))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory opening table %s", g->tpath);
    for (unsigned i = 0; rc == 0 && i < lanes; i++)
        rc = s3l_dest_lane_sink(g->stream, i, &g->sinks[i]);
    if (rc == 0 && lanes > 1) {
        struct s3l__lanes_config lc = {lanes,
                                       g->schema,
                                       g->sinks,
                                       g->o->bad_records,
                                       s3l__glue_need_raw(g),
                                       g->o->memory,
                                       lanes_reject,
                                       lanes_report,
                                       lanes_close,
                                       g};
        rc = s3l__lanes_new(&lc, &g->lanes, err);
    }
    return rc;
}

int s3l__glue_read_record(struct s3l__glue *g, struct s3l_schema **out, struct s3l_error *err)
{
    char *json = NULL;
    size_t len = 0;
    *out = NULL;
    /* Through the open destination, which keeps it for the stream: one GET of it per run. */
    int rc = g->run->dest ? s3l_dest_read_record(g->run->dest, g->tpath, &json, &len, err)
                     : s3l_dest_read_schema(g->store, g->tpath, &json, &len, err);
    if (rc == S3L_ENOT_FOUND) {
        s3l_error_clear(err);
        return 0;
    }
    if (rc == 0) {
        rc = s3l_schema_from_json(json, len, out, err);
        if (rc)
            s3l_error_prefix(err, "schema record of table %s", g->tpath);
    }
    s3l_free(json);
    return rc;
}

int s3l__glue_ensure_stream(struct s3l__glue *g, struct s3l_error *err)
{
    if (g->stream)
        return 0;
    if (!g->schema) {
        struct s3l_schema *rec = NULL;
        int rc = s3l__glue_read_record(g, &rec, err);
        if (rc)
            return rc;
        g->schema = rec ? rec : s3l_schema_new();
        if (!g->schema)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    return s3l__glue_open_stream(g, err);
}
