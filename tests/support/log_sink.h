/*
 * A row sink (include/s3l/row.h) that writes every call into a text log, for tests that compare
 * the calls two converters make, or a converter's calls with an expectation written by hand:
 *   "begin int:1 bytes:61 dbl:1.5 bool:1 null [ ... ] { ... } < ... > end" (bytes in hex).
 * Header-only (static functions), so that fuzz targets, which link no support library, use it
 * too. LOG_SINK_BYTES (default 4096) may be defined before including it; a log that would pass
 * it is cut there and marked truncated, so that a caller never compares two cut logs unknowingly.
 */
#ifndef S3L_TEST_LOG_SINK_H
#define S3L_TEST_LOG_SINK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "s3l/row.h"

#ifndef LOG_SINK_BYTES
#define LOG_SINK_BYTES 4096
#endif

struct log_sink {
    char log[LOG_SINK_BYTES]; /* NUL-terminated */
    size_t n;                 /* strlen(log) */
    bool truncated;
};

/* Empties s (without clearing all of a large log). */
static inline void log_reset(struct log_sink *s)
{
    s->log[0] = 0;
    s->n = 0;
    s->truncated = false;
}

static void log_add(void *c, const char *fmt, ...)
{
    struct log_sink *s = c;
    if (s->truncated)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(s->log + s->n, sizeof(s->log) - s->n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof(s->log) - s->n) {
        s->truncated = true;
        s->n = sizeof(s->log) - 1;
    } else {
        s->n += (size_t)w;
    }
}

static int log_begin(void *c) { log_add(c, "begin"); return 0; }
static int log_null(void *c) { log_add(c, " null"); return 0; }
static int log_bool(void *c, bool v) { log_add(c, " bool:%d", v); return 0; }
static int log_int(void *c, int64_t v) { log_add(c, " int:%lld", (long long)v); return 0; }
static int log_uint(void *c, uint64_t v)
{
    log_add(c, " uint:%llu", (unsigned long long)v);
    return 0;
}
static int log_double(void *c, double v) { log_add(c, " dbl:%.17g", v); return 0; }
static int log_bytes(void *c, const void *d, size_t n)
{
    log_add(c, " bytes:");
    for (size_t i = 0; i < n; i++)
        log_add(c, "%02x", ((const unsigned char *)d)[i]);
    return 0;
}
static int log_dec(void *c, int64_t hi, uint64_t lo)
{
    log_add(c, " dec:%lld,%llu", (long long)hi, (unsigned long long)lo);
    return 0;
}
static int log_ivl(void *c, int32_t m, int32_t d, int64_t ns)
{
    log_add(c, " ivl:%d,%d,%lld", m, d, (long long)ns);
    return 0;
}
static int log_bl(void *c) { log_add(c, " ["); return 0; }
static int log_el(void *c) { log_add(c, " ]"); return 0; }
static int log_bs(void *c) { log_add(c, " {"); return 0; }
static int log_es(void *c) { log_add(c, " }"); return 0; }
static int log_bm(void *c) { log_add(c, " <"); return 0; }
static int log_em(void *c) { log_add(c, " >"); return 0; }
static int log_end(void *c, struct s3l_error *err)
{
    (void)err;
    log_add(c, " end");
    return 0;
}
static void log_abort(void *c) { log_add(c, " abort"); }

static const struct s3l_row_sink_ops log_ops = {
    log_begin, log_null, log_bool, log_int, log_uint, log_double, log_bytes, log_dec, log_ivl,
    log_bl,    log_el,   log_bs,   log_es,  log_bm,   log_em,     log_end,   log_abort, NULL,
};

#endif
