/*
 * The runner's source side: one source per input, over the input readers and the record
 * converter (include/s3l/input.h). A source reads records from its input's offset and converts
 * each into a lane sink of the table side (table.c) as one row, through the fastest way the
 * schema allows: NDJSON lines in spans through the converter's fast path or to the lanes, other
 * records one by one. It reports bad records to the runner (which fails, skips or dead-letters
 * them), a broken input, a quiet stream, and the end of the input, with the offset and line just
 * after what it consumed.
 *
 * With an inferred schema, the first source that has records first copies aside an inference
 * sample: up to infer_rows records, bounded by sample_bytes (min(memory / 2, 16 MiB), after at
 * least one record), so wide records are inferred from fewer records. The raw bytes are copied
 * only when dead letters or messages need them (s3l__glue_need_raw), and the copies are freed as
 * soon as they are replayed. Each record is then offered to schema growth (growth.c): one that
 * grows the schema is held while the runner commits the epoch before it and has the table side
 * grow, and is converted at the next call.
 */
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "runner.h"
#include "s3l/input.h"
#include "schema/schema_int.h"

/* A copy of a record of the inference sample, or of a bad record met while sampling. */
struct held {
    struct s3l_record rec; /* values, raw and strings point into the sample's arena */
    int code;              /* 0, or the reader's error for a bad record */
    bool broken;           /* that error is the input's broken structure (s3l_reader_broken) */
    bool partial;          /* a half-written last line (partial_line): the input ends before it */
    uint64_t line_after;   /* the number of the line at rec.end_offset */
    char *message;         /* its message (arena) */
};

struct source {
    struct s3l__source base;
    struct s3l__glue *g;
    struct s3l_input_position *pos;
    struct s3l_reader *reader;
    int fd;
    uint64_t start; /* the reader's offset when opened (bytes_in counts from it) */
    uint64_t add;   /* added to the reader's offsets: a stream's committed offset, since a
                       stream's reader counts from 0 */
    bool done;
    bool sample_ended; /* the inference sample met the end of the input */
    bool drained;      /* after a stop request: the lines already buffered were taken */
    /* The inference sample being replayed. */
    struct s3l_arena arena;
    struct held *held;
    size_t n_held, next_held;
    /* A record with new columns, held while the runner commits the epoch before it. */
    struct s3l_arena pend_arena;
    struct held pending;
    bool has_pending;
    /* NDJSON lines not converted yet, of the span last read (valid until the next read). */
    struct s3l__lines span;
    struct s3l__ident ident; /* at_least_once: each record's _openetl_id (ident.c), else NULL */
};

/* Where a call's answer goes: the runner's out arguments of s3l__source_ops.next. */
struct out {
    uint64_t *offset;
    uint64_t *line;
    struct s3l_slice *raw;
    enum s3l__source_signal *signal;
};

/* The bytes of a span past its first line: a lane's share of work at a time (~2,800 flights
 * lines), small enough that the lanes finish together, large enough that handing one over costs
 * nothing next to converting it. */
#define SPAN_BYTES (256u << 10)

/* ---- The inference sample ------------------------------------------------------------------ */

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

/* Whether the run was asked to stop (a signal): nothing more is read, what was read is put. */
static bool stopping(const struct source *s)
{
    return s->g->o->stop && *s->g->o->stop;
}

/*
 * The next record for the inference sample: s3l_reader_next, or for an NDJSON stream the next
 * line of a span (s3l__reader_next_lines, scanned here), so that a quiet stream hands control
 * back (S3L_READER_IDLE) instead of holding the sample, and the run, until more bytes come.
 * *line_after: the number of the line after the record.
 */
