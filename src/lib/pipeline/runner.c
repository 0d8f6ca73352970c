/*
 * The runner's loop: resumes every input where the last committed epoch left it, feeds its
 * records into the destination's lane sinks, and decides epochs (every epoch_rows rows, every
 * commit_interval_ns, and at the end of the input; issue 3, item 6).
 *
 * Positions: the destination's checkpoint holds, at the commit point of each epoch, the byte
 * offset after the last record of every input that the epoch covers, with the hash of the 4 KiB
 * before it (position.c). On a rerun each input is verified against its recorded position and
 * read from its offset, so appended lines land once and nothing is re-read. A rerun that finds
 * every input read to its end, and no pending epoch, returns before touching the destination, so
 * the destination stays byte-identical.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/os.h"
#include "loop.h"
#include "runner.h"

#define CLOCK_EVERY_ROWS  64

void s3l_pipeline_options_init(struct s3l_pipeline_options *o)
{
    memset(o, 0, sizeof(*o));
    o->version = S3L_PIPELINE_OPTIONS_VERSION;
    o->input_format = "ndjson";
    o->codec = S3L_CODEC_ZSTD;
    o->file_size = 256ULL << 20;
    o->row_group_bytes = 128u << 20;
    o->memory = 48u << 20;
    o->epoch_rows = 1000000;
    o->commit_interval_ns = 60LL * 1000000000LL;
    o->lanes = 1;
    o->timestamp_unit = S3L_UNIT_MICRO;
    o->max_record_size = 16u << 20;
    o->infer_rows = 1000;
    o->stdin_offset = -1;
}

int64_t s3l__now_ns(void)
{
    return s3l__os_mono_ns(); /* the one monotonic clock, os/ (s3/ and store/ read it too) */
}


void s3l__loop_report_requests(struct loop *l, enum s3l_pipeline_event ev, const char *message,
                            const struct s3l_store_counts *requests)
{
    if (!l->o->report)
        return;
    l->st->elapsed_ns = l->now - l->t_start;
    struct s3l_pipeline_report r = {ev, l->st, l->pos, l->n, message, requests, NULL};
    l->o->report(l->o->report_ctx, &r);
}

void s3l__loop_report(struct loop *l, enum s3l_pipeline_event ev, const char *message)
{
    s3l__loop_report_requests(l, ev, message, NULL);
}

/*
 * Follow mode: a followed plain file's size now goes into its position (size_known), so that a
 * restart that finds it gone tells a file read to its end (size == offset) from a loss. A file
 * that cannot be stat'ed now keeps what was recorded before.
 */
void s3l__loop_record_size(struct loop *l, size_t i)
{
    struct s3l_input_position *p = &l->pos[i];
    struct s3l__os_stat st;
    struct s3l_error e = {0};
    if (!l->iopt[i]->follow || !p->replayable || p->compression ||
        s3l__os_fstat(l->fds[i], p->path, &st, &e) != 0)
        return;
    p->size = st.size;
    p->size_known = true;
}

/* Records the reached offsets in the positions and commits them with the rows since the last;
 * settle: wait for the epoch's finish before returning (else it may go on in the background). */
