/*
 * Staged uploads of the local (file://) backend (s3l/sys/store.h: upload_stage,
 * staged_complete, staged_abort), the equivalent of a pending multipart upload that any process
 * can complete by its id. Stage: the upload's temp file is fsynced, then renamed to
 * "<dir>/.s3l-mpu-<upload id>" (32 random hex digits) and the directory fsynced; a staged file
 * is hidden from listings and never swept. Its token is its ETag (the backend's rule: SHA-256 of
 * up to 1 MiB of content, else size, mtime and inode), which link(2) keeps. Complete: link(2) of
 * the staged file to the key (never replacing anything), fsync of the directory, unlink of the
 * staged name, fsync again. Idempotent: an object at the key with the token's ETag and the size
 * is this upload's, so a complete repeated after a crash anywhere in that sequence finishes it
 * (removing a staged name left behind) and reports success. Abort: unlink of the staged file.
 */
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "store/local_int.h"
#include "util/util.h"

/* The staged file of upload_id beside path; S3L_EINVALID_ARGUMENT unless 32 hex digits. */
static int staged_path(const char *path, const char *upload_id, char **dir, char **out,
                       struct s3l_error *err)
{
    *dir = *out = NULL;
    if (strlen(upload_id) != 32 || strspn(upload_id, "0123456789abcdef") != 32)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "local upload id '%.64s' is not 32 hex digits", upload_id);
    char name[64];
    snprintf(name, sizeof(name), S3L__LOCAL_STAGED_PREFIX "%s", upload_id);
    *dir = s3l__local_dir_of(path);
    *out = *dir ? s3l__local_join(*dir, name) : NULL;
    if (!*out) {
        s3l_free(*dir);
        *dir = NULL;
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    return 0;
}

/* Fills out from the staged file at staged: id, token (its ETag), one part. */
static int describe(const char *staged, const char *id, struct s3l_staged *out,
                    struct s3l_error *err)
{
    struct s3l_object_info info;
    int rc = s3l__local_info(staged, &info, err);
    if (rc)
        return rc;
    out->upload_id = s3l_strdup(id);
    out->token = s3l_strdup(info.etag);
    out->parts = s3l_calloc(1, sizeof(*out->parts));
    if (!out->upload_id || !out->token || !out->parts)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    out->size = info.size;
    out->n_parts = 1;
    out->parts[0].number = 1;
    out->parts[0].size = info.size;
    snprintf(out->parts[0].etag, sizeof(out->parts[0].etag), "%s", info.etag);
    return 0;
}

int s3l__local_upload_stage(struct s3l_upload *up, struct s3l_staged *out, struct s3l_error *err)
{
    struct local_upload *u = (struct local_upload *)up;
    int rc = 0;
    if (up->size == 0)
        rc = s3l_error_set(err, S3L_EINVALID_ARGUMENT, "stage of '%s': no bytes", up->key);
    uint8_t rnd[16];
    char id[33];
    if (rc == 0 && RAND_bytes(rnd, sizeof(rnd)) != 1)
        rc = s3l_error_set(err, S3L_EINTERNAL, "stage of '%s': no random bytes", up->key);
    s3l_hex_encode(rnd, sizeof(rnd), id);
    char *dir = NULL, *staged = NULL;
    if (rc == 0)
        rc = staged_path(u->path, id, &dir, &staged, err);
    if (rc == 0)
        rc = s3l__os_fsync(u->fd, u->tmp, err);
    /* Held by a second descriptor until renamed, as publish does: no sweep takes it. */
    int hold = -1;
    if (rc == 0 && s3l__os_open_read(u->tmp, &hold, NULL) == 0)
        s3l__os_hold(hold);
    int crc = s3l__os_close(u->fd, u->tmp, rc ? NULL : err);
    u->fd = -1;
    rc = rc ? rc : crc;
    if (rc == 0)
        rc = s3l__os_rename(u->tmp, staged, err);
    if (hold >= 0)
        s3l__os_close(hold, u->tmp, NULL);
    if (rc == 0)
        rc = s3l__os_fsync_dir(dir, err);
    if (rc == 0)
        rc = describe(staged, id, out, err);
    if (rc) {
        s3l_staged_cleanup(out);
        s3l__os_unlink(u->tmp, true, NULL);
        if (staged)
            s3l__os_unlink(staged, true, NULL);
    }
    s3l_free(dir);
    s3l_free(staged);
    s3l__local_upload_free(u);
    return rc;
}

