/*
 * Follow mode's bookkeeping of files (runner.c drives it): whether a followed file is still the
 * one read (not truncated, not rewritten), where a rotated file went (found in its directory by
 * device and inode), and which recorded position a followed input resumes from on a restart (by
 * identity first, so a file rotated to another name is the same input). docs/internals/pipeline.md
 * "Follow mode".
 */
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "runner.h"

/*
 * A followed input is still the file whose bytes were read: not truncated below the offset read
 * (copytruncate rotation), its committed bytes not rewritten (the hash of the window before the
 * committed offset, s3l_input_position_verify). S3L_EINVALID_INPUT naming it; S3L_EIO.
 */
int s3l__follow_check(struct s3l_input_position *p, int fd, uint64_t cur, struct s3l_error *err)
{
    struct s3l__os_stat st;
    int rc = s3l__os_fstat(fd, p->path, &st, err);
    if (rc)
        return rc;
    if (!p->compression && st.size < cur)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was truncated while followed: it has %llu bytes, but %llu "
                             "were already read; copytruncate rotation cannot be followed (rotate "
                             "by renaming the file and creating a new one), or land the file as a "
                             "new input with a new --pipeline-id",
                             p->path, (unsigned long long)st.size,
                             (unsigned long long)cur);
    return s3l_input_position_verify(p, p, fd, err);
}

/* readdir callback: the entry of dir with the device and inode sought. */
struct find_ino {
    const char *dir;
    uint64_t dev, ino;
    char *found; /* dir/name, owned */
};

static int find_ino_cb(void *ctx, const char *name, bool is_dir)
{
    struct find_ino *f = ctx;
    if (is_dir)
        return 0;
    size_t n = strlen(f->dir) + strlen(name) + 2;
    char *path = s3l_malloc(n);
    if (!path)
        return S3L_ENOMEM;
    snprintf(path, n, "%s/%s", f->dir, name);
    struct s3l__os_stat st;
    struct s3l_error e = {0};
    if (s3l__os_stat(path, &st, &e) == 0 && st.dev == f->dev && st.ino == f->ino) {
        f->found = path;
        return 1;
    }
    s3l_free(path);
    return 0;
}

/* Where the file p describes is now in the directory of p->path (same device and inode):
 * *found (owned) or NULL when it left the directory. S3L_ENOMEM; an unreadable directory finds
 * nothing. */
static int locate(const struct s3l_input_position *p, char **found)
{
    *found = NULL;
    const char *slash = strrchr(p->path, '/');
    char *dir = slash ? s3l_strndup(p->path, slash == p->path ? 1 : (size_t)(slash - p->path))
                      : s3l_strdup(".");
    if (!dir)
        return S3L_ENOMEM;
    struct find_ino f = {dir, p->dev, p->ino, NULL};
    struct s3l_error e = {0};
    int rc = s3l__os_readdir(dir, find_ino_cb, &f, &e);
    s3l_free(dir);
    *found = f.found;
    return rc == S3L_ENOMEM ? rc : 0;
}

/* The retired files' names now (a rotation scheme renames app.log.1 to app.log.2 before app.log
 * to app.log.1): each is found again by device and inode, or dropped when it left its
 * directory, so that no two positions name one path. S3L_ENOMEM. */
int s3l__follow_relocate(struct s3l_input_position *retired, size_t *n)
{
    size_t k = 0;
    for (size_t j = 0; j < *n; j++) {
        char *now = NULL;
        if (locate(&retired[j], &now) != 0) {
            /* The ones not looked at stay, after those kept: each position is held once. */
            memmove(&retired[k], &retired[j], (*n - j) * sizeof(*retired));
            *n = k + (*n - j);
            return S3L_ENOMEM;
        }
        if (!now) {
            s3l_input_position_cleanup(&retired[j]);
            continue;
        }
        s3l_free(retired[j].path);
        retired[j].path = now;
        retired[k++] = retired[j];
    }
    *n = k;
    return 0;
}

/*
 * What recorded file r holds that was never read: its size now, found in its directory by device
 * and inode, or else the size recorded at the commit (size_known), less the offset read, into
 * *bytes with *known; *known false (a compressed file, an older checkpoint) when neither tells.
 * Returns true when nothing was left unread (read to its end).
 */
bool s3l__follow_unread(const struct s3l_input_position *r, uint64_t *bytes, bool *known)
{
    *bytes = 0;
    *known = false;
    if (!r->replayable || r->compression)
        return false;
    char *now = NULL;
    if (locate(r, &now) == 0 && now) {
        struct s3l__os_stat st;
        struct s3l_error e = {0};
        int rc = s3l__os_stat(now, &st, &e);
        s3l_free(now);
        if (rc == 0 && st.dev == r->dev && st.ino == r->ino) {
            *known = true;
            *bytes = st.size > r->offset ? st.size - r->offset : 0;
            return *bytes == 0;
        }
    }
    if (!r->size_known)
        return false;
    *known = true;
    *bytes = r->size > r->offset ? r->size - r->offset : 0;
    return *bytes == 0;
}

