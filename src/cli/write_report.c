/*
 * What `s3land write` and `run` report while they run and at their end: progress on a terminal
 * (rows, bytes read, commits, bytes committed, the lag behind the inputs' ends, rows/s; at most
 * once a second), each commit (and, for stdin, the committed input offset a caller resumes
 * from), the end of a run on stdin, and the summary; as text on stderr or, with --json, as JSON
 * events on stdout. Split from cmd_write.c, which parses the options and runs the pipeline.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static double rate(uint64_t n, int64_t ns)
{
    return ns > 0 ? (double)n * 1e9 / (double)ns : 0.0;
}

/* {"unit": "s3 requests" | "store operations", "total": N, "ops": {OP: N, ...}}: what a run or an
 * epoch cost the store (include/s3l/counts.h); "ops" lists only operations that were used. */
void *cli_requests_json(const struct s3l_store_counts *c)
{
    json_t *ops = json_object();
    for (size_t i = 0; ops && i < c->n; i++)
        json_object_set_new(ops, c->ops[i].op, json_integer((json_int_t)c->ops[i].n));
    return json_pack("{s:s, s:I, s:o}", "unit", c->unit ? c->unit : "store operations", "total",
                     (json_int_t)c->total, "ops", ops);
}

void cli_write_clear_progress(struct cli_write_reporter *r)
{
    if (r->progress_drawn) {
        fputs("\r\033[K", stderr);
        r->progress_drawn = false;
    }
}

static void report_commit(struct cli_write_reporter *r, const struct s3l_pipeline_report *p)
{
    struct cli *c = r->c;
    const struct s3l_pipeline_stats *s = p->stats;
    if (c->json) {
        json_t *inputs = json_array();
        for (size_t i = 0; i < p->n_inputs; i++)
            json_array_append_new(inputs, json_pack("{s:s, s:I}", "path", p->inputs[i].path,
                                                    "offset", (json_int_t)p->inputs[i].offset));
        json_t *ev = json_pack("{s:s, s:I, s:I, s:I, s:o}", "event",
                               p->event == S3L_EVENT_COMMIT ? "commit" : "recovered", "epoch",
                               (json_int_t)s->last_epoch, "rows", (json_int_t)s->rows, "files",
                               (json_int_t)s->files, "inputs", inputs);
        if (ev && p->requests)
            json_object_set_new(ev, "requests", cli_requests_json(p->requests));
        cli_emit_json(ev);
    }
    /* stdin cannot be replayed: its committed offset is printed even with --quiet. */
    for (size_t i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i].replayable || c->json)
            continue;
        cli_write_clear_progress(r);
        fprintf(stderr, "committed: %s offset %llu (epoch %llu)\n", p->inputs[i].path,
                (unsigned long long)p->inputs[i].offset, (unsigned long long)s->last_epoch);
        r->printed = true;
        r->printed_offset = p->inputs[i].offset;
    }
    if (p->event == S3L_EVENT_RECOVERED && !c->quiet && !c->json) {
        cli_write_clear_progress(r);
        fprintf(stderr, "recovered: committed epoch %llu left pending by an earlier run\n",
                (unsigned long long)s->last_epoch);
    }
}

/*
 * The end of a run with stdin (or another stream): where to resend from. Every such run says it,
 * also when nothing was new (a stream resent with only committed bytes), so that the caller never
 * keeps a stale offset: the committed line unless the last one printed already said it, and an
 * `end` event with --json.
 */
static void report_end(struct cli_write_reporter *r, const struct s3l_pipeline_report *p)
{
    struct cli *c = r->c;
    if (c->json) {
        json_t *inputs = json_array();
        for (size_t i = 0; i < p->n_inputs; i++)
            json_array_append_new(inputs, json_pack("{s:s, s:I}", "path", p->inputs[i].path,
                                                    "offset", (json_int_t)p->inputs[i].offset));
        cli_emit_json(json_pack("{s:s, s:I, s:o}", "event", "end", "epoch",
                                (json_int_t)p->stats->last_epoch, "inputs", inputs));
        return;
    }
    for (size_t i = 0; i < p->n_inputs; i++) {
        if (p->inputs[i].replayable || (r->printed && r->printed_offset == p->inputs[i].offset))
            continue;
        cli_write_clear_progress(r);
        fprintf(stderr, "committed: %s offset %llu (epoch %llu)\n", p->inputs[i].path,
                (unsigned long long)p->inputs[i].offset, (unsigned long long)p->stats->last_epoch);
        r->printed = true;
        r->printed_offset = p->inputs[i].offset;
    }
}