static int sample_next(struct source *s, struct s3l_record *rec, uint64_t *line_after,
                       struct s3l_error *e)
{
    if (s->g->fmt == S3L_INPUT_NDJSON && !s->pos->replayable && s->span.p == s->span.end) {
        int rc = s3l__reader_next_lines(s->reader, UINT64_MAX, SPAN_BYTES, &s->span, e);
        if (rc == 0 || rc == S3L_READER_IDLE || rc < 0)
            return rc;
        /* rc 1: a span; S3L__READER_ONE: the next line comes alone, from s3l_reader_next */
    }
    if (s->span.p == s->span.end) {
        int rc = s3l_reader_next(s->reader, rec, e);
        *line_after = s3l_reader_line(s->reader);
        return rc;
    }
    if (!s3l__lines_next(&s->span, rec))
        return s3l_error_set(e, S3L_EINTERNAL, "%s: a span without rows", s->pos->path);
    *line_after = s->span.line;
    return s3l__reader_scan(s->reader, rec, e);
}

/* A bad NDJSON record that is a file's last line without a line end (see partial_last_line). */
static bool is_partial(const struct source *s, const struct s3l_record *rec)
{
    return s->g->fmt == S3L_INPUT_NDJSON && s->pos->replayable && rec->raw &&
           rec->end_offset == rec->offset + rec->raw_len;
}

/*
 * Holds the sample's record or bad record r (the reader's answer for rec) in the next slot.
 * Returns 1 when the sample ends with it (a broken input repeats its error; a half-written last
 * line ends the input), 0 to go on, or S3L_ENOMEM.
 */
static int hold_sampled(struct source *s, struct s3l_infer *inf, int r,
                        const struct s3l_record *rec, uint64_t line_after,
                        const struct s3l_error *e, size_t cap, struct s3l_error *err)
{
    struct held *h = &s->held[s->n_held];
    int rc = hold(&s->arena, rec, s3l__glue_need_raw(s->g), h);
    h->line_after = line_after;
    if (rc == 0 && r != 1) {
        h->code = r;
        h->broken = s3l_reader_broken(s->reader);
        h->partial = r == S3L_EINVALID_INPUT && !h->broken && is_partial(s, rec);
        h->message = s3l_arena_strndup(&s->arena, e->message, strlen(e->message));
        if (!h->message)
            rc = S3L_ENOMEM;
    } else if (rc == 0) {
        rc = s3l_infer_add(inf, &h->rec);
    }
    if (rc)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory sampling %s", s->pos->path);
    s->n_held++;
    return r != 1 && (s->n_held > cap || h->broken || h->partial);
}

/* The sample inferred no column (its keys were all null, empty or unnamable): an error of the
 * input, naming it and the lines sampled, as the records held cannot be converted. */
static int no_column(const struct source *s, struct s3l_error *err)
{
    const struct held *first = &s->held[0], *last = &s->held[s->n_held - 1];
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s lines %llu to %llu: the %zu sampled records give no column of table "
                         "%s: no key that can name a column (not empty, without NUL) has a "
                         "non-null value; declare the schema with --schema", s->pos->path,
                         (unsigned long long)first->rec.line, (unsigned long long)last->rec.line,
                         s->n_held, s->g->tpath);
}

/*
 * Reads the inference sample of the first input with records: up to infer_rows records, or fewer
 * once sample_bytes are held (bad records are kept in order too, to be reported when replayed),
 * infers the schema, opens the stream. The sample is then replayed by src_next. On a stream the
 * sample also ends when --commit-interval has passed since it began, and at a stop request, so
 * that the rows read so far are committed in time: the schema comes from the records read by then
 * (none: the sample goes on at the next call).
 */