static int commit_now(struct loop *l, bool settle, struct s3l_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        /* A compressed input is re-hashed at every commit: its source moves raw_size (the
         * compressed bytes read) also when the decompressed offset stays. */
        if (l->cur[i] == l->pos[i].offset && !l->pos[i].compression)
            continue;
        int rc = s3l_input_position_advance(&l->pos[i], l->fds[i], l->cur[i], err);
        if (rc)
            return rc;
        l->pos[i].line = l->line[i];
    }
    for (size_t i = 0; i < l->n; i++)
        s3l__loop_record_size(l, i);
    char *json = NULL;
    size_t n_all = l->n;
    struct s3l_input_position *all = l->pos;
    if (l->n_retired || l->n_absent) {
        /* The rotated files, then the absent ones, after the inputs (shallow copies: serialised
         * only); an absent one whose path an input or a rotated file has now is left out. */
        if (!(all = s3l_calloc(l->n + l->n_retired + l->n_absent, sizeof(*all))))
            return s3l_error_set(err, S3L_ENOMEM, "out of memory writing input positions");
        memcpy(all, l->pos, l->n * sizeof(*all));
        memcpy(all + l->n, l->retired, l->n_retired * sizeof(*all));
        n_all = l->n + l->n_retired;
        for (size_t j = 0; j < l->n_absent; j++)
            if (!s3l_positions_find(all, n_all, l->absent[j].path))
                all[n_all++] = l->absent[j];
    }
    int jrc = s3l_positions_to_json(all, n_all, &json);
    if (all != l->pos)
        s3l_free(all);
    if (jrc != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory writing input positions");
    struct s3l__commit_info info;
    memset(&info, 0, sizeof(info));
    int rc = l->env->dest->commit(l->env->dest_ctx, json, &info, err);
    s3l_free(json);
    if (rc) {
        l->commit_failed = true;
        return rc;
    }
    l->epoch_rows = 0;
    l->dirty = false;
    l->t_epoch = l->now;
    s3l__loop_finished(l, &info); /* the epoch finished before this one, or this one */
    if (info.finishing) {
        s3l__loop_inflight_keep(l, info.finishing, &settle);
        if (settle)
            return s3l__loop_settle(l, err);
    }
    return 0;
}

int s3l__loop_commit(struct loop *l, struct s3l_error *err)
{
    return commit_now(l, true, err);
}

/* Whether the epoch holds the rows --epoch-rows asks for. */
static bool due_by_rows(const struct loop *l)
{
    return l->o->epoch_rows && l->epoch_rows >= l->o->epoch_rows;
}

bool s3l__loop_epoch_due(struct loop *l, int64_t now)
{
    if (due_by_rows(l))
        return true;
    return l->o->commit_interval_ns > 0 && (l->epoch_rows > 0 || l->dirty) &&
           now - l->t_epoch >= l->o->commit_interval_ns;
}

/* A bad record of input i: fail, skip or dead-letter it according to its source's options. */
static int bad_record(struct loop *l, size_t i, struct s3l_slice raw, struct s3l_error *err)
{
    const struct s3l_pipeline_options *o = iopts(l, i);
    if (o->bad_records == S3L_BAD_RECORDS_FAIL)
        return err->code;
    char reason[S3L_ERROR_MESSAGE_MAX];
    memcpy(reason, err->message, sizeof(reason));
    s3l_error_clear(err);
    if (o->bad_records == S3L_BAD_RECORDS_DEAD_LETTER) {
        int rc = l->env->dest->reject(l->env->dest_ctx, i, raw.ptr, raw.len, reason, err);
        if (rc)
            return rc;
    }
    l->st->rows_bad++;
    s3l__loop_report(l, S3L_EVENT_BAD_RECORD, reason);
    return 0;
}

/* Input i reached offset off (line `line`): recorded at the next commit. */
static void moved(struct loop *l, size_t i, uint64_t off, uint64_t line)
{
    if (off != l->cur[i]) {
        l->cur[i] = off;
        l->line[i] = line;
        l->dirty = true;
    }
}

/*
 * After a source's call that put rows or consumed a bad record: reads the clock when due,
 * reports progress and commits when the epoch is due. *side is set on failure.
 */
static int after_call(struct loop *l, size_t i, struct s3l__source *src, uint64_t base,
                      uint64_t *since_clock, enum s3l_pipeline_side *side, struct s3l_error *err)
{
    /* A stream (stdin, a pipe) may deliver records slowly: its clock is read at every call
     * so that --commit-interval holds; files are read every clock_every records. */
    if (l->pos[i].replayable && *since_clock < l->clock_every &&
        !due_by_rows(l))
        return 0;
    *since_clock = 0;
    int64_t now = l->now = l->env->now_ns();
    l->st->bytes_in = base + src->ops->bytes(src);
    s3l__loop_progress(l, now);
    /* The run reads on: the epoch may finish in the background meanwhile. */
    bool due = s3l__loop_epoch_due(l, now);
    /* Due by the interval alone while the epoch before still finishes: reading on into this
     * epoch beats waiting for that finish in the commit (one slot, commit.md "Pipelined
     * commit"), so an epoch grows to cover the store's latency instead of shrinking to what was
     * read during one finish (a 100 ms interval with 300 ms finishes made epochs of one read
     * chunk, 14k rows/s). The interval is a floor between commits, not a deadline. */
    if (due && !due_by_rows(l) && l->env->dest->wait && !l->env->dest->wait(l->env->dest_ctx, 0))
        due = false;
    int rc = due ? commit_now(l, !s3l__loop_may_pipeline(l), err) : 0;
    if (rc)
        *side = S3L_SIDE_DESTINATION;
    return rc;
}

