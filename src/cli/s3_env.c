/*
 * The environment of an S3 connection, read here for the library, which reads none (issue 9
 * item 6; docs/cli.md, "Environment"): the region (AWS_REGION, then AWS_DEFAULT_REGION), the
 * endpoint (AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL) and the request trace (S3LAND_TRACE, a
 * file the trace lines are appended to). The default credentials chain still reads the AWS
 * variables it documents itself (src/lib/creds/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void cli_s3_env_where(const char **region, const char **endpoint)
{
    if (region && !*region && !(*region = env_value("AWS_REGION")))
        *region = env_value("AWS_DEFAULT_REGION");
    if (endpoint && !*endpoint && !(*endpoint = env_value("AWS_ENDPOINT_URL_S3")))
        *endpoint = env_value("AWS_ENDPOINT_URL");
}

/* The trace file, opened once for the whole process (every client of a command appends to it,
 * as when each opened it itself). Left open until exit, flushed after every line. */
static FILE *trace_file;

static void trace_line(void *ctx, const char *line, size_t len)
{
    FILE *f = ctx;
    fwrite(line, 1, len, f);
    fflush(f);
}

int cli_s3_trace_open(struct cli *c)
{
    const char *path = env_value("S3LAND_TRACE");
    if (!path || trace_file)
        return 0;
    if (!(trace_file = fopen(path, "a"))) {
        struct s3l_error err = {0};
        s3l_error_set_errno(&err, S3L_EIO, errno, "open trace file %s (S3LAND_TRACE)", path);
        return cli_fail(c, err.code, &err, S3L_SIDE_CONFIG); /* the caller's setting: exit 1 */
    }
    return 0;
}

void cli_s3_trace(struct s3l_s3_config *cfg)
{
    cfg->trace = trace_file ? trace_line : NULL;
    cfg->trace_ctx = trace_file;
}