static int sample(struct source *s, struct s3l_error *err)
{
    struct s3l__glue *g = s->g;
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
    size_t max_bytes = sample_bytes(g->o);
    int64_t t0 = s3l__now_ns(), ci = g->o->commit_interval_ns;
    while (rc == 0 && s3l_infer_count(inf) < cap && s->n_held <= cap &&
           (s->n_held == 0 || s->arena.used_total < max_bytes)) {
        if (!s->pos->replayable && (stopping(s) || (ci > 0 && s3l__now_ns() - t0 >= ci)))
            break;
        struct s3l_record rec;
        struct s3l_error e = {0};
        uint64_t line_after = 0;
        int r = sample_next(s, &rec, &line_after, &e);
        if (r == 1 && s->ident.kind)
            r = s3l__ident_add(&s->ident, &rec, &rec, &e);
        if (r == 0) {
            s->sample_ended = true;
            break;
        }
        if (r == S3L_READER_IDLE)
            continue;
        if (r == 1 || r == S3L_EINVALID_INPUT || r == S3L_ETOO_LARGE) {
            rc = hold_sampled(s, inf, r, &rec, line_after, &e, cap, err);
            if (rc == 1) {
                rc = 0;
                break;
            }
            continue;
        }
        *err = e;
        rc = r;
    }
    struct s3l_schema *hint = NULL;
    if (rc == 0 && s3l_infer_count(inf) > 0 && s3l_reader_schema_hint(s->reader, &hint) != 0)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory sampling %s", s->pos->path);
    if (rc == 0 && s3l_infer_count(inf) > 0)
        rc = s3l__glue_sample_schema(g, inf, hint, err);
    s3l_schema_free(hint);
    if (rc == 0 && g->schema && g->schema->n_fields == 0)
        rc = no_column(s, err);
    if (rc == 0 && g->schema)
        rc = s3l__glue_open_stream(g, err);
    s3l_infer_free(inf);
    return rc;
}

/* Records a CSV input's header and delimiter in its position, once known. */
static int note_header(struct source *s)
{
    if (s->g->fmt != S3L_INPUT_CSV)
        return 0;
    if (!s->pos->csv_delimiter)
        s->pos->csv_delimiter = s3l_reader_csv_delimiter(s->reader);
    if (s->pos->csv_header)
        return 0;
    size_t len = 0;
    const char *h = s3l_reader_csv_header(s->reader, &len);
    if (h && !(s->pos->csv_header = s3l_strndup(h, len)))
        return S3L_ENOMEM;
    return 0;
}

/* ---- Records into rows --------------------------------------------------------------------- */

/* Converts rec (after which the input is at line line_after) into lane's sink. */
static int convert(struct source *s, unsigned lane, const struct s3l_record *rec,
                   uint64_t line_after, struct out *o, struct s3l_error *err)
{
    struct s3l__glue *g = s->g;
    *o->offset = rec->end_offset + s->add;
    *o->line = line_after;
    *o->raw = s3l_slice_make(rec->raw, rec->raw_len);
    int rc = g->lanes ? s3l__lanes_put(g->lanes, rec, err)
                      : s3l_convert(g->conv, rec, &g->sinks[lane], err);
    if (rc < 0 && !g->lanes)
        rc = s3l__lane_failure(&g->sinks[lane], rc, err);
    return rc == 0 ? 1 : rc;
}

