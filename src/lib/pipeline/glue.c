/*
 * The runner's sources and destination over the public modules: input readers and the record
 * converter (include/s3l/input.h), the store (include/s3l/store.h) and the exactly-once table
 * destination (include/s3l/destination.h).
 *
 * The table's schema is the declared one, or is inferred from the first infer_rows records of the
 * first input that has records: those records are copied aside, inferred, and then written like
 * any other. The copies are bounded by SAMPLE_BYTES (min(memory / 2, 16 MiB)), not by the number
 * of records: sampling stops once that many bytes are held (always after at least one record),
 * so wide records are inferred from fewer records than infer_rows. The raw bytes are copied only
 * when dead letters or messages need them (need_raw), and the copies are freed as soon as they are
 * replayed. A column that was null in the whole sample keeps the type of the table's schema record
 * if it has one; otherwise it waits for its first value, like a key first seen after the sample:
 * then the epoch before that record is committed and the stream reopened with the grown schema
 * (never a guessed type). With a declared schema, keys it lacks are ignored and counted.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runner.h"
#include "s3l/destination.h"
#include "s3l/input.h"
#include "s3l/s3.h"
#include "s3l/store.h"

/* A copy of a record of the inference sample, or of a bad record met while sampling. */
struct held {
    struct s3l_record rec; /* values, raw and strings point into the sample's arena */
    int code;              /* 0, or the reader's error for a bad record */
    bool broken;           /* that error is the input's broken structure (s3l_reader_broken) */
    uint64_t line_after;   /* the number of the line at rec.end_offset */
    char *message;         /* its message (arena) */
};

struct glue {
    const struct s3l_pipeline_options *o;
    const char *id;
    char *tpath;
    struct s3l_store *store;
    struct s3l_dest *dest;
    struct s3l_dest_stream *stream;
    struct s3l_schema *schema; /* the schema of the stream, owned */
    struct s3l_converter *conv;
    struct s3l_row_sink *sinks; /* per lane */
    enum s3l_input_format fmt;
    uint64_t bytes0; /* store->bytes_written at the last commit */
    bool saw_pending;
    struct s3l__lanes *lanes; /* worker threads when lanes > 1, else NULL (convert inline) */
    struct s3l_pipeline_stats *stats;
    bool grow;                /* the schema was inferred: new keys with values add columns */
    struct s3l_schema *grown; /* the schema to reopen the stream with, at the next record */
    uint64_t ignored;         /* values ignored by converters already freed */
};

struct glue_source {
    struct s3l__source base;
    struct glue *g;
    struct s3l_input_position *pos;
    struct s3l_reader *reader;
    int fd;
    uint64_t start; /* the reader's offset when opened (bytes_in counts from it) */
    uint64_t add;   /* added to the reader's offsets: a stream's committed offset, since a
                       stream's reader counts from 0 */
    bool done;
    /* The inference sample being replayed. */
    struct s3l_arena arena;
    struct held *held;
    size_t n_held, next_held;
    /* A record with new columns, held while the runner commits the epoch before it. */
    struct s3l_arena pend_arena;
    struct held pending;
    bool has_pending;
    /* NDJSON lines not converted yet, of the span last read (valid until the next read). */
    struct s3l_lines span;
};

/* The bytes of a span past its first line: a lane's share of work at a time (~2,800 flights
 * lines), small enough that the lanes finish together, large enough that handing one over costs
 * nothing next to converting it. */
#define SPAN_BYTES (256u << 10)

/*
 * Whether copies of records keep their raw bytes: dead letters are those bytes, and the converter
 * counts line breaks in them to name the line of a bad value in a record that spans lines (a
 * JSON array's element, a CSV row with a quoted line break); an NDJSON record is one line.
 */
static bool need_raw(const struct glue *g)
{
    return g->o->bad_records == S3L_BAD_RECORDS_DEAD_LETTER || g->fmt != S3L_INPUT_NDJSON;
}

/* ---- Destination -------------------------------------------------------------------------- */

/* Opens (or reopens, after the schema grew) the destination for this pipeline. */
static int open_dest(struct glue *g, struct s3l_error *err)
{
    const struct s3l_pipeline_options *o = g->o;
    struct s3l_pq_options pq;
    s3l_pq_options_init(&pq);
    pq.codec = o->codec;
    pq.level = o->codec_level;
    if (o->row_group_bytes)
        pq.row_group_bytes = o->row_group_bytes;
    pq.row_group_rows = o->row_group_rows;
    struct s3l_dest_options d = {0};
    d.version = S3L_DEST_OPTIONS_VERSION;
    d.pipeline_id = g->id;
    d.file_size = o->file_size;
    d.lanes = o->lanes;
    d.allow_type_changes = o->allow_type_changes;
    d.parquet = &pq;
    d.memory = o->memory;
    return s3l_dest_open(g->store, &d, &g->dest, err);
}

