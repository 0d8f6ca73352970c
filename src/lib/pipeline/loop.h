/*
 * The runner's loop state (runner.c), shared with its follow-mode half (follow_loop.c): one
 * struct loop a run, on the runner's thread only. Private to src/lib/pipeline.
 */
#ifndef S3L_PIPELINE_LOOP_H
#define S3L_PIPELINE_LOOP_H

#include "runner.h"

#define FOLLOW_WAIT_MS    250 /* follow mode: the longest wait between looks at a stop */
#define FOLLOW_POLL_MS    500 /* follow mode without inotify: a stat of each input this often */
#define FOLLOW_GLOB_NS    1000000000LL /* follow mode: a source's globs expanded again this often */
#define S3L__PROGRESS_EVERY_NS 500000000LL /* a progress report at most this often */

struct loop {
    const struct s3l_pipeline_options *o;
    const struct s3l__runner_env *env;
    /* The inputs: the caller's n0 (pos0, fds0) moved into arrays of cap slots the loop owns,
     * so that follow mode can add the new files a glob matches (slots n0 .. n-1, closed and
     * cleaned up by the loop; the first n0 go back to the caller at the end). */
    struct s3l_input_position *pos;
    int *fds;
    size_t n, n0, cap;
    struct s3l_input_position *pos0;
    int *fds0;
    const struct s3l_pipeline_options **iopt; /* per input: its source's options */
    size_t *istream;                          /* per input: its stream */
    int64_t t_glob; /* follow mode: when the globs were last expanded */
    uint64_t *cur;    /* per input: offset reached, not yet committed */
    uint64_t *line;   /* per input: number of the line at cur */
    uint64_t *skip;   /* per input: bytes of a stream to drop first (resent, already committed) */
    struct s3l_pipeline_stats *st;
    int64_t now, t_start, t_epoch, t_progress; /* now: the last clock reading */
    unsigned clock_every;
    uint64_t epoch_rows; /* rows put since the last commit */
    bool dirty;          /* a position moved since the last commit */
    unsigned lane;
    bool *drifted;             /* per stream: stopped by SCHEMA_DRIFT */
    /* A commit or settle failed: its error ends the run whatever its code. A SCHEMA_DRIFT there
     * is the destination's (a schema record another writer changed, read again before the
     * commit point: commit.md "Schema records"), which dropped the whole epoch, every stream's
     * rows; it is not one stream's drift at its open, which stops that stream alone. */
    bool commit_failed;
    struct s3l__os_watch *watch; /* follow mode: the followed inputs' watch, else NULL */
    /* Follow mode: files rotated away (renamed, a new file at their path) and read to their
     * end, by their new name: kept in the checkpoint, so a later run whose files match the new
     * name finds it read (by device and inode) instead of reading it again. */
    struct s3l_input_position *retired;
    size_t n_retired;
    /* Recorded positions that no input of this run has (a source left out of the document for
     * a run, a file moved out of its glob and back): carried to every commit after the inputs'
     * and the retired ones, so that the file coming back resumes from its offset instead of
     * landing again (found by a break-it run: 50 of 50 rows twice). At most S3L__ABSENT_MAX, the
     * longest absent dropped first. A followed source's gone files are gone_records' instead. */
    struct s3l_input_position *absent;
    size_t n_absent;
    struct s3l_error drift;    /* the first drift's error, returned at the end */
    /* The epoch the destination finishes in the background (pipelined commit), 0 when none,
     * and what its commit report shows, taken at its commit: the stats then and copies of the
     * positions it recorded (in_pos, in_n entries). */
    uint64_t in_epoch;
    struct s3l_pipeline_stats in_st;
    struct s3l_input_position *in_pos;
    size_t in_n;
};

/* The most absent positions a checkpoint carries (struct loop's absent): bounds its size. */
#define S3L__ABSENT_MAX 4096

/* The options of the source input i belongs to (its format and --bad-records). */
static inline const struct s3l_pipeline_options *iopts(const struct loop *l, size_t i)
{
    return l->iopt[i];
}

/* The stream (table) input i feeds. */
static inline size_t stream_of(const struct loop *l, size_t i)
{
    return l->istream[i];
}

/* absent.c: the recorded positions no input of this run has (each as its comment there says). */
void s3l__loop_report_missing(struct loop *l, const struct s3l_pipeline_options *o,
                              const struct s3l_input_position *lost, bool gone);
int s3l__loop_gone_records(struct loop *l, const struct s3l_input_position *rec, size_t n_rec,
                           struct s3l_error *err);
int s3l__loop_carry_absent(struct loop *l, struct s3l_input_position *rec, size_t n_rec,
                           const bool *used, struct s3l_error *err);

/* runner.c: the loop's steps the follow half calls (each as its comment in runner.c says). */
int s3l__loop_drain(struct loop *l, size_t i, enum s3l_pipeline_side *side, struct s3l_error *err);
/* A progress report when the last one is S3L__PROGRESS_EVERY_NS before now (settle.c: the
 * reading's and the settle's wait's). */
void s3l__loop_progress(struct loop *l, int64_t now);
/* settle.c: the epochs finishing in the background. s3l__loop_settle waits for the one finishing
 * (none: 0) and reports it; s3l__loop_settle_last does so at the end of the run whose result is
 * rc, and returns the run's result (a failure of that epoch's finish comes first); the others
 * keep, report and drop what an epoch handed over will show, and say whether a commit may be
 * left finishing while the run reads on. */
int s3l__loop_settle(struct loop *l, struct s3l_error *err);
int s3l__loop_settle_last(struct loop *l, int rc, enum s3l_pipeline_side *side,
                          struct s3l_error *err);
void s3l__loop_inflight_clear(struct loop *l);
void s3l__loop_finished(struct loop *l, const struct s3l__commit_info *info);
void s3l__loop_inflight_keep(struct loop *l, uint64_t finishing, bool *settle);
bool s3l__loop_may_pipeline(const struct loop *l);
void s3l__loop_report(struct loop *l, enum s3l_pipeline_event ev, const char *message);
void s3l__loop_report_requests(struct loop *l, enum s3l_pipeline_event ev, const char *message,
                            const struct s3l_store_counts *requests);
int s3l__loop_signalled(struct loop *l, size_t i, enum s3l__source_signal signal, uint64_t off,
                     uint64_t line, bool *end, enum s3l_pipeline_side *side,
                     struct s3l_error *err);
void s3l__loop_record_size(struct loop *l, size_t i);
bool s3l__loop_epoch_due(struct loop *l, int64_t now);
int s3l__loop_commit(struct loop *l, struct s3l_error *err);

/* follow_loop.c: follow mode (wait for more, rotation, new files of a glob, unended lines). */
bool s3l__loop_follows(const struct loop *l, size_t i);
bool s3l__loop_any_follows(const struct loop *l);
int s3l__loop_watch_inputs(struct loop *l, struct s3l_error *err);
void s3l__loop_note_unended(struct loop *l);
int s3l__loop_follow_inputs(struct loop *l, enum s3l_pipeline_side *side, struct s3l_error *err);

#endif
