/*
 * The driver of bench/ndjson_sink.sh: stdin's lines, one record each, through one of the NDJSON
 * sinks (include/s3l/ndjson_sink.h), as an engine would drive it, so that the bench times the
 * sinks alone against `aws s3 cp` of the same bytes.
 *   ndjson_sink --sink 2pc|text --url URL [--endpoint URL] [--region R] [--prefix P]
 *               [--part-size BYTES] [--rollover BYTES] [--checkpoint-bytes BYTES]
 * 2pc: begin(ckpt) before an interval's first record, prepare + commit once an interval holds
 * --checkpoint-bytes (default 64 MiB) and at the end. text: every line written, then close
 * (its last part). At the end it prints "lines L bytes B seconds S maxrss_kib R": the records
 * and bytes written, the wall time from the open of the store to the last commit (or close), and
 * the peak resident set size (getrusage, ru_maxrss). Exit status 1 with the error on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "s3l/alloc.h"
#include "s3l/ndjson_sink.h"
#include "s3l/store.h"

static int die(const char *what, const struct s3l_error *err)
{
    fprintf(stderr, "ndjson_sink: %s: %s (%s)\n", what, err->message, s3l_error_name(err->code));
    return 1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* prepare + commit of checkpoint ckpt (two-phase sink). */
static int checkpoint(struct s3l_sink *s, uint64_t ckpt, struct s3l_error *err)
{
    uint8_t *c = NULL;
    size_t n = 0;
    int rc = s3l_sink_prepare(s, ckpt, &c, &n, err);
    if (rc == 0)
        rc = s3l_sink_commit(s, c, n, err);
    s3l_free(c);
    return rc;
}

int main(int argc, char **argv)
{
    const char *url = NULL, *kind = NULL;
    struct s3l_store_options so = {.version = S3L_STORE_OPTIONS_VERSION, .create = true};
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION};
    unsigned long long ckpt_bytes = 64ULL << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--sink"))
            kind = v;
        else if (!strcmp(a, "--url"))
            url = v;
        else if (!strcmp(a, "--endpoint"))
            so.endpoint = v;
        else if (!strcmp(a, "--region"))
            so.region = v;
        else if (!strcmp(a, "--prefix"))
            o.key_prefix = v;
        else if (!strcmp(a, "--part-size"))
            o.part_size = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--rollover"))
            o.rollover_bytes = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--checkpoint-bytes"))
            ckpt_bytes = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "ndjson_sink: unknown option %s\n", a);
            return 2;
        }
    }
    if (!url || !kind || (strcmp(kind, "2pc") && strcmp(kind, "text")) || !ckpt_bytes) {
        fprintf(stderr, "ndjson_sink: --sink 2pc|text and --url are needed\n");
        return 2;
    }
    bool twopc = !strcmp(kind, "2pc");
    o.delivery = twopc ? S3L_SINK_EXACTLY_ONCE : S3L_SINK_AT_MOST_ONCE;
    double t0 = now_s();
    struct s3l_error err = {0};
    struct s3l_store *store = NULL;
    if (s3l_store_open(url, &so, &store, &err) != 0)
        return die("open store", &err);
    o.store = store;
    struct s3l_sink *s = NULL;
    if (s3l_sink_open(&o, &s, &err) != 0)
        return die("open sink", &err);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long long lines = 0, bytes = 0, in_ckpt = 0;
    uint64_t ckpt = 1;
    bool begun = false;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (!begun) {
            if (s3l_sink_begin(s, ckpt, &err) != 0)
                return die("begin", &err);
            begun = true;
        }
        if (s3l_sink_write(s, line, (size_t)n, &err) != 0)
            return die("write", &err);
        lines++;
        bytes += (unsigned long long)n;
        in_ckpt += (unsigned long long)n;
        if (twopc && in_ckpt >= ckpt_bytes) {
            if (checkpoint(s, ckpt++, &err) != 0)
                return die("checkpoint", &err);
            begun = false;
            in_ckpt = 0;
        }
    }
    free(line);
    if (twopc && begun && checkpoint(s, ckpt, &err) != 0)
        return die("checkpoint", &err);
    if (s3l_sink_close(s, &err) != 0)
        return die("close", &err);
    double t = now_s() - t0;
    s3l_sink_free(s);
    s3l_store_free(store);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("lines %llu bytes %llu seconds %.3f maxrss_kib %ld\n", lines, bytes, t, ru.ru_maxrss);
    return 0;
}