/*
 * A source's answer without rows (signal, with 0): the end (*end), a quiet stream, or a record
 * that grows the schema. *side is set on failure.
 */
int s3l__loop_signalled(struct loop *l, size_t i, enum s3l__source_signal signal, uint64_t off,
                     uint64_t line, bool *end, enum s3l_pipeline_side *side,
                     struct s3l_error *err)
{
    int rc = 0;
    *end = false;
    if (signal == S3L__SOURCE_END) {
        /* The end: the source may have consumed bytes after its last record (blank lines, a
         * JSON array's closing bracket), which belong to no epoch but must be recorded. */
        moved(l, i, off, line);
        if (l->pos[i].compression)
            l->dirty = true; /* raw_done and raw_size are recorded: a rerun is up to date */
        *end = true;
    } else if (signal == S3L__SOURCE_IDLE) {
        /* A quiet stream: what was read is committed when the interval is due. With nothing to
         * commit, the commit is still called once per interval: a writer that claimed its
         * generation then rewrites its checkpoint (a heartbeat), so gc never takes a live, idle
         * writer for dead (issue 10 item 12; s3l_dest_commit). */
        moved(l, i, off, line);
        int64_t now = l->now = l->env->now_ns();
        int64_t ci = l->o->commit_interval_ns;
        if (s3l__loop_epoch_due(l, now) || (ci > 0 && now - l->t_epoch >= ci))
            rc = s3l__loop_commit(l, err);
    } else if (signal == S3L__SOURCE_GROW) {
        /* The epoch so far is committed under the old schema, then the destination grows; the
         * record comes next. */
        if (l->epoch_rows > 0 || l->dirty)
            rc = s3l__loop_commit(l, err);
        else
            rc = s3l__loop_settle(l, err); /* growing reopens the destination: none finishing */
        if (rc == 0 && l->env->dest->grow)
            rc = l->env->dest->grow(l->env->dest_ctx, i, err);
    } else {
        rc = s3l_error_set(err, S3L_EINTERNAL, "input %s: a source answered signal %d",
                           l->pos[i].path, (int)signal);
    }
    if (rc)
        *side = S3L_SIDE_DESTINATION;
    return rc;
}

