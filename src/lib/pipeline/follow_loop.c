/*
 * The runner's follow mode (runner.c's loop, struct loop in loop.h): which inputs are followed,
 * the watch on them, waiting for more after their end, rotation (a renamed file read to its end,
 * then the new one at its path), new files a source's globs match while followed, and the note on
 * a last line still unended when the run stops. docs/internals/pipeline.md "Follow mode".
 */
#include <stdio.h>
#include <string.h>

#include "loop.h"
#include "os/os.h"

/* Whether input i is followed: a regular file of a source with follow on. */
bool s3l__loop_follows(const struct loop *l, size_t i)
{
    return iopts(l, i)->follow && l->pos[i].replayable && !l->drifted[stream_of(l, i)];
}

bool s3l__loop_any_follows(const struct loop *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (s3l__loop_follows(l, i))
            return true;
    return false;
}

/* The watch over the followed inputs (NULL when none is followed). S3L_ENOMEM. */
int s3l__loop_watch_inputs(struct loop *l, struct s3l_error *err)
{
    if (!s3l__loop_any_follows(l))
        return 0;
    int rc = s3l__os_watch_new(S3L__OS_WATCH_AUTO, FOLLOW_POLL_MS, &l->watch, err);
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        if (s3l__loop_follows(l, i))
            rc = s3l__os_watch_add(l->watch, l->pos[i].path, err);
    return rc;
}

/* Whether [at, at + n) of input i holds a line end (looked at in its first 64 KiB; past them
 * it is taken to: a line that long is not one being appended). */
static bool holds_line_end(struct loop *l, size_t i, uint64_t at, uint64_t n)
{
    char buf[65536];
    size_t got = 0;
    struct s3l_error e = {0};
    if (n > sizeof(buf))
        return true;
    if (s3l__os_pread_full(l->fds[i], buf, (size_t)n, at, &got, l->pos[i].path, &e) != 0)
        return true;
    return memchr(buf, '\n', got) != NULL;
}

/* At a follow run's stop: a followed input with bytes after what was read names them: as a
 * line still being written when they hold no line end, else as lines appended meanwhile (a
 * break-it run saw 37 whole lines called "a line still being appended"). */
void s3l__loop_note_unended(struct loop *l)
{
    for (size_t i = 0; l->o->report && i < l->n; i++) {
        struct s3l__os_stat st;
        struct s3l_error e = {0};
        if (!s3l__loop_follows(l, i) || l->pos[i].compression ||
            s3l__os_fstat(l->fds[i], l->pos[i].path, &st, &e) != 0 || st.size <= l->cur[i])
            continue;
        uint64_t n = st.size - l->cur[i], line = l->line[i] ? l->line[i] : 1;
        char msg[S3L_ERROR_MESSAGE_MAX];
        if (holds_line_end(l, i, l->cur[i], n))
            snprintf(msg, sizeof(msg),
                     "%s line %llu (byte offset %llu): %llu bytes appended after the last read "
                     "were left unread at the stop; the next run reads them",
                     l->pos[i].path, (unsigned long long)line, (unsigned long long)l->cur[i],
                     (unsigned long long)n);
        else
            snprintf(msg, sizeof(msg),
                     "%s line %llu (byte offset %llu): %llu bytes without a line end yet, left "
                     "unread at the stop, as a line still being appended; the next run reads it "
                     "once it is whole",
                     l->pos[i].path, (unsigned long long)line, (unsigned long long)l->cur[i],
                     (unsigned long long)n);
        s3l__loop_report(l, S3L_EVENT_PARTIAL_LINE, msg);
    }
}

/*
 * Input i was rotated: its path names another file now (new, open as nfd and described by np),
 * and the old one was read to its end. The old one's position, at the offset read, is retired
 * under its new name in the same directory (found by device and inode; dropped when it left the
 * directory), and slot i becomes the new file, read from its start. S3L_ENOMEM, S3L_EIO.
 */