/* Converts rec, unless it brings new columns: then it is held and the runner asked to grow. */
static int deliver(struct source *s, unsigned lane, const struct s3l_record *rec,
                   uint64_t line_after, struct out *o, struct s3l_error *err)
{
    int rc = s3l__glue_check_growth(s->g, rec, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return convert(s, lane, rec, line_after, o, err);
    s3l_arena_free(&s->pend_arena); /* a wide record's block is not kept */
    if (hold(&s->pend_arena, rec, s3l__glue_need_raw(s->g), &s->pending))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory holding a record");
    s->pending.line_after = line_after;
    s->has_pending = true;
    *o->signal = S3L__SOURCE_GROW;
    return 0;
}

/*
 * An unscanned NDJSON line: into the lanes (without schema growth, which needs the keys here), or
 * through the converter's fast path. S3L__CONVERT_FALLBACK when it must be scanned here first.
 */
static int fast(struct source *s, unsigned lane, const struct s3l_record *rec, struct out *o,
                struct s3l_error *err)
{
    struct s3l__glue *g = s->g;
    uint64_t line_after = s3l_reader_line(s->reader);
    if (g->lanes && !g->grow)
        return convert(s, lane, rec, line_after, o, err);
    if (g->lanes)
        return S3L__CONVERT_FALLBACK;
    int rc = s3l__convert_fast(g->conv, rec, &g->sinks[lane], err);
    if (rc == S3L__CONVERT_FALLBACK)
        return rc;
    if (rc < 0)
        rc = s3l__lane_failure(&g->sinks[lane], rc, err);
    *o->offset = rec->end_offset + s->add;
    *o->line = line_after;
    *o->raw = s3l_slice_make(rec->raw, rec->raw_len);
    return rc == 0 ? 1 : rc;
}

/* Whether NDJSON lines come in spans: the stream is open (with lanes and schema growth, the
 * lines of a span are then scanned here one by one, since growth looks at every record's keys on
 * this thread; a span is still how a quiet stream hands control back). */
static bool by_spans(const struct source *s)
{
    const struct s3l__glue *g = s->g;
    return g->fmt == S3L_INPUT_NDJSON && g->stream && !s->ident.kind;
}

/*
 * The reader met the end of the input. A compressed input records that it was read to its end
 * at the compressed size read (a rerun with the file unchanged is up to date), and one that ended
 * inside its last gzip member or zstd frame (a file still being written) says so: what that
 * member decoded to so far is read, an unterminated last record in it is left unread.
 */
static void reached_end(struct source *s)
{
    if (!s->pos->compression)
        return;
    s->pos->raw_size = s3l_reader_raw_offset(s->reader);
    s->pos->raw_done = true;
    const struct s3l__glue *g = s->g;
    if (!s3l_reader_cut(s->reader) || !g->o->report)
        return;
    char msg[S3L_ERROR_MESSAGE_MAX + 512];
    snprintf(msg, sizeof(msg),
             "%s: the compressed data ends inside its last %s at compressed byte offset %llu, "
             "as a file still being written: what it decompressed to is read up to byte offset "
             "%llu, an unterminated last record is left unread; the next run reads on once it is "
             "whole", s->pos->path, s->pos->compression == S3L_INPUT_GZIP ? "gzip member"
                                                                          : "zstd frame",
             (unsigned long long)s->pos->raw_size,
             (unsigned long long)s3l_reader_offset(s->reader));
    struct s3l_pipeline_report r = {S3L_EVENT_PARTIAL_LINE, g->stats, NULL, 0, msg, NULL, NULL};
    g->o->report(g->o->report_ctx, &r);
}

/* Reports a half-written last line (rec; why: its error) as left unread. */
static void note_partial(struct source *s, const struct s3l_record *rec, const char *why)
{
    struct s3l__glue *g = s->g;
    /* A followed file waits for the line end (the runner reopens its source after a change),
     * so a line being written is not news at every look; the runner names one still unended
     * when the run stops. */
    if (!g->o->report || (g->o->follow && s->pos->replayable))
        return;
    char msg[S3L_ERROR_MESSAGE_MAX + 512];
    snprintf(msg, sizeof(msg),
             "%s line %llu (byte offset %llu): the last line has no line end and is not a "
             "valid record yet (%.300s): left unread, as a line still being appended; the "
             "next run reads it once it is whole", rec->source, (unsigned long long)rec->line,
             (unsigned long long)rec->offset, why);
    struct s3l_pipeline_report r = {S3L_EVENT_PARTIAL_LINE, g->stats, NULL, 0, msg, NULL, NULL};
    g->o->report(g->o->report_ctx, &r);
}

/*
 * A bad NDJSON record that is a file's last line without a line end: most likely a line still
 * being appended (a writer caught mid-line). Failing, skipping or committing it would make the
 * rest of that line, once appended, a bad record or an extension of a committed line (refused
 * forever): it is left unread instead, reported, and the input ends before it. true when so.
 */
static bool partial_last_line(struct source *s, const struct s3l_record *rec,
                              const struct s3l_error *why, struct out *o)
{
    if (!is_partial(s, rec))
        return false; /* a line end was read: the line is whole */
    s->done = true;
    reached_end(s);
    *o->offset = rec->offset + s->add;
    *o->line = rec->line;
    note_partial(s, rec, why->message);
    return true;
}

/*
 * Puts rows from the current span (not empty): all of it into the lanes, or up to max_rows
 * through the converter's fast path into lane's sink. A line the fast path does not take is
 * scanned here and goes the generic way alone (deliver: it may bring new columns), or is
 * returned as a bad record.
 */
static int span_rows(struct source *s, unsigned lane, uint64_t max_rows, struct out *o,
                     struct s3l_error *err)
{
    struct s3l__glue *g = s->g;
    if (g->lanes && !g->grow) {
        uint64_t rows = s->span.rows;
        int rc = s3l__lanes_put_lines(g->lanes, &s->span, err);
        s->span.p = s->span.end;
        *o->offset = s3l_reader_offset(s->reader) + s->add;
        *o->line = s3l_reader_line(s->reader);
        return rc ? rc : (int)rows;
    }
    uint64_t rows = 0;
    int rc = 0;
    /* With lanes and growth (lines left from the sample's span), each line goes alone. */
    if (!g->lanes)
        rc = s3l__convert_fast_lines(g->conv, &s->span, max_rows, &g->sinks[lane], &rows, err);
    if (rc < 0)
        rc = s3l__lane_failure(&g->sinks[lane], rc, err);
    *o->offset = s->span.offset + s->add;
    *o->line = s->span.line;
    if (rc || rows)
        return rc ? rc : (int)rows;
    struct s3l_record rec;
    if (!s3l__lines_next(&s->span, &rec))
        return s3l_error_set(err, S3L_EINTERNAL, "%s: a span without rows", s->pos->path);
    rc = s3l__reader_scan(s->reader, &rec, err);
    if (rc != 1) {
        if (rc == S3L_EINVALID_INPUT && partial_last_line(s, &rec, err, o)) {
            s3l_error_clear(err);
            return 0;
        }
        *o->offset = rec.end_offset + s->add;
        *o->line = s->span.line;
        *o->raw = s3l_slice_make(rec.raw, rec.raw_len);
        return rc;
    }
    return deliver(s, lane, &rec, s->span.line, o, err);
}

/* The end of the input: what follows the last record is consumed too. */
static int at_end(struct source *s, struct out *o)
{
    s->done = true;
    *o->offset = s3l_reader_offset(s->reader) + s->add;
    *o->line = s3l_reader_line(s->reader);
    reached_end(s);
    /* After a JSON array's last element come "]" and white space, which no append can
     * extend: the input is consumed to its end, so a rerun finds it up to date. (A compressed
     * input's size counts compressed bytes: its reader consumed what follows already.) */
    struct s3l__os_stat st;
    if (s->g->fmt == S3L_INPUT_JSON && s->pos->replayable && !s->pos->compression &&
        s3l__os_fstat(s->fd, s->pos->path, &st, NULL) == 0 && st.size > *o->offset)
        *o->offset = st.size;
    return 0;
}

/* ---- The source's calls -------------------------------------------------------------------- */

/* The next record of the replayed sample: converted, or its error given back as it was met. */
static int replay_held(struct source *s, unsigned lane, struct out *o, struct s3l_error *err)
{
    struct held *h = &s->held[s->next_held++];
    if (!h->code)
        return deliver(s, lane, &h->rec, h->line_after, o, err);
    if (h->partial) {
        /* The input ends before it; nothing after it was sampled. */
        s->done = true;
        reached_end(s);
        *o->offset = h->rec.offset + s->add;
        *o->line = h->rec.line;
        note_partial(s, &h->rec, h->message);
        return 0;
    }
    *o->offset = h->rec.end_offset + s->add;
    *o->line = h->line_after;
    *o->raw = s3l_slice_make(h->rec.raw, h->rec.raw_len);
    s3l_error_set(err, h->code, "%s", h->message ? h->message : "bad record");
    if (h->broken)
        *o->signal = S3L__SOURCE_BROKEN;
    return h->code;
}

/* The next NDJSON lines as a span; *alone when the caller must read the next line alone. */
static int next_span(struct source *s, unsigned lane, uint64_t max_rows, struct out *o,
                     bool *alone, struct s3l_error *err)
{
    *alone = false;
    int rc = s3l__reader_next_lines(s->reader, max_rows, SPAN_BYTES, &s->span, err);
    if (rc == 1)
        return span_rows(s, lane, max_rows, o, err);
    if (rc == 0)
        return at_end(s, o);
    if (rc == S3L_READER_IDLE) {
        *o->offset = s3l_reader_offset(s->reader) + s->add;
        *o->line = s3l_reader_line(s->reader);
        *o->signal = S3L__SOURCE_IDLE;
        return 0;
    }
    if (rc < 0)
        return rc;
    *alone = true; /* S3L__READER_ONE: this line comes alone (it is reported as too long) */
    return 0;
}

/* The next record read alone: unscanned when the stream is open (the fast path), else scanned. */
static int next_record(struct source *s, unsigned lane, struct out *o, struct s3l_error *err)
{
    struct s3l__glue *g = s->g;
    struct s3l_record rec;
    /* With the stream open, NDJSON lines come unscanned: most go through the converter's fast
     * path, or to the lanes, which scan them on their own threads (lanes.c). */
    int rc = g->stream && !s->ident.kind ? s3l__reader_next_raw(s->reader, &rec, err)
                                         : s3l_reader_next(s->reader, &rec, err);
    if (rc == 1 && s->ident.kind) /* scanned: its id needs its position */
        rc = s3l__ident_add(&s->ident, &rec, &rec, err);
    if (rc == 1 && !rec.values) {
        rc = fast(s, lane, &rec, o, err);
        if (rc != S3L__CONVERT_FALLBACK)
            return rc;
        rc = s3l__reader_scan(s->reader, &rec, err);
    }
    if (rc == 0)
        return at_end(s, o);
    if (rc == S3L_READER_IDLE) {
        /* A quiet stream (CSV, a JSON array, or a line read alone): nothing consumed; the
         * runner commits by time and sees a stop request, then calls again. */
        *o->offset = s3l_reader_offset(s->reader) + s->add;
        *o->line = s3l_reader_line(s->reader);
        *o->signal = S3L__SOURCE_IDLE;
        return 0;
    }
    if (rc != 1) {
        if (rc == S3L_EINVALID_INPUT && !s3l_reader_broken(s->reader) &&
            partial_last_line(s, &rec, err, o)) {
            s3l_error_clear(err);
            return 0;
        }
        *o->offset = rec.end_offset + s->add;
        *o->line = s3l_reader_line(s->reader);
        *o->raw = s3l_slice_make(rec.raw, rec.raw_len);
        if (s3l_reader_broken(s->reader))
            *o->signal = S3L__SOURCE_BROKEN;
        return rc;
    }
    if (note_header(s))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    if (!g->stream && (rc = s3l__glue_ensure_stream(g, err)) != 0)
        return rc;
    return deliver(s, lane, &rec, s3l_reader_line(s->reader), o, err);
}

/*
 * The schema of an inferred run, at the first input with records: on a stream into a table that
 * has a schema record, that record (no sample to wait for: records are converted at once, and
 * keys it lacks grow it); otherwise from the inference sample.
 */
static int begin_schema(struct source *s, struct s3l_error *err)
{
    if (!s->pos->replayable) {
        bool found = false;
        int rc = s3l__glue_schema_from_record(s->g, &found, err);
        if (rc || found)
            return rc;
    }
    int rc = sample(s, err);
    if (rc == 0 && note_header(s))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    return rc;
}

static int next_rows(struct s3l__source *base, unsigned lane, uint64_t max_rows,
                     uint64_t *offset_after, uint64_t *line_after, struct s3l_slice *raw,
                     enum s3l__source_signal *signal, struct s3l_error *err)
{
    struct source *s = (struct source *)base;
    struct s3l__glue *g = s->g;
    struct out o = {offset_after, line_after, raw, signal};
    if (s->has_pending) {
        /* The table side grew the schema for it. */
        s->has_pending = false;
        return convert(s, lane, &s->pending.rec, s->pending.line_after, &o, err);
    }
    if (s->held && s->next_held == s->n_held) {
        /* The sample is replayed (the last one's raw bytes were valid until this call). */
        s3l_arena_free(&s->arena);
        s3l_free(s->held);
        s->held = NULL;
        s->n_held = s->next_held = 0;
    }
    if (s->next_held < s->n_held)
        return replay_held(s, lane, &o, err);
    if (s->done)
        return 0;
    if (!g->stream && !g->schema) {
        int rc = begin_schema(s, err);
        if (rc) {
            /* Not a bad record the runner may skip: the sample gave no schema (no column), or
             * its input could not be read on. Its records have no converter to go to, so the
             * input fails here (before, --bad-records skip skipped this error and the next
             * call converted a sampled record without a converter). */
            if (rc == S3L_EINVALID_INPUT || rc == S3L_ETOO_LARGE)
                *signal = S3L__SOURCE_BROKEN;
            return rc;
        }
        if (s->next_held < s->n_held)
            return replay_held(s, lane, &o, err);
        if (!g->schema && !s->pos->replayable && !s->sample_ended) {
            *signal = S3L__SOURCE_IDLE; /* the sample ended by time or a stop: nothing yet */
            return 0;
        }
    }
    if (g->stream && s->span.p != s->span.end)
        return span_rows(s, lane, max_rows, &o, err);
    if (stopping(s)) {
        /* Nothing more is read, but for one last span: the whole lines the reader already has
         * (read from the stream before the stop) are put too. The runner then sees the stop. */
        if (!by_spans(s) || s->drained) {
            *signal = S3L__SOURCE_IDLE;
            return 0;
        }
        s->drained = true;
    }
    if (by_spans(s)) {
        bool alone;
        int rc = next_span(s, lane, max_rows, &o, &alone, err);
        if (!alone)
            return rc;
    }
    return next_record(s, lane, &o, err);
}

static int src_next(struct s3l__source *base, unsigned lane, uint64_t max_rows,
                    uint64_t *offset_after, uint64_t *line_after, struct s3l_slice *raw,
                    enum s3l__source_signal *signal, struct s3l_error *err)
{
    struct source *s = (struct source *)base;
    int rc = next_rows(base, lane, max_rows, offset_after, line_after, raw, signal, err);
    /* A compressed input: the commit hashes the compressed bytes read by then. */
    if (s->pos->compression && s->reader && !s->pos->raw_done)
        s->pos->raw_size = s3l_reader_raw_offset(s->reader);
    return rc;
}

/* Whether records were read but not yet put: a stop still puts them (they are "what was read"):
 * the sample, a record held for growth, the rest of a span, and, until the one last span taken
 * at a stop, the whole lines the reader may already hold in its buffer. */
static bool src_holds(struct s3l__source *base)
{
    struct source *s = (struct source *)base;
    return s->has_pending || s->next_held < s->n_held ||
           (s->g->stream && s->span.p != s->span.end) || (by_spans(s) && !s->drained);
}

static uint64_t src_bytes(struct s3l__source *base)
{
    struct source *s = (struct source *)base;
    return s->reader ? s3l_reader_offset(s->reader) - s->start : 0;
}

static void src_free(struct s3l__source *base)
{
    struct source *s = (struct source *)base;
    if (s->reader)
        s->g->stats->records_skipped += s3l_reader_skipped(s->reader);
    s3l_reader_free(s->reader);
    s3l_arena_free(&s->arena);
    s3l_arena_free(&s->pend_arena);
    s3l_free(s->held);
    s3l__ident_cleanup(&s->ident);
    s3l_free(s);
}

static const struct s3l__source_ops source_ops = {src_next, src_bytes, src_free, src_holds};

/* Whether the file open as fd has size bytes. */
static bool st_size_is(int fd, uint64_t size)
{
    struct s3l__os_stat st;
    struct s3l_error e = {0};
    return s3l__os_fstat(fd, "input", &st, &e) == 0 && st.size == size;
}

/* The reader's options for input pos of table g from offset (skip: a stream's bytes resent
 * before it), up to end in follow mode (0: to the end), through io when it is given. */
static void reader_options(const struct s3l__glue *g, const struct s3l_input_position *pos,
                           uint64_t offset, uint64_t skip, uint64_t end,
                           const struct s3l__source_io *io, struct s3l_reader_options *ro)
{
    *ro = (struct s3l_reader_options){0};
    ro->version = S3L_READER_OPTIONS_VERSION;
    ro->format = g->fmt;
    ro->name = strcmp(pos->path, "-") == 0 ? "stdin" : pos->path; /* a FIFO or device by name */
    ro->max_record_bytes = g->o->max_record_size;
    ro->start_offset = pos->replayable ? offset : skip;
    ro->resume = !pos->replayable && offset > 0; /* a stream resent from after a record */
    ro->start_line = pos->line; /* line numbers go on where the last commit left them */
    /* A resumed input splits as its committed rows were (the runner refused another delimiter
     * given); else the one given, or 0: detected from the header row. */
    ro->csv_delimiter = pos->csv_delimiter ? pos->csv_delimiter : g->o->csv_delimiter;
    ro->compression = (enum s3l_input_compression)pos->compression;
    ro->end_offset = end;
    if (io) {
        ro->read = io->read;
        ro->seek = io->seek;
        ro->io_ctx = io->ctx;
    }
    ro->csv_header = pos->csv_header;
    ro->csv_header_len = pos->csv_header ? strlen(pos->csv_header) : 0;
    /* A stream that goes quiet hands control back, so that --commit-interval holds while it
     * is (within a quarter of the interval, 10 .. 250 ms) and a stop request is seen within a
     * second, commit included. */
    int64_t ci = g->o->commit_interval_ns;
    if (!pos->replayable)
        ro->idle_ms = ci > 0 ? (int)S3L_MAX(10, S3L_MIN(250, ci / 4000000)) : 250;
}

static int open_source(void *ctx, size_t i, struct s3l_input_position *pos, int fd,
                       uint64_t offset, uint64_t skip, const struct s3l__source_io *io,
                       struct s3l__source **out, struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    struct s3l__glue *g = &r->tables[r->input_table[i]];
    struct source *s = s3l_calloc(1, sizeof(*s));
    if (!s)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", pos->path);
    s->base.ops = &source_ops;
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
    s3l__ident_init(&s->ident, r->input_opts ? r->input_opts[i] : g->o, g->tpath); /* its own */
    /* Follow mode reads a plain file up to its last line feed only: a line still being written
     * waits for its line end (a compressed file's unended last record is left by its reader). */
    uint64_t end = 0;
    bool follow_plain = g->o->follow && pos->replayable && !pos->compression;
    int rc = follow_plain ? s3l__follow_last_line_end(fd, pos->path, offset, &end, err) : 0;
    if (rc) {
        src_free(&s->base);
        return rc;
    }
    /* A file already read to its end: nothing to open (a JSON array cannot resume at its end);
     * a compressed one was read to its end and has not grown since; a followed one has no new
     * whole line. */
    bool read_all = follow_plain       ? end <= offset
                    : pos->compression ? pos->raw_done && st_size_is(fd, pos->raw_size)
                                       : offset > 0 && st_size_is(fd, offset);
    if (pos->replayable && read_all) {
        s->done = true;
        *out = &s->base;
        return 0;
    }
    pos->raw_done = false; /* grown since (or never read to its end): read on */
    struct s3l_reader_options ro;
    reader_options(g, pos, offset, skip, end, io, &ro);
    rc = s3l_reader_open(fd, &ro, &s->reader, err);
    if (rc) {
        src_free(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

int s3l__glue_source_open(void *ctx, size_t i, struct s3l_input_position *pos, int fd,
                          uint64_t offset, uint64_t skip, struct s3l__source **out,
                          struct s3l_error *err)
{
    if (pos->object) {
        struct s3l__run *r = ctx;
        return s3l__object_input_open(ctx, i, pos, offset, r->tables[r->input_table[i]].o, out,
                                      err);
    }
    return open_source(ctx, i, pos, fd, offset, skip, NULL, out, err);
}

int s3l__glue_source_open_io(void *ctx, size_t i, struct s3l_input_position *pos, uint64_t offset,
                             const struct s3l__source_io *io, struct s3l__source **out,
                             struct s3l_error *err)
{
    return open_source(ctx, i, pos, -1, offset, 0, io, out, err);
}