/* Reads input i from its offset to its end. *side is set on failure. */
int s3l__loop_drain(struct loop *l, size_t i, enum s3l_pipeline_side *side, struct s3l_error *err)
{
    struct s3l__source *src = NULL;
    /* The source numbers lines from pos->line: where it is now (a followed input is reopened
     * after each change, before its position is committed). */
    uint64_t committed_line = l->pos[i].line;
    l->pos[i].line = l->line[i];
    int rc = l->env->source_open(l->env->source_ctx, i, &l->pos[i], l->fds[i], l->cur[i],
                                 l->skip[i], &src, err);
    l->pos[i].line = committed_line;
    if (rc) {
        *side = S3L_SIDE_INPUT;
        return rc;
    }
    unsigned lanes = l->o->lanes ? l->o->lanes : 1;
    uint64_t base = l->st->bytes_in;
    /* records since the clock was last read (it is read after the first call, then every
     * clock_every records) */
    uint64_t since_clock = l->clock_every;
    for (;;) {
        if (l->o->stop && *l->o->stop && !(src->ops->holds && src->ops->holds(src))) {
            /* What was read is put (the source holds nothing more) and is committed by the
             * caller, as at the end. */
            l->st->stopped = true;
            rc = 0;
            break;
        }
        uint64_t off = l->cur[i], line = l->line[i];
        struct s3l_slice raw = {0};
        /* A source may put many rows per call, but never past the end of the epoch. */
        uint64_t max_rows = UINT64_MAX;
        if (l->o->epoch_rows)
            max_rows = l->epoch_rows < l->o->epoch_rows ? l->o->epoch_rows - l->epoch_rows : 1;
        enum s3l__source_signal signal = S3L__SOURCE_END;
        rc = src->ops->next(src, l->lane, max_rows, &off, &line, &raw, &signal, err);
        if (rc == 0) {
            bool end;
            if ((rc = s3l__loop_signalled(l, i, signal, off, line, &end, side, err)) != 0 || end)
                break;
            if (signal == S3L__SOURCE_IDLE)
                since_clock = 0;
            continue;
        }
        if (rc > 0) {
            l->st->rows += (uint64_t)rc;
            l->epoch_rows += (uint64_t)rc;
            since_clock += (uint64_t)rc;
            l->lane = l->lane + 1 < lanes ? l->lane + 1 : 0;
        } else if (signal == S3L__SOURCE_BROKEN) {
            rc = err->code ? err->code : S3L_EINVALID_INPUT;
            *side = S3L_SIDE_INPUT;
            break;
        } else if (rc == S3L_EINVALID_INPUT || rc == S3L_ETOO_LARGE) {
            since_clock++;
            rc = bad_record(l, i, raw, err);
            if (rc) {
                /* fail: the record's error; dead-letter: the destination refused the record,
                 * or could not take it for want of a column (an error of the input). */
                *side = iopts(l, i)->bad_records == S3L_BAD_RECORDS_FAIL || rc == S3L_EINVALID_INPUT
                            ? S3L_SIDE_INPUT
                            : S3L_SIDE_DESTINATION;
                break;
            }
        } else {
            *side = S3L_SIDE_DESTINATION;
            break;
        }
        moved(l, i, off, line);
        if ((rc = after_call(l, i, src, base, &since_clock, side, err)) != 0)
            break;
    }
    l->st->bytes_in = base + src->ops->bytes(src);
    src->ops->free(src);
    return rc;
}

/*
 * Reads every input to its end, in order, skipping the inputs of a stream that drifted: a
 * SCHEMA_DRIFT stops that stream only (its inputs keep their positions: nothing of it is in the
 * epoch, since a table drifts when its stream opens, and a grown stream reopens only after the
 * epoch before the growing record committed), is reported, and is returned at the end. A
 * SCHEMA_DRIFT from a commit (l->commit_failed) ends the run.
 */
static int drain_all(struct loop *l, enum s3l_pipeline_side *side, struct s3l_error *err)
{
    for (size_t i = 0; i < l->n && !l->st->stopped; i++) {
        size_t s = stream_of(l, i);
        if (l->drifted[s])
            continue;
        int rc = s3l__loop_drain(l, i, side, err);
        if (rc != S3L_ESCHEMA_DRIFT || l->commit_failed) {
            if (rc)
                return rc;
            continue;
        }
        l->drifted[s] = true;
        if (!l->drift.code)
            l->drift = *err;
        s3l__loop_report(l, S3L_EVENT_STREAM_STOPPED, err->message);
        s3l_error_clear(err);
    }
    return 0;
}

/*
 * An NDJSON or CSV file whose committed offset ends an unterminated last line (pos->mid_line)
 * and that grew since: the appended bytes must begin with a line break. Otherwise the committed
 * record was extended in place ("3,4" became "3,45"): resuming would land the rest of that line
 * as a record of its own, and re-reading it would land its start twice, so it is refused. A JSON
 * input is exempt: its records need no line ends, and a finished array is consumed to its end.
 */
static int check_mid_line(struct loop *l, size_t i, const struct s3l_input_position *p, int fd,
                          uint64_t size, struct s3l_error *err)
{
    const char *fmt = iopts(l, i)->input_format ? iopts(l, i)->input_format : "ndjson";
    if (!p->replayable || !p->mid_line || size <= p->offset || strcmp(fmt, "json") == 0)
        return 0;
    char c = 0;
    size_t got = 0;
    int rc = s3l__os_pread_full(fd, &c, 1, p->offset, &got, p->path, err);
    if (rc)
        return s3l_error_prefix(err, "input"), rc;
    if (got == 1 && c != '\n' && c != '\r')
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s, line %llu, offset %llu: the last committed line had no "
                             "line break and was extended by bytes appended since; refusing to "
                             "land the rest of that line as a record or land it twice (append "
                             "whole lines, each ending with a line break)",
                             p->path, (unsigned long long)(p->line ? p->line : 1),
                             (unsigned long long)p->offset);
    return 0;
}

