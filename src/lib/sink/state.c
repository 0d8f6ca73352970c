/*
 * A driver's state file, written atomically and durably (s3land pipe keeps its run id, input
 * offset and committables in one): the bytes go to a temp file beside the target, which is
 * fsynced, renamed over the target, and the directory fsynced, so after a crash the file holds
 * the old bytes or the new ones, whole. All through src/lib/os.
 */
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "sink/sink.h"

#define STATE_PATH_MAX 4000 /* include/s3l/ndjson_sink.h: "a path over 4,000 bytes" is refused */

/* The directory part of path ("." for a bare name) into buf. */
static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, cap, ".");
    else if (slash == path)
        snprintf(buf, cap, "/");
    else
        snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

int s3l_sink_state_save(const char *path, const void *data, size_t len, struct s3l_error *err)
{
    if (!path || !*path || (!data && len))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "state: NULL path or data");
    /* Checked before the directory is cut from it: a longer path would be cut short there. */
    if (strlen(path) > STATE_PATH_MAX)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "state: path over %d bytes",
                             STATE_PATH_MAX);
    char dir[STATE_PATH_MAX + 1], tmp[STATE_PATH_MAX + 40];
    dir_of(path, dir, sizeof(dir));
    snprintf(tmp, sizeof(tmp), "%s.tmp-%llu", path, (unsigned long long)s3l__os_unique());
    int rc = s3l__os_mkdirs(dir, err);
    int fd = -1;
    if (rc == 0)
        rc = s3l__os_create_excl(tmp, &fd, err);
    if (rc != 0)
        return rc;
    rc = s3l__os_write_all(fd, data, len, tmp, err);
    if (rc == 0)
        rc = s3l__os_fsync(fd, tmp, err);
    int rc2 = s3l__os_close(fd, tmp, rc ? NULL : err);
    if (rc == 0)
        rc = rc2;
    if (rc == 0)
        rc = s3l__os_rename(tmp, path, err);
    if (rc != 0) {
        s3l__os_unlink(tmp, true, NULL);
        return rc;
    }
    return s3l__os_fsync_dir(dir, err);
}

int s3l_sink_state_load(const char *path, size_t max, uint8_t **data, size_t *len,
                        struct s3l_error *err)
{
    if (!path || !data || !len)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "state: NULL argument");
    *data = NULL;
    *len = 0;
    struct s3l_buf b;
    s3l_buf_init(&b, max + 1);
    int rc = s3l__os_read_file(path, max, &b, err);
    if (rc == 0)
        rc = s3l_buf_append_byte(&b, 0);
    if (rc != 0) {
        s3l_buf_free(&b);
        return rc;
    }
    rc = s3l_buf_detach(&b, data, len);
    if (rc == 0)
        (*len)--; /* the NUL added for text readers */
    return rc;
}