/* Whether the file at path is the staged upload st (its ETag is the token, its size st's). */
static int is_ours(const char *path, const struct s3l_staged *st, struct s3l_object_info *info,
                   bool *ours, struct s3l_error *err)
{
    int rc = s3l__local_info(path, info, err);
    *ours = rc == 0 && strcmp(info->etag, st->token) == 0 && info->size == st->size;
    return rc;
}

/* One attempt: done (0), S3L_EEXISTS when the key appeared meanwhile (try again), or failed. */
static int complete_once(const char *key, const char *path, const char *dir, const char *staged,
                         const struct s3l_staged *st, struct s3l_object_info *info,
                         struct s3l_error *err)
{
    struct s3l_object_info cur;
    bool ours = false;
    struct s3l_error e = {0};
    int rc = is_ours(path, st, &cur, &ours, &e);
    if (rc == 0 && ours) { /* done before (perhaps by a process that died before the unlink) */
        rc = s3l__os_unlink(staged, true, err);
        if (rc == 0)
            rc = s3l__os_fsync_dir(dir, err);
        if (rc == 0 && info)
            *info = cur;
        return rc;
    }
    if (rc == 0)
        return s3l_error_set(err, S3L_ECONFLICT,
                             "complete of '%s': another object is at the key (%llu bytes, ETag "
                             "%s); the staged upload is not published over it",
                             key, (unsigned long long)cur.size, cur.etag);
    if (rc != S3L_ENOT_FOUND)
        return s3l_error_set(err, rc, "complete of '%s': %s", key, e.message);
    s3l_error_clear(&e);
    rc = is_ours(staged, st, &cur, &ours, &e);
    if (rc == S3L_ENOT_FOUND)
        return s3l_error_set(err, S3L_ENOT_FOUND,
                             "complete of '%s': the upload %s is gone (aborted, or never made) "
                             "and no object is at the key",
                             key, st->upload_id);
    if (rc == 0 && !ours)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "complete of '%s': the staged file %s is not the upload staged "
                             "(%llu bytes, ETag %s; expected %llu, %s)",
                             key, staged, (unsigned long long)cur.size, cur.etag,
                             (unsigned long long)st->size, st->token);
    if (rc == 0)
        rc = s3l__os_link(staged, path, &e);
    if (rc == S3L_EEXISTS)
        return rc;
    if (rc)
        return s3l_error_set(err, rc, "complete of '%s': %s", key, e.message);
    rc = s3l__os_fsync_dir(dir, err);
    if (rc == 0)
        rc = s3l__os_unlink(staged, false, err);
    if (rc == 0)
        rc = s3l__os_fsync_dir(dir, err);
    if (rc == 0 && info)
        *info = cur;
    return rc;
}

int s3l__local_staged_complete(struct s3l_store *s, const char *key, const struct s3l_staged *st,
                               struct s3l_object_info *info, struct s3l_error *err)
{
    char *path = s3l__local_key_path(s, key), *dir = NULL, *staged = NULL;
    if (!path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    int rc = staged_path(path, st->upload_id, &dir, &staged, err);
    for (int attempt = 0; rc == 0 && attempt < 3; attempt++) {
        rc = complete_once(key, path, dir, staged, st, info, err);
        if (rc != S3L_EEXISTS)
            break;
    }
    if (rc == S3L_EEXISTS)
        rc = s3l_error_set(err, S3L_ECONFLICT, "complete of '%s': the key keeps changing", key);
    s3l_free(path);
    s3l_free(dir);
    s3l_free(staged);
    return rc;
}

int s3l__local_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                            struct s3l_error *err)
{
    char *path = s3l__local_key_path(s, key), *dir = NULL, *staged = NULL;
    if (!path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    int rc = staged_path(path, upload_id, &dir, &staged, err);
    if (rc == 0)
        rc = s3l__os_unlink(staged, true, err);
    if (rc == 0)
        (void)s3l__os_fsync_dir(dir, NULL); /* best effort: a dropped staged file may return */
    s3l_free(path);
    s3l_free(dir);
    s3l_free(staged);
    return rc;
}