/*
 * Verifies each input against the checkpoint's positions and sets where it resumes. *all_done:
 * every input is a file already read to its end. Empty inputs read for the first time are
 * refused.
 */
/*
 * A stream resent from --stdin-offset N (opts->stdin_offset) while the pipeline committed up to
 * R: the R - N bytes already landed are dropped; N past R would lose the bytes between.
 */
static int stream_start(struct loop *l, size_t i, uint64_t committed, struct s3l_error *err)
{
    int64_t n = l->o->stdin_offset;
    if (n < 0)
        return 0;
    if ((uint64_t)n > committed)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s starts at byte offset %lld (--stdin-offset) but the "
                             "pipeline committed it only up to offset %llu: the bytes between "
                             "would be lost; resend from offset %llu or earlier",
                             l->pos[i].path, (long long)n, (unsigned long long)committed,
                             (unsigned long long)committed);
    l->skip[i] = committed - (uint64_t)n;
    return 0;
}

/*
 * A resumed CSV input takes the header and the delimiter its committed rows were split on (r, the
 * recorded position) into p. A --csv-delimiter other than the recorded one is refused: the rows
 * after the offset would be split otherwise than the rows before it, under the same header.
 */
static int resume_csv(struct loop *l, struct s3l_input_position *p,
                      const struct s3l_input_position *r, struct s3l_error *err)
{
    char given = l->o->csv_delimiter, was = r->csv_delimiter;
    if (given && was && given != was && r->offset > 0) {
        char g[3] = {given, 0, 0}, w[3] = {was, 0, 0};
        if (given == '\t')
            memcpy(g, "\\t", 3);
        if (was == '\t')
            memcpy(w, "\\t", 3);
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s: --csv-delimiter '%s' differs from the delimiter '%s' its "
                             "committed rows were split on; give the same one (or none), or "
                             "land it as a new input with a new --pipeline-id",
                             p->path, g, w);
    }
    p->csv_delimiter = r->csv_delimiter;
    if (r->csv_header && !(p->csv_header = s3l_strdup(r->csv_header)))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory resuming %s", p->path);
    return 0;
}

static int resume_positions(struct loop *l, const char *json, bool *all_done, struct s3l_error *err)
{
    struct s3l_input_position *rec = NULL;
    size_t n_rec = 0;
    int rc = json ? s3l_positions_from_json(json, strlen(json), &rec, &n_rec, err) : 0;
    if (rc)
        return rc;
    bool *used = s3l_calloc(n_rec ? n_rec : 1, sizeof(*used));
    if (!used) {
        s3l_positions_free(rec, n_rec);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory resuming input positions");
    }
    *all_done = true;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        struct s3l_input_position *p = &l->pos[i];
        const struct s3l_input_position *r = NULL, *lost = NULL;
        if (iopts(l, i)->follow && p->replayable) {
            rc = s3l__follow_record(l->pos, l->fds, l->n, i, rec, n_rec, iopts(l, i)->missing_skip,
                                    &r, &lost, err);
            if (rc == 0 && lost)
                s3l__loop_report_missing(l, iopts(l, i), lost, false);
        } else if (!(r = s3l_positions_find(rec, n_rec, p->path)) ||
                   (p->replayable && (r->dev != p->dev || r->ino != p->ino))) {
            /* By identity when the path's record is another file's: a file renamed onto the
             * path of one absent from this run is that file, not a rotation of the absent one
             * (found by a break-it run: refused since absent positions are carried) */
            const struct s3l_input_position *by_id = s3l__follow_renamed(rec, n_rec, p, l->fds[i]);
            r = by_id ? by_id : r;
        }
        if (rc)
            break;
        if (r)
            used[r - rec] = true;
        if (lost)
            used[lost - rec] = true;
        struct s3l__os_stat st;
        bool have_size = p->replayable && s3l__os_fstat(l->fds[i], p->path, &st, NULL) == 0;
        if (r && (rc = s3l_input_position_verify(r, p, l->fds[i], err)) != 0)
            break;
        if (r && r->replayable) {
            p->offset = l->cur[i] = r->offset;
            p->line = l->line[i] = r->line;
            p->mid_line = r->mid_line;
            p->raw_size = r->raw_size;
            p->raw_done = r->raw_done;
            memcpy(p->sha256, r->sha256, sizeof(p->sha256));
            if (have_size && (rc = check_mid_line(l, i, p, l->fds[i], st.size, err)))
                break;
            if (r->object_state && !(p->object_state = s3l_strdup(r->object_state)))
                rc = s3l_error_set(err, S3L_ENOMEM, "out of memory resuming %s", p->path);
            if (rc == 0)
                rc = resume_csv(l, p, r, err);
        } else if (r && !p->replayable) {
            /* A stream cannot seek: its offsets continue from the committed one, so they stay
             * offsets into the original stream when the caller resumes it from there. */
            p->offset = l->cur[i] = r->offset;
            p->line = l->line[i] = r->line;
            rc = resume_csv(l, p, r, err);
        }
        if (rc == 0 && !p->replayable)
            rc = stream_start(l, i, r ? r->offset : 0, err);
        /* An empty file is done at offset 0: it lands nothing and is not an error (as a file of
         * blank lines is not); the caller says so. */
        /* A compressed file is done when it was read to its end and has not grown since. */
        bool done = p->compression ? p->raw_done && st.size == p->raw_size
                                   : st.size == p->offset;
        if (!have_size || !done)
            *all_done = false;
    }
    if (rc == 0)
        rc = s3l__loop_gone_records(l, rec, n_rec, err);
    if (rc == 0)
        rc = s3l__loop_carry_absent(l, rec, n_rec, used, err);
    s3l_free(used);
    s3l_positions_free(rec, n_rec);
    return rc;
}