static int rotate(struct loop *l, size_t i, struct s3l_input_position *np, int nfd,
                  struct s3l_error *err)
{
    struct s3l_input_position *p = &l->pos[i];
    int rc = 0;
    if (l->cur[i] != p->offset || p->compression)
        rc = s3l_input_position_advance(p, l->fds[i], l->cur[i], err);
    if (rc)
        return rc;
    p->line = l->line[i];
    s3l__loop_record_size(l, i); /* read to its end (but for an unended last line) */
    struct s3l_input_position *v =
        s3l_realloc(l->retired, (l->n_retired + 1) * sizeof(*l->retired));
    if (!v)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory following %s", p->path);
    l->retired = v;
    l->retired[l->n_retired++] = *p; /* takes the strings */
    memset(p, 0, sizeof(*p));
    /* Every retired file, the one just retired too, renamed to where it is now (or dropped). */
    if (s3l__follow_relocate(l->retired, &l->n_retired) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory following %s", np->path);
    struct s3l_error e = {0};
    s3l__os_close(l->fds[i], "rotated input", &e);
    l->fds[i] = nfd; /* closed at the end */
    *p = *np;
    memset(np, 0, sizeof(*np));
    l->cur[i] = 0;
    l->line[i] = 1;
    l->dirty = true;
    return 0;
}

/*
 * One look at followed input i after a change: it is still the file read (check_followed), it is
 * read on to its end; when its path names a new file (a rotation: renamed away, a new file
 * created at the path), the old one, still open, is read to its very end first, then the new one
 * from its start. A path without a file yet (renamed, not created again) is waited for.
 */
static int follow_one(struct loop *l, size_t i, enum s3l_pipeline_side *side,
                      struct s3l_error *err)
{
    int rc = s3l__follow_check(&l->pos[i], l->fds[i], l->cur[i], err);
    if (rc) {
        *side = S3L_SIDE_INPUT;
        return rc;
    }
    if ((rc = s3l__loop_drain(l, i, side, err)) != 0 || l->st->stopped)
        return rc;
    struct s3l__os_stat st;
    struct s3l_error e = {0};
    if (s3l__os_stat(l->pos[i].path, &st, &e) != 0 ||
        (st.dev == l->pos[i].dev && st.ino == l->pos[i].ino))
        return 0; /* the same file, or none at the path yet */
    if (s3l__follow_known(l->pos, l->n, i, l->retired, l->n_retired, st.dev, st.ino))
        return 0; /* a rotation moved a file another input reads to this path: not new */
    struct s3l_input_position np;
    int nfd = -1;
    if (s3l_input_open(l->pos[i].path, &np, &nfd, &e) != 0)
        return 0; /* gone again meanwhile: the next look sees what is there */
    /* What the old file got meanwhile (the writer may have written on before reopening). */
    rc = s3l__loop_drain(l, i, side, err);
    if (rc == 0 && l->st->stopped) {
        s3l__os_close(nfd, np.path, &e);
        s3l_input_position_cleanup(&np);
        return 0;
    }
    if (rc == 0 && (rc = rotate(l, i, &np, nfd, err)) != 0)
        *side = S3L_SIDE_INPUT;
    if (rc) {
        if (nfd >= 0 && l->fds[i] != nfd)
            s3l__os_close(nfd, np.path, &e);
        s3l_input_position_cleanup(&np);
        return rc;
    }
    return s3l__loop_drain(l, i, side, err);
}

/* Follow mode: input i's stream drifted (err): it stops, the others go on. */
static void drifted(struct loop *l, size_t i, struct s3l_error *err)
{
    l->drifted[stream_of(l, i)] = true;
    if (!l->drift.code)
        l->drift = *err;
    s3l__loop_report(l, S3L_EVENT_STREAM_STOPPED, err->message);
    s3l_error_clear(err);
}

/* Whether a source's files hold a glob, so that new files may match it. */
static bool has_glob(const struct s3l_pipeline_options *o)
{
    for (size_t k = 0; k < o->n_patterns; k++)
        if (strpbrk(o->patterns[k], "*?["))
            return true;
    return false;
}

/* Room for one more input in every per-input array. S3L_ENOMEM. */
static int grow_slots(struct loop *l, struct s3l_error *err)
{
    if (l->n < l->cap)
        return 0;
    size_t cap;
    /* Every array grows from a copy of the one capacity; it is kept once they all did. */
#define GROW(a)                                                                                    \
    cap = l->cap;                                                                                  \
    if (s3l__array_reserve(&l->a, &cap, l->n + 1, sizeof(*l->a), 1))                              \
        return s3l_error_set(err, S3L_ENOMEM, "out of memory adding an input");
    GROW(pos)
    GROW(fds)
    GROW(iopt)
    GROW(istream)
    GROW(cur)
    GROW(line)
    GROW(skip)
#undef GROW
    l->cap = cap;
    return 0;
}

/*
 * A file picked up (np, open as fd) that an earlier run read before it went away for a run
 * (l->absent: the same device and inode and the bytes before the recorded offset unchanged,
 * s3l__follow_renamed) resumes from that offset instead of its start: its position is taken into
 * np and dropped from l->absent. A break-it run saw a file moved out of a followed glob and back
 * land whole again.
 */
static void resume_absent(struct loop *l, struct s3l_input_position *np, int fd)
{
    const struct s3l_input_position *a = s3l__follow_renamed(l->absent, l->n_absent, np, fd);
    if (!a || !a->replayable || a->compression || np->compression)
        return;
    size_t j = (size_t)(a - l->absent);
    np->offset = a->offset;
    np->line = a->line;
    np->mid_line = a->mid_line;
    memcpy(np->sha256, a->sha256, sizeof(np->sha256));
    s3l_input_position_cleanup(&l->absent[j]);
    memmove(&l->absent[j], &l->absent[j + 1], (l->n_absent - j - 1) * sizeof(*l->absent));
    l->n_absent--;
}

/*
 * Follow mode: path, a match of source s's globs, is a new file unless an input reads it or a
 * rotation retired it (by device and inode: a rotation moves a followed file to a name the glob
 * matches), or its path is an input's (a new file there is that input's rotation, follow_one).
 * A new one becomes input n, read from its start now and recorded at the next commit.
 * S3L_ENOMEM, the input's and the destination's errors (*side set).
 */
static int pick_one(struct loop *l, size_t s, const char *path, enum s3l_pipeline_side *side,
                    struct s3l_error *err)
{
    struct s3l__os_stat st;
    struct s3l_error e = {0};
    if (s3l__os_stat(path, &st, &e) != 0 || !st.is_reg ||
        s3l__follow_known(l->pos, l->n, l->n, l->retired, l->n_retired, st.dev, st.ino))
        return 0;
    struct s3l_input_position np;
    int nfd = -1;
    if (s3l_input_open(path, &np, &nfd, &e) != 0)
        return 0; /* gone again meanwhile */
    /* Known by the identity of what was opened (renamed since the stat?), or at an input's path. */
    bool skip = s3l__follow_known(l->pos, l->n, l->n, l->retired, l->n_retired, np.dev, np.ino);
    for (size_t k = 0; !skip && k < l->n; k++)
        skip = strcmp(l->pos[k].path, np.path) == 0;
    int rc = skip ? 0 : grow_slots(l, err);
    if (rc == 0 && !skip)
        rc = l->env->input_added(l->env->source_ctx, l->n, s, err); /* source s */
    if (rc || skip) {
        s3l__os_close(nfd, np.path, &e);
        s3l_input_position_cleanup(&np);
        *side = S3L_SIDE_DESTINATION;
        return rc;
    }
    resume_absent(l, &np, nfd);
    size_t i = l->n++;
    l->pos[i] = np;
    l->fds[i] = nfd;
    l->iopt[i] = &l->env->src_opts[s];
    l->istream[i] = l->env->src_stream[s];
    l->cur[i] = np.offset;
    l->line[i] = np.offset ? np.line : 1;
    l->skip[i] = 0;
    l->dirty = true; /* its position is recorded at the next commit, rows or not */
    if ((rc = s3l__os_watch_add(l->watch, l->pos[i].path, err)) != 0) {
        *side = S3L_SIDE_INPUT;
        return rc;
    }
    return s3l__loop_drain(l, i, side, err);
}

/*
 * Follow mode: at most once every FOLLOW_GLOB_NS, each followed source's globs are expanded
 * again and the new files among the matches become inputs (pick_one). A directory that cannot
 * be read now is looked at again next time. S3L_ENOMEM and pick_one's errors.
 */
static int pick_up(struct loop *l, enum s3l_pipeline_side *side, struct s3l_error *err)
{
    if (!l->env->input_added || !l->env->src_opts || !l->env->src_stream)
        return 0;
    int64_t now = l->env->now_ns();
    if (now - l->t_glob < FOLLOW_GLOB_NS)
        return 0;
    l->t_glob = now;
    int rc = 0;
    for (size_t s = 0; rc == 0 && s < l->env->n_src && !l->st->stopped; s++) {
        const struct s3l_pipeline_options *o = &l->env->src_opts[s];
        if (!o->follow || l->drifted[l->env->src_stream[s]] || !has_glob(o))
            continue;
        char **paths = NULL;
        size_t n_paths = 0;
        struct s3l_error e = {0};
        int xrc = s3l_pipeline_expand(o->patterns, o->n_patterns, o->exclude, o->n_exclude,
                                      &paths, &n_paths, &e);
        if (xrc == S3L_ENOMEM) {
            *side = S3L_SIDE_INPUT;
            return s3l_error_set(err, S3L_ENOMEM, "out of memory expanding a file list");
        }
        for (size_t k = 0; xrc == 0 && rc == 0 && k < n_paths && !l->st->stopped; k++)
            rc = pick_one(l, s, paths[k], side, err);
        s3l_pipeline_paths_free(paths, n_paths);
    }
    return rc;
}

/*
 * Follow mode, once every input was read to its end: waits for a followed input to change and
 * reads on from where it is, until a stop request (or an error). What was read is committed when
 * the interval is due while waiting, and the checkpoint rewritten once per interval when nothing
 * was (the heartbeat of an idle stream, s3l__loop_signalled()). The wait is at most FOLLOW_WAIT_MS, so a
 * stop is seen soon also when its signal went to another thread.
 */
int s3l__loop_follow_inputs(struct loop *l, enum s3l_pipeline_side *side, struct s3l_error *err)
{
    int rc = 0;
    while (rc == 0 && s3l__loop_any_follows(l)) {
        if (l->o->stop && *l->o->stop) {
            l->st->stopped = true;
            break;
        }
        int64_t now = l->now = l->env->now_ns();
        int64_t ci = l->o->commit_interval_ns;
        if (s3l__loop_epoch_due(l, now) || (ci > 0 && now - l->t_epoch >= ci)) {
            if ((rc = s3l__loop_commit(l, err)) != 0) {
                *side = S3L_SIDE_DESTINATION;
                break;
            }
        }
        int64_t wait_ms = FOLLOW_WAIT_MS;
        if (ci > 0) {
            int64_t left = (l->t_epoch + ci - l->now) / 1000000;
            wait_ms = S3L_MAX(1, S3L_MIN(wait_ms, left + 1));
        }
        bool changed = s3l__os_watch_wait(l->watch, (int)wait_ms) != 0;
        /* Every input is looked at first (a rotation is seen there), then new matches. */
        for (size_t i = 0; changed && rc == 0 && i < l->n && !l->st->stopped; i++) {
            if (!s3l__loop_follows(l, i))
                continue;
            rc = follow_one(l, i, side, err);
            if (rc == S3L_ESCHEMA_DRIFT && !l->commit_failed) {
                drifted(l, i, err);
                rc = 0;
            }
        }
        if (rc == 0 && !l->st->stopped && (rc = pick_up(l, side, err)) == S3L_ESCHEMA_DRIFT &&
            !l->commit_failed) {
            drifted(l, l->n - 1, err); /* the new input's stream could not open */
            rc = 0;
        }
    }
    if (rc == 0 && l->st->stopped)
        s3l__loop_note_unended(l);
    return rc;
}

