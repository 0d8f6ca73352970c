/*
 * Inputs another pipeline already landed. The default pipeline id is derived from the inputs'
 * paths (pipeline_id.c), so renaming an input, or adding one to the command, makes a new
 * pipeline that would read from offset 0 what the old one already committed: the same rows
 * twice. Before any data moves, the inputs are compared with the checkpoints of the other
 * pipelines that committed epochs to the same table (found through its markers): an input with
 * the same device and inode whose bytes before the recorded offset are unchanged (the 4 KiB hash
 * the checkpoint keeps, position.c) is the same data, and the run is refused, naming the other
 * pipeline and how to go on. An inode reused by a new file fails the hash and is not refused.
 */
#include <stdio.h>
#include <string.h>

#include "commit/commit.h"
#include "runner.h"

#define UUID_LEN 36

struct ids {
    const char *own;
    char (*id)[UUID_LEN + 1];
    size_t n, cap;
};

/* Collects the distinct pipeline ids of the table's markers (commit/: s3l__marker_names), other
 * than own. Ids that are not UUIDs were given by a caller (--pipeline-id takes a UUID only, and
 * the derived id is one), never derived from inputs' paths: they are not looked at. */
static int on_marker(void *ctx, const char *pipeline, uint64_t epoch)
{
    struct ids *s = ctx;
    (void)epoch;
    if (strlen(pipeline) != UUID_LEN || strcmp(pipeline, s->own) == 0)
        return 0;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->id[i], pipeline) == 0)
            return 0;
    if (s3l__array_reserve(&s->id, &s->cap, s->n + 1, sizeof(*s->id), 8))
        return S3L_ENOMEM;
    memcpy(s->id[s->n++], pipeline, UUID_LEN + 1);
    return 0;
}

/* The positions recorded in pipeline id's checkpoint (*n 0 when it has none). */
static int recorded(struct s3l_store *store, const char *id, struct s3l_input_position **pos,
                    size_t *n, struct s3l_error *err)
{
    char *state = NULL;
    *pos = NULL;
    *n = 0;
    int rc = s3l_pipeline_peek(store, id, &state, NULL, NULL, err);
    if (rc == 0 && state)
        rc = s3l_positions_from_json(state, strlen(state), pos, n, err);
    s3l_free(state);
    return rc;
}

static bool same_file(const struct s3l_input_position *a, const struct s3l_input_position *b)
{
    return a->replayable && b->replayable && a->dev == b->dev && a->ino == b->ino;
}

/* Refuses input i when other pipeline `other` recorded it, unchanged, with bytes committed. */
static int compare(const char *other, const struct s3l_input_position *rec, size_t n_rec,
                   const struct s3l_input_position *in, int fd, const char *table,
                   struct s3l_error *err)
{
    for (size_t k = 0; k < n_rec; k++) {
        if (!same_file(&rec[k], in) || rec[k].offset == 0)
            continue;
        struct s3l_error tmp = {0};
        if (s3l_input_position_verify(&rec[k], in, fd, &tmp) != 0)
            continue; /* another file on a reused inode, or rewritten: not the same data */
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was already landed into table %s, up to byte %llu, by "
                             "pipeline %s (as %s); this command is another pipeline (its id "
                             "comes from the inputs' paths) and would land those rows again. To "
                             "go on with that pipeline give --pipeline-id %s (only new bytes "
                             "land); to land the file again on purpose give a new --pipeline-id",
                             in->path, table, (unsigned long long)rec[k].offset, other, rec[k].path,
                             other);
    }
    return 0;
}

int s3l__check_landed_elsewhere(struct s3l_store *store, const char *table, const char *id,
                                const struct s3l_input_position *pos, const int *fds, size_t n,
                                struct s3l_error *err)
{
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any |= pos[i].replayable;
    if (!any)
        return 0;
    struct ids ids = {id, NULL, 0, 0};
    int rc = s3l__marker_names(store, table, on_marker, &ids, err);
    struct s3l_input_position *own = NULL, *rec = NULL;
    size_t n_own = 0, n_rec = 0;
    if (rc == 0 && ids.n)
        rc = recorded(store, id, &own, &n_own, err);
    for (size_t p = 0; rc == 0 && p < ids.n; p++) {
        rc = recorded(store, ids.id[p], &rec, &n_rec, err);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            bool tracked = false; /* this pipeline resumes it: its own checkpoint decides */
            for (size_t k = 0; k < n_own && !tracked; k++)
                tracked = same_file(&own[k], &pos[i]);
            if (!tracked && pos[i].replayable)
                rc = compare(ids.id[p], rec, n_rec, &pos[i], fds[i], table, err);
        }
        s3l_positions_free(rec, n_rec);
        rec = NULL;
        n_rec = 0;
    }
    s3l_positions_free(own, n_own);
    s3l_free(ids.id);
    return rc;
}