static void loop_free(struct loop *l);

/* The loop's state over n inputs, its arrays allocated. S3L_ENOMEM. */
static int loop_init(struct loop *l, const struct s3l_pipeline_options *opts,
                     const struct s3l__runner_env *env, struct s3l_input_position *pos,
                     const int *fds, size_t n, struct s3l_pipeline_stats *stats,
                     struct s3l_error *err)
{
    memset(l, 0, sizeof(*l));
    l->o = opts;
    l->env = env;
    l->pos0 = pos;
    l->fds0 = (int *)fds; /* the caller's own array: a rotation's new fd goes back into it */
    l->n = l->n0 = n;
    l->cap = n ? n : 1;
    l->st = stats;
    l->now = l->t_start = l->t_epoch = l->t_progress = l->t_glob = env->now_ns();
    l->clock_every = env->clock_every_rows ? env->clock_every_rows : CLOCK_EVERY_ROWS;
    l->pos = s3l_calloc(l->cap, sizeof(*l->pos));
    l->fds = s3l_calloc(l->cap, sizeof(*l->fds));
    l->iopt = s3l_calloc(l->cap, sizeof(*l->iopt));
    l->istream = s3l_calloc(l->cap, sizeof(*l->istream));
    l->cur = s3l_calloc(l->cap, sizeof(*l->cur));
    l->line = s3l_calloc(l->cap, sizeof(*l->line));
    l->skip = s3l_calloc(l->cap, sizeof(*l->skip));
    l->drifted = s3l_calloc(env->n_streams ? env->n_streams : 1, sizeof(*l->drifted));
    if (!l->pos || !l->fds || !l->iopt || !l->istream || !l->cur || !l->line || !l->skip ||
        !l->drifted) {
        loop_free(l);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting the pipeline");
    }
    for (size_t i = 0; i < n; i++) {
        l->pos[i] = pos[i]; /* moved back at the end (loop_free) */
        l->fds[i] = fds[i];
        l->iopt[i] = env->input_opts ? env->input_opts[i] : opts;
        l->istream[i] = env->input_stream ? env->input_stream[i] : 0;
    }
    return 0;
}

/* Gives the caller's inputs back (their positions and fds as the run left them), closes and
 * cleans up the ones follow mode added, and frees the loop's arrays. */
