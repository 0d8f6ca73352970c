/*
 * s3l_read: drives the input readers, inference and converter from tests (and measures scanning
 * throughput). Usage:
 *   s3l_read [--format ndjson|json|csv] [--block N] [--max N] [--nested-json] [--schema FILE]
 *            MODE FILE|-
 * MODE:
 *   dump        each record as one line of compact JSON (CSV nulls as null, text as strings)
 *   infer N     the schema inferred from the first N records (0: all), as schema JSON
 *   convert N   infers from N records, then converts every record into a counting row sink;
 *               prints "rows R errors E puts P" and the first errors on stderr; exit 1 on errors
 *   bench       reads every record; prints bytes, records, wall and CPU seconds, MB/s of each
 *   parquet N OUT  infers from N records (or takes --schema FILE), converts every record into a
 *               Parquet file OUT (the Parquet writer as the row sink); prints "rows R errors E"
 * Errors of the reader are printed on stderr and counted; the exit status is 1 when any occurred.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "input/json/json.h"
#include "s3l/parquet.h"

struct counting_sink {
    uint64_t puts;
};

static int c_begin(void *c) { (void)c; return 0; }
static int c_null(void *c) { ((struct counting_sink *)c)->puts++; return 0; }
static int c_bool(void *c, bool v) { (void)v; return c_null(c); }
static int c_int(void *c, int64_t v) { (void)v; return c_null(c); }
static int c_uint(void *c, uint64_t v) { (void)v; return c_null(c); }
static int c_double(void *c, double v) { (void)v; return c_null(c); }
static int c_bytes(void *c, const void *d, size_t n) { (void)d; (void)n; return c_null(c); }
static int c_dec(void *c, int64_t h, uint64_t l) { (void)h; (void)l; return c_null(c); }
static int c_ivl(void *c, int32_t m, int32_t d, int64_t n)
{
    (void)m, (void)d, (void)n;
    return c_null(c);
}
static int c_nest(void *c) { (void)c; return 0; }
static int c_end(void *c, struct s3l_error *e) { (void)c; (void)e; return 0; }
static void c_abort(void *c) { (void)c; }

static const struct s3l_row_sink_ops counting_ops = {
    c_begin, c_null, c_bool, c_int, c_uint, c_double, c_bytes, c_dec, c_ivl,
    c_nest,  c_nest, c_nest, c_nest, c_nest, c_nest, c_end,   c_abort, NULL,
};

struct args {
    struct s3l_reader_options ro;
    bool nested_json;
    const char *schema_path;
    const char *out;
    const char *mode;
    long n;
    const char *path;
};

static int open_reader(const struct args *a, int *fd, struct s3l_reader **r)
{
    *fd = strcmp(a->path, "-") == 0 ? 0 : open(a->path, O_RDONLY);
    if (*fd < 0) {
        perror(a->path);
        return -1;
    }
    struct s3l_error err = {0};
    if (s3l_reader_open(*fd, &a->ro, r, &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return -1;
    }
    return 0;
}

/* Reads every record, calling fn on each; returns the number of reader errors. */
static long each(const struct args *a, long limit, int (*fn)(void *, struct s3l_record *),
                 void *ctx, uint64_t *n_records)
{
    int fd;
    struct s3l_reader *r;
    if (open_reader(a, &fd, &r) != 0)
        exit(2);
    long errors = 0;
    *n_records = 0;
    struct s3l_error err = {0};
    for (;;) {
        if (limit > 0 && (long)*n_records >= limit)
            break;
        struct s3l_record rec;
        if (err.code)
            s3l_error_clear(&err);
        int rc = s3l_reader_next(r, &rec, &err);
        if (rc == 0)
            break;
        if (rc < 0) {
            if (errors++ < 10)
                fprintf(stderr, "%s\n", err.message);
            if (r->sticky || rc != S3L_EINVALID_INPUT)
                break;
            continue;
        }
        (*n_records)++;
        if (fn && fn(ctx, &rec) != 0)
            exit(2);
    }
    s3l_reader_free(r);
    if (fd)
        close(fd);
    return errors;
}

