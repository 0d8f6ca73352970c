/*
 * The epochs a commit leaves finishing in the background (the destination's pipelined commit,
 * docs/internals/pipeline.md): when the run may leave one finishing while it reads on, what the
 * report of an epoch handed over will show, the report once it finished, and the waits for it
 * (settling). The loop itself is runner.c's.
 */
#include <stdio.h>
#include <string.h>

#include "loop.h"

/* Drops the report kept for an epoch finishing in the background. */
void s3l__loop_inflight_clear(struct loop *l)
{
    for (size_t i = 0; l->in_pos && i < l->in_n; i++)
        s3l_input_position_cleanup(&l->in_pos[i]);
    s3l_free(l->in_pos);
    l->in_pos = NULL;
    l->in_n = 0;
    l->in_epoch = 0;
}

/* Counts the staged files an epoch's finish could not delete, and says so at the first of the
 * run (S3L_EVENT_STAGED_LEFT): they are garbage that costs storage until gc removes them, and a
 * store that refuses deletes (a policy without s3:DeleteObject) would leave every epoch's. */
static void staged_left(struct loop *l, const struct s3l__commit_info *info)
{
    bool first = l->st->staged_left == 0;
    l->st->staged_left += info->staged_left;
    if (!first || !l->o->report)
        return;
    char msg[S3L_ERROR_MESSAGE_MAX + 512];
    snprintf(msg, sizeof(msg),
             "epoch %llu is committed, but %llu of its staged files could not be deleted (%s); "
             "they are garbage under _openetl/staging/, and each later epoch may leave its own: "
             "`s3land gc` removes them once deletes succeed (s3:DeleteObject) and the pipeline "
             "is idle or a later run of it has committed",
             (unsigned long long)info->epoch, (unsigned long long)info->staged_left,
             info->staged_left_why && *info->staged_left_why ? info->staged_left_why
                                                             : "no answer kept");
    s3l__loop_report(l, S3L_EVENT_STAGED_LEFT, msg);
}

/* Accounts a finished epoch (info from a commit or a sync) and reports it: with what the run
 * showed at its commit when it finished in the background, so that the report is the one a
 * commit finishing at once would have made (its rows, files and positions). */
void s3l__loop_finished(struct loop *l, const struct s3l__commit_info *info)
{
    if (!info->epoch)
        return;
    if (info->staged_left)
        staged_left(l, info);
    l->st->epochs++;
    l->st->last_epoch = info->epoch;
    l->st->files += info->files;
    l->st->bytes_out += info->bytes;
    if (l->in_epoch != info->epoch) {
        s3l__loop_report_requests(l, S3L_EVENT_COMMIT, NULL, &info->requests);
        return;
    }
    struct s3l_pipeline_stats st = l->in_st;
    st.epochs = l->st->epochs;
    st.last_epoch = l->st->last_epoch;
    st.files = l->st->files;
    st.bytes_out = l->st->bytes_out;
    if (l->o->report) {
        st.elapsed_ns = l->now - l->t_start;
        struct s3l_pipeline_report r = {S3L_EVENT_COMMIT, &st,   l->in_pos, l->in_n, NULL,
                                        &info->requests,  NULL};
        l->o->report(l->o->report_ctx, &r);
    }
    s3l__loop_inflight_clear(l);
}

/* Keeps what the report of the epoch just handed over (finishing) will show. Without memory
 * for it, the commit is settled at once instead (the caller's *settle). */
void s3l__loop_inflight_keep(struct loop *l, uint64_t finishing, bool *settle)
{
    s3l__loop_inflight_clear(l);
    struct s3l_input_position *p = s3l_calloc(l->n ? l->n : 1, sizeof(*p));
    size_t k = 0;
    while (p && k < l->n && s3l_input_position_copy(&p[k], &l->pos[k]) == 0)
        k++;
    l->in_pos = p;
    l->in_n = k;
    if (!p || k < l->n) {
        s3l__loop_inflight_clear(l);
        *settle = true;
        return;
    }
    l->in_epoch = finishing;
    l->in_st = *l->st;
}

void s3l__loop_progress(struct loop *l, int64_t now)
{
    if (now - l->t_progress >= S3L__PROGRESS_EVERY_NS) {
        l->t_progress = now;
        s3l__loop_report(l, S3L_EVENT_PROGRESS, NULL);
    }
}

int s3l__loop_settle(struct loop *l, struct s3l_error *err)
{
    if (!l->env->dest->sync)
        return 0;
    /* The wait may be long (the last epoch's uploads, its commit point and finish): progress is
     * reported meanwhile, as while reading. */
    while (l->env->dest->wait &&
           !l->env->dest->wait(l->env->dest_ctx, S3L__PROGRESS_EVERY_NS / 1000000)) {
        l->now = l->env->now_ns();
        s3l__loop_progress(l, l->now);
    }
    struct s3l__commit_info info;
    memset(&info, 0, sizeof(info));
    int rc = l->env->dest->sync(l->env->dest_ctx, &info, err);
    if (rc == 0)
        s3l__loop_finished(l, &info);
    else
        l->commit_failed = true;
    s3l__loop_inflight_clear(l);
    return rc;
}

/*
 * Whether a commit may leave its epoch finishing while the run reads on (the destination's
 * pipelined commit, docs/internals/pipeline.md): only while every input is a file read to its
 * end and none is followed. A stream's committed offset is printed at its commit for the caller
 * to resend from, and a followed input's positions change under rotations: those commits are
 * settled at once, as are the ones where the run waits anyway (a quiet stream, follow mode's
 * wait, a schema growth, the end).
 */
bool s3l__loop_may_pipeline(const struct loop *l)
{
    if (l->watch || s3l__loop_any_follows((struct loop *)l))
        return false;
    for (size_t i = 0; i < l->n; i++)
        if (!l->pos[i].replayable)
            return false;
    return true;
}

int s3l__loop_settle_last(struct loop *l, int rc, enum s3l_pipeline_side *side,
                          struct s3l_error *err)
{
    if (rc == 0) {
        /* The run is done only when its last epoch is: a commit settles its own, this one
         * settles the last of the reading (the input ended just after an epoch). */
        *side = S3L_SIDE_DESTINATION;
        return s3l__loop_settle(l, err);
    }
    /* The run failed while an epoch finished: that epoch came first in the protocol's order, so
     * its failure is the run's (as when it finished before the reading went on). */
    struct s3l_error e2 = {0};
    int src = s3l__loop_settle(l, &e2);
    if (src == 0)
        return rc;
    *err = e2;
    *side = S3L_SIDE_DESTINATION;
    return src;
}
