/*
 * os: expanding a glob(7) pattern into the paths that match it (glob(3), POSIX.1-2008), for the
 * sources of a pipeline (src/lib/pipeline/expand.c). Kept here because it reads directories.
 */
#include <glob.h>

#include "os/os.h"

int s3l__os_glob(const char *pattern, int (*cb)(void *ctx, const char *path), void *ctx,
                 struct s3l_error *err)
{
    glob_t g;
    int r = glob(pattern, GLOB_ERR, NULL, &g);
    if (r == GLOB_NOMATCH) {
        globfree(&g);
        return 0;
    }
    if (r == GLOB_NOSPACE) {
        globfree(&g);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory expanding %s", pattern);
    }
    if (r != 0) {
        globfree(&g);
        return s3l_error_set(err, S3L_EIO, "glob %s: a directory on its way could not be read",
                             pattern);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
        rc = cb(ctx, g.gl_pathv[i]);
    globfree(&g);
    return rc;
}