static int dump_one(void *ctx, struct s3l_record *rec)
{
    struct s3l_buf *b = ctx;
    s3l_buf_reset(b);
    if (s3l__json_write(b, rec->values, 0) != 0 || s3l_buf_append_byte(b, '\n') != 0)
        return -1;
    return fwrite(b->ptr, 1, b->len, stdout) == b->len ? 0 : -1;
}

static int infer_one(void *ctx, struct s3l_record *rec)
{
    return s3l_infer_add(ctx, rec);
}

struct convert_ctx {
    struct s3l_converter *conv;
    struct counting_sink sink;
    uint64_t rows;
    uint64_t errors;
};

static int convert_one(void *ctx, struct s3l_record *rec)
{
    struct convert_ctx *c = ctx;
    struct s3l_row_sink sink = {&counting_ops, &c->sink};
    static struct s3l_error err; /* only written on failure: cleared after one */
    if (err.code)
        s3l_error_clear(&err);
    int rc = s3l_convert(c->conv, rec, &sink, &err);
    if (rc == 0) {
        c->rows++;
    } else {
        if (c->errors++ < 10)
            fprintf(stderr, "%s\n", err.message);
    }
    return 0;
}

static struct s3l_schema *infer(const struct args *a, long n, long *errors)
{
    if (a->schema_path) {
        FILE *f = fopen(a->schema_path, "rb");
        char text[65536];
        size_t len = f ? fread(text, 1, sizeof(text), f) : 0;
        if (f)
            fclose(f);
        struct s3l_schema *s;
        struct s3l_error err = {0};
        if (s3l_schema_from_json(text, len, &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.message);
            exit(2);
        }
        *errors = 0;
        return s;
    }
    struct s3l_infer_options io = {.version = S3L_INFER_OPTIONS_VERSION,
                                   .nested_as_json = a->nested_json};
    struct s3l_infer *inf = s3l_infer_new(&io);
    uint64_t count;
    *errors = each(a, n, infer_one, inf, &count);
    struct s3l_schema *s;
    if (s3l_infer_schema(inf, &s) != 0)
        exit(2);
    for (size_t i = 0; i < s3l_infer_n_pending(inf); i++)
        fprintf(stderr, "pending: %s\n", s3l_infer_pending(inf, i));
    s3l_infer_free(inf);
    return s;
}

static int file_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    if (fwrite(data, 1, len, ctx) != len)
        return s3l_error_set(err, S3L_EIO, "write failed");
    return 0;
}

struct pq_ctx {
    struct s3l_converter *conv;
    struct s3l_row_sink sink;
    uint64_t rows;
    uint64_t errors;
};

static int pq_one(void *ctx, struct s3l_record *rec)
{
    struct pq_ctx *c = ctx;
    static struct s3l_error err; /* only written on failure: cleared after one */
    if (err.code)
        s3l_error_clear(&err);
    if (s3l_convert(c->conv, rec, &c->sink, &err) == 0)
        c->rows++;
    else if (c->errors++ < 10)
        fprintf(stderr, "%s\n", err.message);
    return 0;
}

static int to_parquet(const struct args *a, long *errors)
{
    struct s3l_schema *s = infer(a, a->n, errors);
    FILE *f = fopen(a->out, "wb");
    struct s3l_pq_options po;
    s3l_pq_options_init(&po);
    struct s3l_pq_writer *w;
    struct s3l_error err = {0};
    struct pq_ctx c = {0};
    if (!f || s3l_pq_writer_new(s, &po, (struct s3l_pq_sink){file_write, f}, &w, &err) != 0 ||
        s3l_converter_new(s, NULL, &c.conv, &err) != 0) {
        fprintf(stderr, "%s: %s\n", a->out, err.message);
        return 2;
    }
    c.sink = s3l_pq_writer_row_sink(w);
    uint64_t count;
    *errors += each(a, 0, pq_one, &c, &count);
    if (s3l_pq_writer_close(w, &err) != 0) {
        fprintf(stderr, "%s: %s\n", a->out, err.message);
        return 2;
    }
    printf("rows %llu errors %llu\n", (unsigned long long)c.rows, (unsigned long long)c.errors);
    *errors += (long)c.errors;
    s3l_pq_writer_free(w);
    s3l_converter_free(c.conv);
    s3l_schema_free(s);
    return fclose(f) == 0 ? 0 : 2;
}

