/*
 * The runner's recorded positions that no input of this run has (runner.c resume_positions):
 * a followed source's file gone before its end was read (refused, or reported and dropped with
 * missing: skip), and the rest carried to every commit as absent positions, so that a file
 * coming back resumes from its offset (loop.h, struct loop's absent; docs/internals/pipeline.md
 * "Absent inputs").
 */
#include <stdio.h>
#include <string.h>

#include "loop.h"
#include "runner.h"

/* What a lost file held after its offset, for a message: " (N bytes)", " (N bytes at least)"
 * (from the size recorded at the commit) or " (to its end, size unknown)". */
static void lost_size(const struct s3l_input_position *lost, char *buf, size_t cap)
{
    uint64_t bytes;
    bool known;
    s3l__follow_unread(lost, &bytes, &known);
    if (known)
        snprintf(buf, cap, " (%llu bytes%s)", (unsigned long long)bytes,
                 lost->size_known ? " at least" : "");
    else
        snprintf(buf, cap, " (to its end, size unknown)");
}

/*
 * A followed source's `missing: skip` (o, the source's options): the file committed at an
 * input's path (gone false: rotated away, another file at the path) or at a path no input has
 * any more (gone true: deleted or moved away), lost (its record), is gone before its end was
 * read. The loss is reported (S3L_EVENT_INPUT_MISSING) and the run goes on; the record is not
 * written again, so the next commit drops it.
 */
void s3l__loop_report_missing(struct loop *l, const struct s3l_pipeline_options *o,
                              const struct s3l_input_position *lost, bool gone)
{
    if (!l->o->report)
        return;
    const char *src = o->source_name;
    char msg[S3L_ERROR_MESSAGE_MAX], size[64];
    lost_size(lost, size, sizeof(size));
    snprintf(msg, sizeof(msg),
             "%s%s%sinput %s: the file committed at this path up to byte offset %llu "
             "(device:inode %llu:%llu) %s and is not among the source's files: "
             "what it holds after offset %llu%s was never read and is skipped (missing: skip)",
             src ? "source " : "", src ? src : "", src ? ": " : "", lost->path,
             (unsigned long long)lost->offset, (unsigned long long)lost->dev,
             (unsigned long long)lost->ino,
             gone ? "is gone (deleted, or moved out of its directory)" : "was rotated away",
             (unsigned long long)lost->offset, size);
    l->st->elapsed_ns = l->now - l->t_start;
    struct s3l_pipeline_report r = {S3L_EVENT_INPUT_MISSING, l->st, lost, 1, msg, NULL, src};
    l->o->report(l->o->report_ctx, &r);
}

/* The followed source a recorded file at no input's path belonged to: the one whose inputs
 * are in the same directory, else the first followed one; NULL when no input follows. */
static const struct s3l_pipeline_options *gone_source(const struct loop *l,
                                                      const struct s3l_input_position *r)
{
    const struct s3l_pipeline_options *first = NULL;
    const char *slash = strrchr(r->path, '/');
    size_t dir = slash ? (size_t)(slash - r->path) : 0;
    for (size_t k = 0; k < l->n; k++) {
        if (!s3l__loop_follows(l, k))
            continue;
        first = first ? first : iopts(l, k);
        const char *ks = strrchr(l->pos[k].path, '/');
        if (ks && (size_t)(ks - l->pos[k].path) == dir && strncmp(l->pos[k].path, r->path, dir) == 0)
            return iopts(l, k);
    }
    return first;
}

/*
 * Follow mode, at start: a checkpointed followed file that no input has (by path or identity)
 * and that is gone (deleted, moved out of its directory, or renamed out of the files with no new
 * file at its path) before its end was read (s3l__follow_gone): S3L_EINVALID_INPUT naming it
 * and the bytes never read, or with its source's missing: skip the S3L_EVENT_INPUT_MISSING
 * report. A file read to its end at its last commit is not lost. S3L_ENOMEM not (no allocation).
 */
int s3l__loop_gone_records(struct loop *l, const struct s3l_input_position *rec, size_t n_rec,
                           struct s3l_error *err)
{
    for (size_t j = 0; (j = s3l__follow_gone(l->pos, l->n, rec, n_rec, j)) < n_rec; j++) {
        const struct s3l_pipeline_options *o = gone_source(l, &rec[j]);
        if (!o)
            return 0; /* nothing follows: as a batch run, a file left out is not looked for */
        if (o->missing_skip) {
            s3l__loop_report_missing(l, o, &rec[j], true);
            continue;
        }
        char size[64];
        lost_size(&rec[j], size, sizeof(size));
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s: the file committed at this path up to byte offset %llu "
                             "(device:inode %llu:%llu) is gone (deleted, or moved out of its "
                             "directory) and is not among the source's files: what it holds "
                             "after offset %llu was never read%s; put it back (it is found by "
                             "device and inode), set the source's missing: skip to go on without "
                             "it, or land the inputs with a new pipeline",
                             rec[j].path, (unsigned long long)rec[j].offset,
                             (unsigned long long)rec[j].dev, (unsigned long long)rec[j].ino,
                             (unsigned long long)rec[j].offset, size);
    }
    return 0;
}

/*
 * The recorded positions no input took (used[j] false) into l->absent (moved out of rec), but
 * for a followed source's gone files (gone_records reports or refuses them: they are dropped).
 * At most S3L__ABSENT_MAX: rec holds the inputs' first, the long absent last, dropped first.
 */
int s3l__loop_carry_absent(struct loop *l, struct s3l_input_position *rec, size_t n_rec,
                           const bool *used, struct s3l_error *err)
{
    size_t gone = s3l__follow_gone(l->pos, l->n, rec, n_rec, 0), dropped = 0;
    const char *first = NULL;
    for (size_t j = 0; j < n_rec; j++) {
        if (j == gone) {
            gone = s3l__follow_gone(l->pos, l->n, rec, n_rec, j + 1);
            if (gone_source(l, &rec[j]))
                continue;
        }
        if (used[j])
            continue;
        if (l->n_absent == S3L__ABSENT_MAX) { /* said, not silent (a break-it run) */
            first = first ? first : rec[j].path;
            dropped++;
            continue;
        }
        if (!l->absent && !(l->absent = s3l_calloc(S3L_MIN(n_rec, (size_t)S3L__ABSENT_MAX),
                                                   sizeof(*l->absent))))
            return s3l_error_set(err, S3L_ENOMEM, "out of memory keeping input positions");
        l->absent[l->n_absent++] = rec[j];
        memset(&rec[j], 0, sizeof(rec[j])); /* moved */
    }
    if (dropped) {
        char msg[S3L_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof(msg),
                 "%zu inputs of earlier runs are absent from this one beyond the %d a checkpoint "
                 "keeps; their positions are dropped (the first: %s), and such a file coming "
                 "back is read from its start", dropped, S3L__ABSENT_MAX, first ? first : "?");
        s3l__loop_report(l, S3L_EVENT_NOTE, msg);
    }
    return 0;
}