size_t s3l__follow_gone(const struct s3l_input_position *pos, size_t n,
                        const struct s3l_input_position *rec, size_t n_rec, size_t from)
{
    for (size_t j = from; j < n_rec; j++) {
        const struct s3l_input_position *r = &rec[j];
        if (!r->replayable || !r->size_known || !r->path)
            continue; /* a stream, or recorded before sizes were (as before: not looked at) */
        bool input = false;
        for (size_t k = 0; !input && k < n; k++)
            input = (pos[k].path && strcmp(pos[k].path, r->path) == 0) ||
                    (pos[k].replayable && pos[k].dev == r->dev && pos[k].ino == r->ino);
        if (input)
            continue; /* an input's own record, or its path's (s3l__follow_record) */
        struct s3l__os_stat st;
        struct s3l_error e = {0};
        if (s3l__os_stat(r->path, &st, &e) == 0 && st.dev == r->dev && st.ino == r->ino)
            continue; /* still there, only no longer among the files (excluded): not gone */
        uint64_t bytes;
        bool known;
        if (!s3l__follow_unread(r, &bytes, &known))
            return j;
    }
    return n_rec;
}

/*
 * The recorded position of the same file under another name (renamed since it was recorded): the
 * same device and inode, and the bytes before the recorded offset unchanged; else NULL (a new
 * file on a reused inode fails the hash).
 */
const struct s3l_input_position *s3l__follow_renamed(const struct s3l_input_position *rec,
                                                     size_t n_rec,
                                                     const struct s3l_input_position *p, int fd)
{
    for (size_t k = 0; p->replayable && k < n_rec; k++) {
        struct s3l_error tmp = {0};
        if (rec[k].replayable && rec[k].dev == p->dev && rec[k].ino == p->ino &&
            s3l_input_position_verify(&rec[k], p, fd, &tmp) == 0)
            return &rec[k];
    }
    return NULL;
}

/*
 * The recorded position of followed input i: found by device and inode first (a file rotated to
 * another name is the same input), then by path. A path whose record names another file (rotated
 * while no run followed it) is a new file, read from its start, and the file recorded there must
 * be among the inputs, where it is found by its identity: else it is gone before its end was read
 * (S3L_EINVALID_INPUT naming it and the offset after which nothing was read; with skip, the
 * source's `missing: skip`, *lost names its record and the caller reports the loss).
 */
int s3l__follow_record(const struct s3l_input_position *pos, const int *fds, size_t n, size_t i,
                       const struct s3l_input_position *rec, size_t n_rec, bool skip,
                       const struct s3l_input_position **out,
                       const struct s3l_input_position **lost, struct s3l_error *err)
{
    const struct s3l_input_position *p = &pos[i];
    *lost = NULL;
    *out = s3l__follow_renamed(rec, n_rec, p, fds[i]);
    if (*out)
        return 0;
    const struct s3l_input_position *r = s3l_positions_find(rec, n_rec, p->path);
    if (!r || !r->replayable || (r->dev == p->dev && r->ino == p->ino)) {
        *out = r; /* verified by the caller (a rewritten file is refused there) */
        return 0;
    }
    for (size_t k = 0; k < n; k++)
        if (pos[k].replayable && pos[k].dev == r->dev && pos[k].ino == r->ino)
            return 0; /* the old file is input k, resumed by its identity */
    uint64_t bytes;
    bool known;
    if (s3l__follow_unread(r, &bytes, &known))
        return 0; /* read to its end before it was rotated away: nothing lost */
    if (skip) {
        *lost = r;
        return 0;
    }
    char size[96] = "";
    if (known)
        snprintf(size, sizeof(size), " (%llu bytes%s)", (unsigned long long)bytes,
                 r->size_known ? " at least" : "");
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "input %s: the file committed at this path up to byte offset %llu "
                         "(device:inode %llu:%llu) was rotated away and is not among the "
                         "source's files: what it holds after offset %llu was never read%s; add "
                         "its new name to the files (it is found by device and inode), set the "
                         "source's missing: skip to go on without it, or land the inputs with a "
                         "new pipeline",
                         p->path, (unsigned long long)r->offset, (unsigned long long)r->dev,
                         (unsigned long long)r->ino, (unsigned long long)r->offset, size);
}

bool s3l__follow_known(const struct s3l_input_position *pos, size_t n, size_t skip,
                       const struct s3l_input_position *retired, size_t n_retired, uint64_t dev,
                       uint64_t ino)
{
    for (size_t k = 0; k < n; k++)
        if (k != skip && pos[k].dev == dev && pos[k].ino == ino)
            return true;
    for (size_t r = 0; r < n_retired; r++)
        if (retired[r].dev == dev && retired[r].ino == ino)
            return true;
    return false;
}

/*
 * The offset just after the last line feed of the file open as fd at or after from, into *end
 * (from when there is none: no whole line yet). Searched backwards from the file's size in
 * blocks, so the work is the length of the unended last line at most.
 */
int s3l__follow_last_line_end(int fd, const char *path, uint64_t from, uint64_t *end,
                              struct s3l_error *err)
{
    char buf[16384];
    struct s3l__os_stat st;
    int rc = s3l__os_fstat(fd, path, &st, err);
    if (rc)
        return rc;
    uint64_t hi = st.size;
    *end = from;
    while (hi > from) {
        size_t len = (size_t)S3L_MIN((uint64_t)sizeof(buf), hi - from), got = 0;
        rc = s3l__os_pread_full(fd, buf, len, hi - len, &got, path, err);
        if (rc)
            return rc;
        for (size_t k = got; k > 0; k--)
            if (buf[k - 1] == '\n') {
                *end = hi - len + k;
                return 0;
            }
        if (got < len)
            return 0; /* truncated meanwhile: the runner's next look refuses it */
        hi -= len;
    }
    return 0;
}