static int run(const struct args *a)
{
    uint64_t count;
    long errors = 0;
    if (strcmp(a->mode, "dump") == 0) {
        struct s3l_buf b;
        s3l_buf_init(&b, SIZE_MAX / 4);
        errors = each(a, 0, dump_one, &b, &count);
        s3l_buf_free(&b);
    } else if (strcmp(a->mode, "infer") == 0) {
        struct s3l_schema *s = infer(a, a->n, &errors);
        char *text;
        size_t len;
        if (s3l_schema_to_json(s, &text, &len) != 0)
            return 2;
        fwrite(text, 1, len, stdout);
        s3l_free(text);
        s3l_schema_free(s);
    } else if (strcmp(a->mode, "convert") == 0) {
        struct s3l_schema *s = infer(a, a->n, &errors);
        struct convert_ctx c = {0};
        struct s3l_error err = {0};
        if (s3l_converter_new(s, NULL, &c.conv, &err) != 0) {
            fprintf(stderr, "%s\n", err.message);
            return 2;
        }
        errors += each(a, 0, convert_one, &c, &count);
        printf("rows %llu errors %llu puts %llu ignored %llu\n", (unsigned long long)c.rows,
               (unsigned long long)c.errors, (unsigned long long)c.sink.puts,
               (unsigned long long)s3l_converter_ignored(c.conv));
        errors += (long)c.errors;
        s3l_converter_free(c.conv);
        s3l_schema_free(s);
    } else if (strcmp(a->mode, "parquet") == 0) {
        int rc = to_parquet(a, &errors);
        if (rc)
            return rc;
    } else if (strcmp(a->mode, "bench") == 0) {
        /* CPU time as well as wall time: on a shared machine the wall clock measures the load. */
        struct timespec t0, t1, c0, c1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        errors = each(a, 0, NULL, NULL, &count);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
        struct stat_like {
            long long size;
        } st = {0};
        FILE *f = fopen(a->path, "rb");
        if (f && fseek(f, 0, SEEK_END) == 0)
            st.size = ftell(f);
        if (f)
            fclose(f);
        printf("bytes %lld records %llu seconds %.3f MB/s %.1f cpu-seconds %.3f MB/cpu-s %.1f\n",
               st.size, (unsigned long long)count, secs, (double)st.size / 1e6 / secs, cpu,
               (double)st.size / 1e6 / cpu);
    } else {
        fprintf(stderr, "unknown mode %s\n", a->mode);
        return 2;
    }
    return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct args a = {.ro = {.version = S3L_READER_OPTIONS_VERSION, .format = S3L_INPUT_NDJSON}};
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        struct s3l_error err = {0};
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            if (s3l_input_format_parse(argv[++i], &a.ro.format, &err) != 0) {
                fprintf(stderr, "%s\n", err.message);
                return 2;
            }
        } else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc) {
            a.ro.block_bytes = (size_t)atol(argv[++i]);
        } else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
            a.ro.max_record_bytes = (size_t)atol(argv[++i]);
        } else if (strcmp(argv[i], "--schema") == 0 && i + 1 < argc) {
            a.schema_path = argv[++i];
        } else if (strcmp(argv[i], "--nested-json") == 0) {
            a.nested_json = true;
        } else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i >= argc)
        return 2;
    a.mode = argv[i++];
    if (strcmp(a.mode, "infer") == 0 || strcmp(a.mode, "convert") == 0 ||
        strcmp(a.mode, "parquet") == 0) {
        if (i >= argc)
            return 2;
        a.n = atol(argv[i++]);
    }
    if (strcmp(a.mode, "parquet") == 0) {
        if (i >= argc)
            return 2;
        a.out = argv[i++];
    }
    if (i >= argc)
        return 2;
    a.path = argv[i];
    a.ro.name = a.path;
    return run(&a);
}