void cli_fmt_progress(char *buf, size_t cap, const struct s3l_pipeline_stats *s, uint64_t behind)
{
    char in[32], out[32], lag[64] = "";
    if (behind != UINT64_MAX) {
        char b[32];
        snprintf(lag, sizeof(lag), ", %s behind the inputs' ends",
                 cli_fmt_bytes(behind, b, sizeof(b)));
    }
    snprintf(buf, cap, "%llu rows, %s read, %llu %s, %s committed%s, %.0f rows/s",
             (unsigned long long)s->rows, cli_fmt_bytes(s->bytes_in, in, sizeof(in)),
             (unsigned long long)s->epochs, s->epochs == 1 ? "commit" : "commits",
             cli_fmt_bytes(s->bytes_out, out, sizeof(out)), lag, rate(s->rows, s->elapsed_ns));
}

/*
 * The bytes of the inputs not read yet: every input's size now (so a file that grows counts
 * too) less the offsets the run resumed from and what it read since (stats' bytes_resumed and
 * bytes_in). UINT64_MAX when an input is a stream or compressed (its offset counts decompressed
 * bytes, its size compressed ones).
 */
static uint64_t behind(const struct s3l_pipeline_report *p)
{
    uint64_t size = 0;
    for (size_t i = 0; i < p->n_inputs; i++) {
        struct stat st;
        const struct s3l_input_position *in = &p->inputs[i];
        if (!in->replayable || in->compression || stat(in->path, &st) != 0)
            return UINT64_MAX;
        size += (uint64_t)st.st_size;
    }
    uint64_t done = p->stats->bytes_resumed + p->stats->bytes_in;
    return size > done ? size - done : 0;
}

/* A progress event: a JSON line with --json, else a line redrawn on a terminal at most once a
 * second (the runner reports twice a second). */
static void report_progress(struct cli_write_reporter *r, const struct s3l_pipeline_report *p)
{
    struct cli *c = r->c;
    const struct s3l_pipeline_stats *s = p->stats;
    if (c->json) {
        json_t *ev = json_pack("{s:s, s:I, s:I, s:I, s:I, s:f}", "event", "progress", "rows",
                               (json_int_t)s->rows, "bytes_in", (json_int_t)s->bytes_in,
                               "bytes_out", (json_int_t)s->bytes_out, "commits",
                               (json_int_t)s->epochs, "rows_per_s",
                               rate(s->rows, s->elapsed_ns));
        uint64_t lag = behind(p);
        if (ev && lag != UINT64_MAX)
            json_object_set_new(ev, "bytes_behind", json_integer((json_int_t)lag));
        cli_emit_json(ev);
        return;
    }
    /* On a terminal only, and at most once a second (the runner reports twice a second). */
    if (c->quiet || !c->tty || (r->drawn_ns && s->elapsed_ns - r->drawn_ns < 1000000000))
        return;
    char line[256];
    cli_fmt_progress(line, sizeof(line), s, behind(p));
    fprintf(stderr, "\r\033[K%s", line);
    r->progress_drawn = true;
    r->drawn_ns = s->elapsed_ns ? s->elapsed_ns : 1;
}

/* An event that is a message: {"event": EVENT, "message"} with --json, else "PREFIX: MESSAGE"
 * on stderr, none with --quiet unless loud. */
static void report_message(struct cli_write_reporter *r, const struct s3l_pipeline_report *p,
                           const char *event, const char *prefix, bool loud)
{
    struct cli *c = r->c;
    const char *m = p->message ? p->message : "";
    if (c->json) {
        cli_emit_json(json_pack("{s:s, s:s}", "event", event, "message", m));
    } else if (loud || !c->quiet) {
        cli_write_clear_progress(r);
        fprintf(stderr, "%s: %s\n", prefix, m);
    }
}

void cli_write_on_report(void *ctx, const struct s3l_pipeline_report *p)
{
    struct cli_write_reporter *r = ctx;
    struct cli *c = r->c;
    switch (p->event) {
    case S3L_EVENT_PROGRESS:
        report_progress(r, p);
        return;
    case S3L_EVENT_COMMIT:
    case S3L_EVENT_RECOVERED:
        report_commit(r, p);
        return;
    case S3L_EVENT_END:
        report_end(r, p);
        return;
    case S3L_EVENT_UP_TO_DATE:
        /* The summary says "nothing new" on a terminal; scripts get the event. */
        r->up_to_date = true;
        if (c->json)
            cli_emit_json(json_pack("{s:s}", "event", "up_to_date"));
        return;
    case S3L_EVENT_NOTE:
        report_message(r, p, "note", "note", false);
        return;
    case S3L_EVENT_STAGED_LEFT: /* garbage, not a loss: the summary counts them */
        report_message(r, p, "staged_left", "warning", false);
        return;
    case S3L_EVENT_PARTIAL_LINE:
        report_message(r, p, "partial_line", "note", false);
        return;
    case S3L_EVENT_STREAM_STOPPED: /* the other streams go on; the run exits 4 at its end */
        report_message(r, p, "stream_stopped", "s3land: stream stopped", true);
        return;
    case S3L_EVENT_INPUT_MISSING:
        /* missing: skip: the run goes on without the lost bytes. Said even with --quiet: data
         * was lost. */
        if (c->json) {
            json_t *ev = json_pack("{s:s, s:s?, s:s, s:I, s:s}", "event", "input_missing",
                                   "source", p->source, "path",
                                   p->n_inputs ? p->inputs[0].path : "", "offset",
                                   (json_int_t)(p->n_inputs ? p->inputs[0].offset : 0),
                                   "message", p->message ? p->message : "");
            cli_emit_json(ev);
        } else {
            cli_write_clear_progress(r);
            fprintf(stderr, "note: %s\n", p->message ? p->message : "");
        }
        return;
    case S3L_EVENT_BAD_RECORD:
        report_message(r, p, "bad_record", "bad record", false);
        return;
    }
}