static void loop_free(struct loop *l)
{
    for (size_t i = 0; l->pos && l->fds && i < l->n; i++) {
        if (i < l->n0) {
            l->pos0[i] = l->pos[i];
            l->fds0[i] = l->fds[i];
            continue;
        }
        struct s3l_error e = {0};
        s3l__os_close(l->fds[i], l->pos[i].path, &e);
        s3l_input_position_cleanup(&l->pos[i]);
    }
    s3l_free(l->pos);
    s3l_free(l->fds);
    s3l_free(l->iopt);
    s3l_free(l->istream);
    s3l_free(l->cur);
    s3l_free(l->line);
    s3l_free(l->skip);
    s3l_free(l->drifted);
    l->pos = NULL;
    l->fds = NULL;
}

int s3l__runner_loop(const struct s3l_pipeline_options *opts, const struct s3l__runner_env *env,
                     struct s3l_input_position *pos, const int *fds, size_t n,
                     struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                     struct s3l_error *err)
{
    struct loop l;
    if (loop_init(&l, opts, env, pos, fds, n, stats, err) != 0)
        return err->code;
    char *json = NULL;
    bool pending = false, all_done = false;
    int rc = env->dest->positions(env->dest_ctx, &json, &pending, err);
    *side = S3L_SIDE_DESTINATION;
    if (rc == 0) {
        rc = resume_positions(&l, json, &all_done, err);
        *side = S3L_SIDE_INPUT;
    }
    s3l_free(json);
    for (size_t i = 0; rc == 0 && i < n; i++)
        stats->bytes_resumed += l.pos[i].offset; /* bytes_in counts from these offsets */
    if (rc == 0 && all_done && !pending && !s3l__loop_any_follows(&l)) {
        s3l__loop_report(&l, S3L_EVENT_UP_TO_DATE, NULL);
        goto out;
    }
    uint64_t recovered = 0;
    if (rc == 0) {
        *side = S3L_SIDE_DESTINATION;
        rc = env->dest->start(env->dest_ctx, &recovered, err);
    }
    if (rc == 0 && recovered) {
        stats->last_epoch = recovered;
        s3l__loop_report(&l, S3L_EVENT_RECOVERED, NULL);
    }
    /* The watch is set before the first reads, so a change after them is not missed. */
    if (rc == 0 && (rc = s3l__loop_watch_inputs(&l, err)) != 0)
        *side = S3L_SIDE_INPUT;
    if (rc == 0)
        rc = drain_all(&l, side, err);
    if (rc == 0 && !l.st->stopped && l.watch)
        rc = s3l__loop_follow_inputs(&l, side, err);
    else if (rc == 0 && l.st->stopped && l.watch)
        s3l__loop_note_unended(&l);
    if (rc == 0 && (l.epoch_rows > 0 || l.dirty)) {
        *side = S3L_SIDE_DESTINATION;
        l.now = env->now_ns();
        rc = s3l__loop_commit(&l, err);
    }
    if (l.in_epoch) {
        l.now = env->now_ns();
        rc = s3l__loop_settle_last(&l, rc, side, err);
    }
    if (rc == 0 && l.drift.code) {
        /* The other streams are committed; the drifted one stopped the run's success. */
        *err = l.drift;
        rc = l.drift.code;
        *side = S3L_SIDE_DESTINATION;
    }
    if (rc == 0 && stats->rows == 0 && stats->rows_bad == 0 && stats->bytes_in == 0 && n == 1 &&
        !l.pos[0].replayable && l.pos[0].offset == 0 && !stats->stopped) {
        *side = S3L_SIDE_INPUT;
        rc = s3l_error_set(err, S3L_EINVALID_INPUT, "input %s is empty: nothing to write",
                           l.pos[0].path);
    }
    bool stream = false;
    for (size_t i = 0; i < l.n; i++)
        stream = stream || !l.pos[i].replayable;
    if (rc == 0 && stream) {
        l.now = env->now_ns();
        s3l__loop_report(&l, S3L_EVENT_END, NULL);
    }
out:
    if (rc == 0)
        *side = S3L_SIDE_NONE;
    stats->elapsed_ns = env->now_ns() - l.t_start;
    s3l__loop_inflight_clear(&l);
    loop_free(&l);
    s3l__os_watch_free(l.watch);
    s3l_positions_free(l.retired, l.n_retired);
    s3l_positions_free(l.absent, l.n_absent);
    return rc;
}