/*
 * Opens the destination and hands the runner the positions recorded with the last committed
 * epoch. Opening commits an epoch left pending by an interrupted run (same copies, same names)
 * and otherwise writes nothing: the destination claims its generation only when it first stages
 * something, so a rerun with nothing new leaves the destination byte-identical. The checkpoint is
 * peeked at first only to tell the user that a pending epoch was recovered.
 */
static int g_positions(void *ctx, char **json, bool *pending, struct s3l_error *err)
{
    struct glue *g = ctx;
    *json = NULL;
    *pending = false;
    int rc = s3l_pipeline_peek(g->store, g->id, NULL, &g->saw_pending, NULL, err);
    if (rc == 0)
        rc = open_dest(g, err);
    if (rc)
        return rc;
    *pending = g->saw_pending; /* committed by now; the runner reports it */
    const char *state = s3l_dest_state(g->dest);
    if (state && !(*json = s3l_strdup(state)))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    g->bytes0 = g->store->bytes_written;
    return 0;
}

static int g_start(void *ctx, uint64_t *recovered, struct s3l_error *err)
{
    struct glue *g = ctx;
    *recovered = g->saw_pending ? s3l_dest_committed_epoch(g->dest) : 0;
    return 0;
}

static int g_commit(void *ctx, const char *positions_json, struct s3l__commit_info *info,
                    struct s3l_error *err)
{
    struct glue *g = ctx;
    struct s3l_dest_commit_info ci;
    memset(&ci, 0, sizeof(ci));
    if (g->lanes) {
        /* Every row the positions cover must be in the lanes' files before the commit point. */
        uint64_t bad = 0;
        int rc = s3l__lanes_barrier(g->lanes, &bad, err);
        g->stats->rows -= bad;
        g->stats->rows_bad += bad;
        if (rc)
            return rc;
    }
    int rc = s3l_dest_commit(g->dest, positions_json, &ci, err);
    if (rc)
        return rc;
    info->epoch = ci.epoch;
    info->files = ci.files;
    info->rows = ci.rows;
    info->bytes = g->store->bytes_written - g->bytes0;
    g->bytes0 = g->store->bytes_written;
    return 0;
}

static int ensure_stream(struct glue *g, struct s3l_error *err);

static int g_reject(void *ctx, const void *raw, size_t len, const char *reason,
                    struct s3l_error *err)
{
    struct glue *g = ctx;
    int rc = ensure_stream(g, err);
    return rc ? rc : s3l_dest_reject(g->stream, raw, len, reason, err);
}

static void g_close(void *ctx)
{
    (void)ctx; /* the glue is torn down by s3l__glue_run */
}

static const struct s3l__dest_ops glue_dest_ops = {g_positions, g_start, g_commit, g_reject,
                                                   g_close};

/* ---- Schema ------------------------------------------------------------------------------- */

static int lanes_reject(void *ctx, const void *raw, size_t len, const char *reason,
                        struct s3l_error *err)
{
    struct glue *g = ctx;
    return s3l_dest_reject(g->stream, raw, len, reason, err);
}

static int lanes_close(void *ctx, unsigned lane, struct s3l_error *err)
{
    struct glue *g = ctx;
    return s3l_dest_lane_close(g->stream, lane, err);
}

static void lanes_report(void *ctx, const char *reason)
{
    struct glue *g = ctx;
    if (!g->o->report)
        return;
    struct s3l_pipeline_report r = {S3L_EVENT_BAD_RECORD, g->stats, NULL, 0, reason};
    g->o->report(g->o->report_ctx, &r);
}

/* Opens the stream with g->schema and makes the converter and the lane sinks. */
static int open_stream(struct glue *g, struct s3l_error *err)
{
    if (g->schema->n_fields == 0)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "table %s: the sampled records give no column: no key that can "
                             "name a column (not empty, without NUL) has a non-null value; "
                             "declare the schema with --schema",
                             g->tpath);
    int rc = s3l_dest_stream(g->dest, g->o->ns, g->o->table, g->schema, &g->stream, err);
    if (rc == 0)
        rc = s3l_converter_new(g->schema, NULL, &g->conv, err);
    unsigned lanes = g->o->lanes ? g->o->lanes : 1;
    if (rc == 0 && !(g->sinks = s3l_calloc(lanes, sizeof(*g->sinks))))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory opening table %s", g->tpath);
    for (unsigned i = 0; rc == 0 && i < lanes; i++)
        rc = s3l_dest_lane_sink(g->stream, i, &g->sinks[i]);
    if (rc == 0 && lanes > 1) {
        struct s3l__lanes_config lc = {
            lanes,        g->schema,    g->sinks,    g->o->bad_records, need_raw(g), g->o->memory,
            lanes_reject, lanes_report, lanes_close, g};
        rc = s3l__lanes_new(&lc, &g->lanes, err);
    }
    return rc;
}