void cli_write_summary(struct cli *c, const struct cli_write_run *a,
                       const struct s3l_pipeline_stats *s, bool up_to_date, int rc)
{
    if (c->json) {
        cli_emit_json(
            json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o, "
                      "s:I}",
                      "event", "summary", "url", a->url ? a->url : "", "table", a->o->table, "ok",
                      rc == 0, "rows", (json_int_t)s->rows, "rows_bad", (json_int_t)s->rows_bad,
                      "records_skipped", (json_int_t)s->records_skipped,
                      "values_ignored", (json_int_t)s->values_ignored, "bytes_in",
                      (json_int_t)s->bytes_in, "bytes_out", (json_int_t)s->bytes_out, "files",
                      (json_int_t)s->files, "epochs", (json_int_t)s->epochs, "elapsed_ns",
                      (json_int_t)s->elapsed_ns, "rows_per_s", rate(s->rows, s->elapsed_ns),
                      "requests", cli_requests_json(&s->requests), "staged_left",
                      (json_int_t)s->staged_left));
        return;
    }
    if (c->quiet || rc != 0)
        return;
    char in[32], out[32];
    /* Empty input files land nothing and are not an error: say so, for each of them. */
    size_t n_empty = 0;
    for (size_t i = 0; i < a->o->n_inputs; i++) {
        struct stat st;
        const char *path = a->o->inputs[i];
        if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_size != 0)
            continue;
        n_empty++;
        if (a->o->n_inputs > 1 || !up_to_date)
            fprintf(stderr, "note: input %s is empty: nothing to write from it\n", path);
    }
    if (up_to_date && n_empty == 1 && a->o->n_inputs == 1) {
        fprintf(stderr, "nothing to write: input %s is empty (table %s at %s is unchanged)\n",
                a->o->inputs[0], a->o->table, a->url);
        return;
    }
    if (up_to_date) {
        fprintf(stderr, "nothing new: table %s at %s already holds every input record\n",
                a->o->table, a->url);
        return;
    }
    fprintf(stderr,
            "wrote %llu %s to table %s at %s: %llu %s, %s put to the store (data files and "
            "commit records) from %s of input, %llu %s, %.2f s, %.0f rows/s",
            (unsigned long long)s->rows, cli_plural(s->rows, "row", "rows"), a->o->table, a->url,
            (unsigned long long)s->files, cli_plural(s->files, "file", "files"),
            cli_fmt_bytes(s->bytes_out, out, sizeof(out)),
            cli_fmt_bytes(s->bytes_in, in, sizeof(in)), (unsigned long long)s->epochs,
            cli_plural(s->epochs, "epoch", "epochs"), (double)s->elapsed_ns / 1e9,
            rate(s->rows, s->elapsed_ns));
    if (s->rows_bad)
        fprintf(stderr, ", %llu bad %s", (unsigned long long)s->rows_bad,
                cli_plural(s->rows_bad, "record", "records"));
    if (s->records_skipped)
        fprintf(stderr, ", %llu %s skipped", (unsigned long long)s->records_skipped,
                cli_plural(s->records_skipped, "tombstone", "tombstones"));
    if (s->staged_left)
        fprintf(stderr, ", %llu staged %s left to gc", (unsigned long long)s->staged_left,
                cli_plural(s->staged_left, "file", "files"));
    fputc('\n', stderr);
    if (s->values_ignored)
        fprintf(stderr,
                "note: %llu %s not written: of keys that the table's schema lacks (declare "
                "those columns with --schema, or give them a value within the first --infer-rows "
                "records), or of a key repeated in a record (its last value is written)\n",
                (unsigned long long)s->values_ignored,
                s->values_ignored == 1 ? "value was" : "values were");
}
