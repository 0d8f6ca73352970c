/*
 * text_sink_feed: feeds the lines of stdin, one record each, to the rolling text sink
 * (include/s3l/ndjson_sink.h), so that shell tests drive it as an engine would and can kill it.
 * Usage:
 *   text_sink_feed --url URL [--prefix P] [--rollover BYTES] [--subtask I --parallelism N]
 *                  [--restore] [--endpoint URL] [--region R] [--hold]
 *                  [--compression none|gzip|zstd] [--content-type T]
 * Each input line (its "\n" included) is one write; begin(1) comes first. At the end of input it
 * prints "records R parts P bytes B" (what the sink put) and closes the sink, or with --hold
 * prints that line without closing and sleeps until killed (the records since the last part stay
 * buffered). Exit status 1 with the error on stderr when a call fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3l/ndjson_sink.h"
#include "s3_env.h"
#include "s3l/store.h"

static int die(const char *what, const struct s3l_error *err)
{
    fprintf(stderr, "text_sink_feed: %s: %s (%s)\n", what, err->message, s3l_error_name(err->code));
    return 1;
}

static void report(const struct s3l_sink *s)
{
    uint64_t r, p, b;
    s3l_sink_stats(s, &r, &p, &b);
    printf("records %llu parts %llu bytes %llu\n", (unsigned long long)r, (unsigned long long)p,
           (unsigned long long)b);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *url = NULL;
    struct s3l_store_options so = {.version = S3L_STORE_OPTIONS_VERSION, .create = true};
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION};
    int hold = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--restore"))
            o.restore = true;
        else if (!strcmp(a, "--hold"))
            hold = 1;
        else if (!v) {
            fprintf(stderr, "text_sink_feed: %s needs a value\n", a);
            return 2;
        } else {
            i++;
            if (!strcmp(a, "--url"))
                url = v;
            else if (!strcmp(a, "--prefix"))
                o.key_prefix = v;
            else if (!strcmp(a, "--rollover"))
                o.rollover_bytes = strtoull(v, NULL, 10);
            else if (!strcmp(a, "--subtask"))
                o.subtask = (uint32_t)strtoul(v, NULL, 10);
            else if (!strcmp(a, "--parallelism"))
                o.parallelism = (uint32_t)strtoul(v, NULL, 10);
            else if (!strcmp(a, "--compression")) {
                struct s3l_error e = {0};
                if (s3l_sink_compression_parse(v, &o.compression, &e) != 0)
                    return die("--compression", &e) + 1;
            } else if (!strcmp(a, "--content-type"))
                o.content_type = v;
            else if (!strcmp(a, "--endpoint"))
                so.endpoint = v;
            else if (!strcmp(a, "--region"))
                so.region = v;
            else {
                fprintf(stderr, "text_sink_feed: unknown option %s\n", a);
                return 2;
            }
        }
    }
    if (!url) {
        fprintf(stderr, "text_sink_feed: --url is required\n");
        return 2;
    }
    struct s3l_error err = {0};
    struct s3l_store *st = NULL;
    struct s3l_test_s3_store env; /* the environment, read as the CLI reads it */
    if (s3l_test_s3_store_env(&env) != 0) {
        perror("S3LAND_TRACE");
        return 1;
    }
    so.s3 = &env.s3; /* --endpoint and --region above win over the environment's */
    if (s3l_store_open(url, &so, &st, &err) != 0)
        return die("open store", &err);
    o.store = st;
    struct s3l_sink *s = NULL;
    if (s3l_sink_open(&o, &s, &err) != 0)
        return die("open sink", &err);
    if (s3l_sink_begin(s, 1, &err) != 0)
        return die("begin", &err);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0)
        if (s3l_sink_write(s, line, (size_t)n, &err) != 0)
            return die("write", &err);
    free(line);
    report(s);
    if (hold)
        for (;;)
            pause();
    if (s3l_sink_close(s, &err) != 0)
        return die("close", &err);
    report(s);
    s3l_sink_free(s);
    s3l_store_free(st);
    return 0;
}
