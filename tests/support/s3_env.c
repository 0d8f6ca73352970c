/*
 * The environment of an S3 client for test programs, read as the CLI reads it (s3_env.h).
 */
#include "s3_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *var(const char *a, const char *b)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b)
        v = getenv(b);
    return v && *v ? v : NULL;
}

static FILE *trace_file;

static void trace_line(void *ctx, const char *line, size_t len)
{
    fwrite(line, 1, len, (FILE *)ctx);
    fflush((FILE *)ctx);
}

int s3l_test_s3_env(struct s3l_s3_config *cfg)
{
    if (!cfg->region)
        cfg->region = var("AWS_REGION", "AWS_DEFAULT_REGION");
    if (!cfg->endpoint)
        cfg->endpoint = var("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
    const char *t = var("S3LAND_TRACE", NULL);
    if (cfg->trace || !t)
        return 0;
    if (!trace_file && !(trace_file = fopen(t, "a")))
        return -1;
    cfg->trace = trace_line;
    cfg->trace_ctx = trace_file;
    return 0;
}

int s3l_test_s3_store_env(struct s3l_test_s3_store *t)
{
    memset(t, 0, sizeof(*t));
    t->cfg.version = S3L_S3_CONFIG_VERSION;
    t->s3.version = S3L_S3_STORE_OPTIONS_VERSION;
    t->s3.client = &t->cfg;
    t->so.version = S3L_STORE_OPTIONS_VERSION;
    t->so.s3 = &t->s3;
    return s3l_test_s3_env(&t->cfg);
}
