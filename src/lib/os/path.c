/*
 * os: the paths of the process, getcwd(3) and realpath(3), for the pipeline id's canonical URL
 * (src/lib/pipeline/pipeline_id.c). The C library allocates both results with malloc; they are
 * copied into s3l_malloc'd strings here, so that callers free everything with s3l_free and an
 * allocation-failure test reaches the copy.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/os.h"
#include "util/util.h"

/* Moves a malloc'd string into a new s3l_malloc'd one. */
static int adopt(char *libc, char **out, const char *what, struct s3l_error *err)
{
    *out = s3l_strdup(libc);
    free(libc); /* allocated by the C library, not by s3l_malloc */
    return *out ? 0 : s3l_error_set(err, S3L_ENOMEM, "out of memory copying the %s", what);
}

int s3l__os_getcwd(char **out, struct s3l_error *err)
{
    *out = NULL;
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return s3l_error_set_errno(err, s3l__os_code(errno), errno, "getcwd");
    return adopt(cwd, out, "working directory", err);
}

int s3l__os_realpath(const char *path, char **out, struct s3l_error *err)
{
    *out = NULL;
    char *real = realpath(path, NULL);
    if (!real)
        return s3l__os_fail(err, errno, "realpath", path);
    return adopt(real, out, "real path", err);
}