/* The table's schema record, or NULL when there is none. */
static int read_record(struct glue *g, struct s3l_schema **out, struct s3l_error *err)
{
    char *json = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = s3l_dest_read_schema(g->store, g->tpath, &json, &len, err);
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

static bool is_int(enum s3l_type_id id)
{
    return id >= S3L_TYPE_INT8 && id <= S3L_TYPE_UINT64;
}

/*
 * Whether values inferred as type `in` go into a column recorded as `rec` without loss, so the
 * recorded type is kept and no type change is reported: no value seen yet; the same type; any
 * value into a json column; integers into integer (range-checked per value by the converter),
 * float or decimal columns; floats into float64; a date or a timestamp into a timestamp; structs
 * whose common children fit (children only one side has are schema growth, not a change); lists
 * and maps whose items fit.
 */
static bool fits_recorded(const struct s3l_type *in, const struct s3l_type *rec)
{
    if (in->id == 0 || rec->id == S3L_TYPE_JSON || s3l_type_equal(in, rec))
        return true;
    if (is_int(in->id))
        return is_int(rec->id) || rec->id == S3L_TYPE_FLOAT32 || rec->id == S3L_TYPE_FLOAT64 ||
               rec->id == S3L_TYPE_DECIMAL128;
    if (in->id == S3L_TYPE_FLOAT32 || in->id == S3L_TYPE_FLOAT64)
        return rec->id == S3L_TYPE_FLOAT64;
    if (in->id == S3L_TYPE_DATE32 || in->id == S3L_TYPE_TIMESTAMP)
        return rec->id == S3L_TYPE_TIMESTAMP;
    if (in->id != rec->id)
        return false;
    if (in->id == S3L_TYPE_STRUCT) {
        for (size_t i = 0; i < in->n_children; i++)
            for (size_t j = 0; j < rec->n_children; j++)
                if (strcmp(in->children[i].name, rec->children[j].name) == 0 &&
                    !fits_recorded(&in->children[i].type, &rec->children[j].type))
                    return false;
        return true;
    }
    if ((in->id == S3L_TYPE_LIST || in->id == S3L_TYPE_MAP) && in->n_children == rec->n_children) {
        for (size_t i = 0; i < in->n_children; i++)
            if (!fits_recorded(&in->children[i].type, &rec->children[i].type))
                return false;
        return true;
    }
    return false;
}

/*
 * The schema from an inference sample: the recorded columns first, with their recorded types
 * (a column the sample saw only as null keeps its type this way, and so does one whose values
 * fit the recorded type: fits_recorded), then the inferred new ones. A column whose inferred
 * type does not fit takes the inferred type: the destination then merges the stream's schema
 * into the record (s3l_schema_merge), which is SCHEMA_DRIFT naming table, column and both
 * types, or with allow_type_changes updates the record.
 */
static int schema_from_sample(struct glue *g, struct s3l_infer *inf, struct s3l_error *err)
{
    struct s3l_schema *inferred = NULL, *rec = NULL;
    int rc = s3l_infer_schema(inf, &inferred);
    if (rc)
        return s3l_error_set(err, rc, "out of memory inferring the schema of %s", g->tpath);
    rc = read_record(g, &rec, err);
    if (rc == 0 && rec) {
        for (size_t i = 0; rc == 0 && i < inferred->n_fields; i++) {
            const struct s3l_field *f = &inferred->fields[i];
            int k = s3l_schema_find(rec, f->name, strlen(f->name));
            if (k < 0) {
                rc = s3l_schema_add_field(rec, f, err);
            } else if (!fits_recorded(&f->type, &rec->fields[k].type)) {
                struct s3l_type t;
                if (s3l_type_copy(&t, &f->type) != 0) {
                    rc = s3l_error_set(err, S3L_ENOMEM, "out of memory inferring %s", g->tpath);
                } else {
                    s3l_type_cleanup(&rec->fields[k].type);
                    rec->fields[k].type = t;
                    rec->fields[k].nullable = rec->fields[k].nullable || f->nullable;
                }
            }
        }
        s3l_schema_free(inferred);
        inferred = rec;
    }
    if (rc) {
        s3l_schema_free(inferred);
        return rc;
    }
    g->schema = inferred;
    g->grow = true;
    return 0;
}

static int ensure_stream(struct glue *g, struct s3l_error *err)
{
    if (g->stream)
        return 0;
    if (!g->schema) {
        struct s3l_schema *rec = NULL;
        int rc = read_record(g, &rec, err);
        if (rc)
            return rc;
        g->schema = rec ? rec : s3l_schema_new();
        if (!g->schema)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    return open_stream(g, err);
}

/* ---- Sources ------------------------------------------------------------------------------ */

/* The most bytes of records held for inference (after the first record): see the top. */
static size_t sample_bytes(const struct s3l_pipeline_options *o)
{
    size_t m = (o->memory ? o->memory : 48u << 20) / 2;
    return m < (16u << 20) ? m : 16u << 20;
}

/* Copies rec (tape, strings, source name and, when keep_raw, its raw bytes) into arena a. */
static int hold(struct s3l_arena *a, const struct s3l_record *rec, bool keep_raw, struct held *h)
{
    memset(h, 0, sizeof(*h));
    h->rec = *rec;
    struct s3l_value *v = NULL;
    if (rec->n_values) {
        v = s3l_arena_alloc(a, rec->n_values * sizeof(*v));
        if (!v)
            return S3L_ENOMEM;
        memcpy(v, rec->values, rec->n_values * sizeof(*v));
    }
    for (size_t i = 0; i < rec->n_values; i++) {
        if (v[i].kind != S3L_VALUE_STRING && v[i].kind != S3L_VALUE_NUMBER)
            continue;
        char *p = s3l_arena_strndup(a, v[i].str ? v[i].str : "", v[i].len);
        if (!p)
            return S3L_ENOMEM;
        v[i].str = p;
    }
    h->rec.values = v;
    h->rec.raw = rec->raw && keep_raw ? s3l_arena_strndup(a, rec->raw, rec->raw_len) : NULL;
    if (!h->rec.raw)
        h->rec.raw_len = 0;
    h->rec.source = rec->source ? s3l_arena_strndup(a, rec->source, strlen(rec->source)) : NULL;
    if ((rec->raw && keep_raw && !h->rec.raw) || (rec->source && !h->rec.source))
        return S3L_ENOMEM;
    return 0;
}

/*
 * Reads the inference sample of the first input with records: up to infer_rows records, or fewer
 * once sample_bytes are held (bad records are kept in order too, to be reported when replayed),
 * infers the schema, opens the stream. The sample is then replayed by src_next.
 */
static int sample(struct glue_source *s, struct s3l_error *err)
{
    struct glue *g = s->g;
    size_t cap = g->o->infer_rows ? g->o->infer_rows : 1000;
    struct s3l_infer_options io = {S3L_INFER_OPTIONS_VERSION, g->o->nested_as_json,
                                   g->o->timestamp_unit};
    struct s3l_infer *inf = s3l_infer_new(&io);
    s->held = s3l_calloc(cap + 1, sizeof(*s->held));
    if (!inf || !s->held) {
        s3l_infer_free(inf);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory sampling %s", s->pos->path);
    }
    int rc = 0;
    bool keep_raw = need_raw(g);
    size_t max_bytes = sample_bytes(g->o);
    while (rc == 0 && s3l_infer_count(inf) < cap && s->n_held <= cap &&
           (s->n_held == 0 || s->arena.used_total < max_bytes)) {
        struct s3l_record rec;
        struct s3l_error e = {0};
        int r = s3l_reader_next(s->reader, &rec, &e);
        if (r == 0)
            break;
        struct held *h = &s->held[s->n_held];
        if (r == 1 || r == S3L_EINVALID_INPUT || r == S3L_ETOO_LARGE) {
            rc = hold(&s->arena, &rec, keep_raw, h);
            h->line_after = s3l_reader_line(s->reader);
            if (rc == 0 && r != 1) {
                h->code = r;
                h->broken = s3l_reader_broken(s->reader);
                h->message = s3l_arena_strndup(&s->arena, e.message, strlen(e.message));
            } else if (rc == 0) {
                rc = s3l_infer_add(inf, &h->rec);
            }
            if (rc)
                rc = s3l_error_set(err, S3L_ENOMEM, "out of memory sampling %s", s->pos->path);
            s->n_held++;
            if (r != 1 && (s->n_held > cap || h->broken))
                break; /* a broken input repeats its error: nothing more to sample */
            continue;
        }
        *err = e;
        rc = r;
    }
    if (rc == 0 && s3l_infer_count(inf) > 0)
        rc = schema_from_sample(g, inf, err);
    if (rc == 0 && g->schema)
        rc = open_stream(g, err);
    s3l_infer_free(inf);
    return rc;
}

/* Converts rec (after which the input is at line line_after) into lane's sink. */
static int convert(struct glue_source *s, unsigned lane, const struct s3l_record *rec,
                   uint64_t line_after, uint64_t *offset_after, uint64_t *line_out,
                   struct s3l_slice *raw, struct s3l_error *err)
{
    *offset_after = rec->end_offset + s->add;
    *line_out = line_after;
    *raw = s3l_slice_make(rec->raw, rec->raw_len);
    int rc = s->g->lanes ? s3l__lanes_put(s->g->lanes, rec, err)
                         : s3l_convert(s->g->conv, rec, &s->g->sinks[lane], err);
    if (rc < 0 && !s->g->lanes)
        rc = s3l__lane_failure(&s->g->sinks[lane], rc, err);
    return rc == 0 ? 1 : rc;
}

/* Records a CSV input's header in its position, once known. */
static int note_header(struct glue_source *s)
{
    if (s->g->fmt != S3L_INPUT_CSV || s->pos->csv_header)
        return 0;
    size_t len = 0;
    const char *h = s3l_reader_csv_header(s->reader, &len);
    if (h && !(s->pos->csv_header = s3l_strndup(h, len)))
        return S3L_ENOMEM;
    return 0;
}

/* ---- Schema growth ------------------------------------------------------------------------ */

/*
 * A copy of the schema grown by the keys of rec that it lacks and whose value has a type (a null,
 * an empty array or an object of nulls says nothing yet), top-level or nested in a struct
 * (s3l_infer_grow), or NULL when there are none.
 */
static int new_columns(struct glue *g, const struct s3l_record *rec, struct s3l_schema **out,
                       struct s3l_error *err)
{
    struct s3l_infer_options io = {S3L_INFER_OPTIONS_VERSION, g->o->nested_as_json,
                                   g->o->timestamp_unit};
    if (s3l_infer_grow(g->schema, rec, &io, out, NULL) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory growing the schema of %s", g->tpath);
    return 0;
}

/*
 * Reopens the destination with the grown schema, after the runner committed the epoch before
 * the record that brought the new columns: the new stream records the added columns in the
 * table's schema record, and the files of later epochs have them.
 */
static int regrow(struct glue *g, struct s3l_error *err)
{
    s3l__lanes_free(g->lanes);
    g->lanes = NULL;
    if (g->conv)
        g->ignored += s3l_converter_ignored(g->conv);
    s3l_converter_free(g->conv);
    g->conv = NULL;
    s3l_free(g->sinks);
    g->sinks = NULL;
    s3l_dest_free(g->dest);
    g->dest = NULL;
    g->stream = NULL;
    s3l_schema_free(g->schema);
    g->schema = g->grown;
    g->grown = NULL;
    int rc = open_dest(g, err);
    return rc ? rc : open_stream(g, err);
}

/* Converts rec, unless it brings new columns: then it is held and the runner asked to commit. */
static int deliver(struct glue_source *s, unsigned lane, const struct s3l_record *rec,
                   uint64_t line_after, uint64_t *offset_after, uint64_t *line_out,
                   struct s3l_slice *raw, struct s3l_error *err)
{
    struct glue *g = s->g;
    if (g->grow && g->stream) {
        int rc = new_columns(g, rec, &g->grown, err);
        if (rc)
            return rc;
        if (g->grown) {
            s3l_arena_free(&s->pend_arena); /* a wide record's block is not kept */
            if (hold(&s->pend_arena, rec, need_raw(g), &s->pending))
                return s3l_error_set(err, S3L_ENOMEM, "out of memory holding a record");
            s->pending.line_after = line_after;
            s->has_pending = true;
            return S3L__SOURCE_BARRIER;
        }
    }
    return convert(s, lane, rec, line_after, offset_after, line_out, raw, err);
}

/*
 * An unscanned NDJSON line: into the lanes (without schema growth, which needs the keys here), or
 * through the converter's fast path. S3L_CONVERT_FALLBACK when it must be scanned here first.
 */
static int fast(struct glue_source *s, unsigned lane, const struct s3l_record *rec,
                uint64_t *offset_after, uint64_t *line_out, struct s3l_slice *raw,
                struct s3l_error *err)
{
    struct glue *g = s->g;
    uint64_t line_after = s3l_reader_line(s->reader);
    if (g->lanes && !g->grow)
        return convert(s, lane, rec, line_after, offset_after, line_out, raw, err);
    if (g->lanes)
        return S3L_CONVERT_FALLBACK;
    int rc = s3l_convert_fast(g->conv, rec, &g->sinks[lane], err);
    if (rc == S3L_CONVERT_FALLBACK)
        return rc;
    if (rc < 0)
        rc = s3l__lane_failure(&g->sinks[lane], rc, err);
    *offset_after = rec->end_offset + s->add;
    *line_out = line_after;
    *raw = s3l_slice_make(rec->raw, rec->raw_len);
    return rc == 0 ? 1 : rc;
}

/* Whether NDJSON lines come in spans: the stream is open, and no lane needs them scanned here
 * (schema growth with lanes looks at every record's keys on this thread). */
static bool by_spans(const struct glue_source *s)
{
    const struct glue *g = s->g;
    return g->fmt == S3L_INPUT_NDJSON && g->stream && !(g->lanes && g->grow);
}

/*
 * A bad NDJSON record that is a file's last line without a line end: most likely a line still
 * being appended (a writer caught mid-line). Failing, skipping or committing it would make the
 * rest of that line, once appended, a bad record or an extension of a committed line (refused
 * forever): it is left unread instead, reported, and the input ends before it. true when so.
 */
static bool partial_last_line(struct glue_source *s, const struct s3l_record *rec,
                              const struct s3l_error *why, uint64_t *offset_after,
                              uint64_t *line_after)
{
    struct glue *g = s->g;
    if (g->fmt != S3L_INPUT_NDJSON || !s->pos->replayable || !rec->raw ||
        rec->end_offset != rec->offset + rec->raw_len)
        return false; /* a line end was read: the line is whole */
    s->done = true;
    *offset_after = rec->offset + s->add;
    *line_after = rec->line;
    if (g->o->report) {
        char msg[S3L_ERROR_MESSAGE_MAX + 512];
        snprintf(msg, sizeof(msg),
                 "%s line %llu (byte offset %llu): the last line has no line end and is not a "
                 "valid record yet (%.300s): left unread, as a line still being appended; the "
                 "next run reads it once it is whole", rec->source, (unsigned long long)rec->line,
                 (unsigned long long)rec->offset, why->message);
        struct s3l_pipeline_report r = {S3L_EVENT_PARTIAL_LINE, g->stats, NULL, 0, msg};
        g->o->report(g->o->report_ctx, &r);
    }
    return true;
}

/*
 * Puts rows from the current span (not empty): all of it into the lanes, or up to max_rows
 * through the converter's fast path into lane's sink. A line the fast path does not take is
 * scanned here and goes the generic way alone (deliver: it may bring new columns), or is
 * returned as a bad record.
 */
static int span_rows(struct glue_source *s, unsigned lane, uint64_t max_rows,
                     uint64_t *offset_after, uint64_t *line_after, struct s3l_slice *raw,
                     struct s3l_error *err)
{
    struct glue *g = s->g;
    if (g->lanes) {
        uint64_t rows = s->span.rows;
        int rc = s3l__lanes_put_lines(g->lanes, &s->span, err);
        s->span.p = s->span.end;
        *offset_after = s3l_reader_offset(s->reader) + s->add;
        *line_after = s3l_reader_line(s->reader);
        return rc ? rc : (int)rows;
    }
    uint64_t rows = 0;
    int rc = s3l_convert_fast_lines(g->conv, &s->span, max_rows, &g->sinks[lane], &rows, err);
    if (rc < 0)
        rc = s3l__lane_failure(&g->sinks[lane], rc, err);
    *offset_after = s->span.offset + s->add;
    *line_after = s->span.line;
    if (rc || rows)
        return rc ? rc : (int)rows;
    struct s3l_record rec;
    if (!s3l_lines_next(&s->span, &rec))
        return s3l_error_set(err, S3L_EINTERNAL, "%s: a span without rows", s->pos->path);
    rc = s3l_reader_scan(s->reader, &rec, err);
    if (rc != 1) {
        if (rc == S3L_EINVALID_INPUT && partial_last_line(s, &rec, err, offset_after, line_after)) {
            s3l_error_clear(err);
            return 0;
        }
        *offset_after = rec.end_offset + s->add;
        *line_after = s->span.line;
        *raw = s3l_slice_make(rec.raw, rec.raw_len);
        return rc;
    }
    return deliver(s, lane, &rec, s->span.line, offset_after, line_after, raw, err);
}

/* The end of the input: what follows the last record is consumed too. */
static int at_end(struct glue_source *s, uint64_t *offset_after, uint64_t *line_after)
{
    s->done = true;
    *offset_after = s3l_reader_offset(s->reader) + s->add;
    *line_after = s3l_reader_line(s->reader);
    /* After a JSON array's last element come "]" and white space, which no append can
     * extend: the input is consumed to its end, so a rerun finds it up to date. */
    struct stat st;
    if (s->g->fmt == S3L_INPUT_JSON && s->pos->replayable && fstat(s->fd, &st) == 0 &&
        (uint64_t)st.st_size > *offset_after)
        *offset_after = (uint64_t)st.st_size;
    return 0;
}

static int src_next(struct s3l__source *base, unsigned lane, uint64_t max_rows,
                    uint64_t *offset_after, uint64_t *line_after, struct s3l_slice *raw,
                    struct s3l_error *err)
{
    struct glue_source *s = (struct glue_source *)base;
    struct glue *g = s->g;
    if (s->has_pending) {
        s->has_pending = false;
        int rc = regrow(g, err);
        return rc ? rc
                  : convert(s, lane, &s->pending.rec, s->pending.line_after, offset_after,
                            line_after, raw, err);
    }
    if (s->held && s->next_held == s->n_held) {
        /* The sample is replayed (the last one's raw bytes were valid until this call). */
        s3l_arena_free(&s->arena);
        s3l_free(s->held);
        s->held = NULL;
        s->n_held = s->next_held = 0;
    }
    if (s->done)
        return 0;
    if (!g->stream && !g->schema) {
        int rc = sample(s, err);
        if (rc)
            return rc;
        if (note_header(s))
            return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    if (s->next_held < s->n_held) {
        struct held *h = &s->held[s->next_held++];
        if (h->code) {
            *offset_after = h->rec.end_offset + s->add;
            *line_after = h->line_after;
            *raw = s3l_slice_make(h->rec.raw, h->rec.raw_len);
            s3l_error_set(err, h->code, "%s", h->message ? h->message : "bad record");
            return h->broken ? S3L__SOURCE_BROKEN : h->code;
        }
        return deliver(s, lane, &h->rec, h->line_after, offset_after, line_after, raw, err);
    }
    if (s->span.p != s->span.end)
        return span_rows(s, lane, max_rows, offset_after, line_after, raw, err);
    if (by_spans(s)) {
        int rc = s3l_reader_next_lines(s->reader, max_rows, SPAN_BYTES, &s->span, err);
        if (rc == 1)
            return span_rows(s, lane, max_rows, offset_after, line_after, raw, err);
        if (rc == 0)
            return at_end(s, offset_after, line_after);
        if (rc == S3L_READER_IDLE) {
            *offset_after = s3l_reader_offset(s->reader) + s->add;
            *line_after = s3l_reader_line(s->reader);
            return S3L__SOURCE_IDLE;
        }
        if (rc < 0)
            return rc;
        /* S3L_READER_ONE: this line comes alone (it is reported as too long) */
    }
    struct s3l_record rec;
    /* With the stream open, NDJSON lines come unscanned: most go through the converter's fast
     * path, or to the lanes, which scan them on their own threads (lanes.c). */
    int rc = g->stream ? s3l_reader_next_raw(s->reader, &rec, err)
                       : s3l_reader_next(s->reader, &rec, err);
    if (rc == 1 && !rec.values) {
        rc = fast(s, lane, &rec, offset_after, line_after, raw, err);
        if (rc != S3L_CONVERT_FALLBACK)
            return rc;
        rc = s3l_reader_scan(s->reader, &rec, err);
    }
    if (rc == 0)
        return at_end(s, offset_after, line_after);
    if (rc != 1) {
        if (rc == S3L_EINVALID_INPUT && !s3l_reader_broken(s->reader) &&
            partial_last_line(s, &rec, err, offset_after, line_after)) {
            s3l_error_clear(err);
            return 0;
        }
        *offset_after = rec.end_offset + s->add;
        *line_after = s3l_reader_line(s->reader);
        *raw = s3l_slice_make(rec.raw, rec.raw_len);
        return s3l_reader_broken(s->reader) ? S3L__SOURCE_BROKEN : rc;
    }
    if (note_header(s))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    if (!g->stream && (rc = ensure_stream(g, err)) != 0)
        return rc;
    return deliver(s, lane, &rec, s3l_reader_line(s->reader), offset_after, line_after, raw, err);
}

static uint64_t src_bytes(struct s3l__source *base)
{
    struct glue_source *s = (struct glue_source *)base;
    return s->reader ? s3l_reader_offset(s->reader) - s->start : 0;
}

static void src_free(struct s3l__source *base)
{
    struct glue_source *s = (struct glue_source *)base;
    s3l_reader_free(s->reader);
    s3l_arena_free(&s->arena);
    s3l_arena_free(&s->pend_arena);
    s3l_free(s->held);
    s3l_free(s);
}

static const struct s3l__source_ops glue_source_ops = {src_next, src_bytes, src_free};

static int g_source_open(void *ctx, size_t i, struct s3l_input_position *pos, int fd,
                         uint64_t offset, uint64_t skip, struct s3l__source **out,
                         struct s3l_error *err)
{
    struct glue *g = ctx;
    struct glue_source *s = s3l_calloc(1, sizeof(*s));
    if (!s)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", pos->path);
    s->base.ops = &glue_source_ops;
    s->g = g;
    s->pos = pos;
    s->fd = fd;
    /* A stream's reader counts from 0, or from skip when it drops the bytes resent before the
     * committed offset (they are read and dropped as a seek). */
    skip = pos->replayable ? 0 : skip;
    s->start = pos->replayable ? offset : skip;
    s->add = pos->replayable ? 0 : offset - skip;
    s3l_arena_init(&s->arena, 1u << 20);
    s3l_arena_init(&s->pend_arena, 64u << 10);
    struct stat st;
    /* A file already read to its end: nothing to open (a JSON array cannot resume at its end). */
    if (pos->replayable && fstat(fd, &st) == 0 && (uint64_t)st.st_size == offset && offset > 0) {
        s->done = true;
        *out = &s->base;
        return 0;
    }
    struct s3l_reader_options ro = {0};
    ro.version = S3L_READER_OPTIONS_VERSION;
    ro.format = g->fmt;
    ro.name = strcmp(pos->path, "-") == 0 ? "stdin" : pos->path; /* a FIFO or device by name */
    ro.max_record_bytes = g->o->max_record_size;
    ro.start_offset = pos->replayable ? offset : skip;
    ro.resume = !pos->replayable && offset > 0; /* a stream resent from after a record */
    ro.start_line = pos->line; /* line numbers go on where the last commit left them */
    ro.csv_header = pos->csv_header;
    ro.csv_header_len = pos->csv_header ? strlen(pos->csv_header) : 0;
    /* A stream that goes quiet hands control back, so that --commit-interval holds while it
     * is (within a quarter of the interval, 10 ms .. 1 s) and a stop request is seen. */
    int64_t ci = g->o->commit_interval_ns;
    if (!pos->replayable)
        ro.idle_ms = ci > 0 ? (int)S3L_MAX(10, S3L_MIN(1000, ci / 4000000)) : 1000;
    int rc = s3l_reader_open(fd, &ro, &s->reader, err);
    if (rc) {
        src_free(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

/* ---- The run ------------------------------------------------------------------------------ */

int s3l__glue_run(const struct s3l_pipeline_options *opts, const char *url, const char *id,
                  struct s3l_input_position *pos, const int *fds, size_t n,
                  struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                  struct s3l_error *err)
{
    struct glue g;
    memset(&g, 0, sizeof(g));
    g.o = opts;
    g.id = id;
    g.stats = stats;
    *side = S3L_SIDE_CONFIG;
    int rc =
        s3l_input_format_parse(opts->input_format ? opts->input_format : "ndjson", &g.fmt, err);
    if (rc == 0)
        rc = s3l_dest_check_disposition("append", err);
    if (rc == 0)
        rc = s3l_dest_table_path(opts->ns, opts->table, &g.tpath, err);
    if (rc == 0 && opts->schema && !(g.schema = s3l_schema_copy(opts->schema)))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory copying the schema");
    if (rc)
        goto out;
    *side = S3L_SIDE_DESTINATION;
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    so.create = true;
    so.endpoint = opts->endpoint;
    so.region = opts->region;
    struct s3l_s3_config s3c = {0};
    struct s3l_s3_store_options s3o = {0};
    if (opts->path_style) {
        s3c.version = S3L_S3_CONFIG_VERSION;
        s3c.path_style = opts->path_style;
        s3o.version = S3L_S3_STORE_OPTIONS_VERSION;
        s3o.client = &s3c;
        so.s3 = &s3o;
    }
    rc = s3l_store_open(url, &so, &g.store, err);
    if (rc)
        goto out;
    /* An id given by the caller is their decision; a derived one follows the inputs' paths. */
    if (!opts->pipeline_id &&
        (rc = s3l__check_landed_elsewhere(g.store, g.tpath, id, pos, fds, n, err)) != 0) {
        /* Only the refusal (an input another pipeline landed) is about the inputs; a failure
         * listing the markers or reading a checkpoint is the store's (missing bucket, wrong
         * secret, unreachable endpoint), and keeps its own exit code. */
        *side = rc == S3L_EINVALID_INPUT ? S3L_SIDE_INPUT : S3L_SIDE_DESTINATION;
        goto out;
    }
    struct s3l__runner_env env = {&glue_dest_ops, &g, g_source_open, &g, s3l__now_ns, 0};
    rc = s3l__runner_loop(opts, &env, pos, fds, n, stats, side, err);
    stats->values_ignored = g.ignored;
    if (g.lanes)
        stats->values_ignored += s3l__lanes_ignored(g.lanes);
    else if (g.conv)
        stats->values_ignored += s3l_converter_ignored(g.conv);
    s3l__lanes_free(g.lanes); /* joins the workers before their sinks go away */
    g.lanes = NULL;
    if (rc && g.dest)
        s3l_dest_abort(g.dest);
out:
    s3l_converter_free(g.conv);
    s3l_free(g.sinks);
    s3l_dest_free(g.dest);
    s3l_store_free(g.store);
    s3l_schema_free(g.schema);
    s3l_schema_free(g.grown);
    s3l_free(g.tpath);
    return rc;
}
