/*
 * bench/parquet_encode: times the Parquet writer encoding the flights table (3M rows: timestamp,
 * two int64, two short strings) held in memory, per codec, into a memory sink, through the row
 * API and through the column-batch API (PQ_BENCH_API=rows|batch selects one). Prints rows/s,
 * MB/s (per CPU second, of the in-memory values: 8 + 8 + 8 bytes plus the string bytes per row) and
 * file sizes.
 *
 * Usage: parquet_encode FLIGHTS.csv OUT_DIR [ROW_GROUP_ROWS] [ZSTD_LEVEL] [REPEAT]
 * The CSV (made by bench/parquet_encode.sh with DuckDB) has no header: epoch_us, delay,
 * distance, origin, destination; an empty field is a null. Each codec's file is written to
 * OUT_DIR/ours-CODEC.parquet after the timed runs (the best of REPEAT runs is reported).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "s3l/parquet.h"
#include "s3l/schema.h"

struct table {
    size_t n;
    int64_t *ts, *delay, *dist;
    uint8_t *null_delay, *null_dist;
    char (*origin)[8], (*dest)[8];
    uint8_t *olen, *dlen;
    /* The same table in Arrow's columnar layout, for the column-batch API. */
    uint8_t *valid_delay, *valid_dist; /* bitmaps */
    char *odata, *ddata;
    int32_t *ooff, *doff;
};

struct mem {
    uint8_t *p;
    size_t len, cap;
};

static int mem_write(void *ctx, const void *data, size_t len, struct s3l_error *err)
{
    struct mem *m = ctx;
    (void)err;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 1 << 20;
        while (cap < m->len + len)
            cap *= 2;
        uint8_t *p = realloc(m->p, cap);
        if (!p)
            return S3L_ENOMEM;
        m->p = p;
        m->cap = cap;
    }
    memcpy(m->p + m->len, data, len);
    m->len += len;
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU time of the process: on a shared machine it is steadier than the wall clock. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void load(const char *path, struct table *t)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t cap = 1 << 22;
    t->ts = malloc(cap * 8), t->delay = malloc(cap * 8), t->dist = malloc(cap * 8);
    t->null_delay = malloc(cap), t->null_dist = malloc(cap);
    t->origin = malloc(cap * 8), t->dest = malloc(cap * 8);
    t->olen = malloc(cap), t->dlen = malloc(cap);
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof(line), f) && n < cap) {
        char *fields[5];
        char *p = line;
        for (int i = 0; i < 5; i++) {
            fields[i] = p;
            p = strpbrk(p, ",\n");
            if (p)
                *p++ = 0;
            else
                p = fields[i] + strlen(fields[i]);
        }
        t->ts[n] = strtoll(fields[0], NULL, 10);
        t->null_delay[n] = !*fields[1];
        t->delay[n] = strtoll(fields[1], NULL, 10);
        t->null_dist[n] = !*fields[2];
        t->dist[n] = strtoll(fields[2], NULL, 10);
        t->olen[n] = (uint8_t)strnlen(fields[3], 7);
        memcpy(t->origin[n], fields[3], t->olen[n]);
        t->dlen[n] = (uint8_t)strnlen(fields[4], 7);
        memcpy(t->dest[n], fields[4], t->dlen[n]);
        n++;
    }
    fclose(f);
    t->n = n;
    t->valid_delay = calloc(n / 8 + 1, 1), t->valid_dist = calloc(n / 8 + 1, 1);
    t->odata = malloc(n * 8), t->ddata = malloc(n * 8);
    t->ooff = malloc((n + 1) * 4), t->doff = malloc((n + 1) * 4);
    int32_t oo = 0, dd = 0;
    for (size_t i = 0; i < n; i++) {
        t->valid_delay[i / 8] |= (uint8_t)(!t->null_delay[i] << (i % 8));
        t->valid_dist[i / 8] |= (uint8_t)(!t->null_dist[i] << (i % 8));
        t->ooff[i] = oo, t->doff[i] = dd;
        memcpy(t->odata + oo, t->origin[i], t->olen[i]);
        memcpy(t->ddata + dd, t->dest[i], t->dlen[i]);
        oo += t->olen[i], dd += t->dlen[i];
    }
    t->ooff[n] = oo, t->doff[n] = dd;
}

/* The flights schema, built as an embedder builds one (include/s3l/schema.h). */
static struct s3l_schema *flights_schema(void)
{
    static const char *const cols[5][2] = {{"date", "timestamp[us]"}, {"delay", "int64"},
                                           {"distance", "int64"}, {"origin", "string"},
                                           {"destination", "string"}};
    struct s3l_schema *s = s3l_schema_new();
    struct s3l_error err = {0};
    for (size_t i = 0; s && i < 5; i++)
        if (s3l_schema_add_column(s, cols[i][0], cols[i][1], true, false, &err) != 0) {
            fprintf(stderr, "schema: %s\n", err.message);
            exit(1);
        }
    if (!s) {
        fprintf(stderr, "schema: out of memory\n");
        exit(1);
    }
    return s;
}

static double encode(const struct table *t, enum s3l_codec codec, uint64_t rg_rows, int level,
                     bool batch, struct mem *out, double *cpu)
{
    struct s3l_schema *schema = flights_schema();
    struct s3l_pq_options o;
    s3l_pq_options_init(&o);
    o.codec = codec;
    o.level = codec == S3L_CODEC_ZSTD ? level : 0;
    o.row_group_rows = rg_rows;
    out->len = 0;
    struct s3l_pq_sink sink = {mem_write, out};
    struct s3l_pq_writer *w;
    struct s3l_error err = {0};
    double t0 = now(), c0 = cpu_now();
    if (s3l_pq_writer_new(schema, &o, sink, &w, &err) != 0) {
        fprintf(stderr, "writer: %s\n", err.message);
        exit(1);
    }
    if (batch) {
        /* The column-batch API, 64K rows per call. */
        for (size_t i = 0; i < t->n; i += 65536) {
            size_t k = t->n - i < 65536 ? t->n - i : 65536;
            int32_t oo[65537], dd[65537];
            for (size_t j = 0; j <= k; j++)
                oo[j] = t->ooff[i + j] - t->ooff[i], dd[j] = t->doff[i + j] - t->doff[i];
            struct s3l_pq_column_batch cols[5] = {
                {t->ts + i, NULL, NULL},
                {t->delay + i, NULL, t->valid_delay + i / 8},
                {t->dist + i, NULL, t->valid_dist + i / 8},
                {t->odata + t->ooff[i], oo, NULL},
                {t->ddata + t->doff[i], dd, NULL},
            };
            if (s3l_pq_write_columns(w, k, cols, &err) != 0) {
                fprintf(stderr, "batch at %zu: %s\n", i, err.message);
                exit(1);
            }
        }
    }
    for (size_t i = 0; !batch && i < t->n; i++) {
        s3l_pq_row_begin(w);
        s3l_pq_put_int(w, t->ts[i]);
        if (t->null_delay[i])
            s3l_pq_put_null(w);
        else
            s3l_pq_put_int(w, t->delay[i]);
        if (t->null_dist[i])
            s3l_pq_put_null(w);
        else
            s3l_pq_put_int(w, t->dist[i]);
        s3l_pq_put_bytes(w, t->origin[i], t->olen[i]);
        s3l_pq_put_bytes(w, t->dest[i], t->dlen[i]);
        if (s3l_pq_row_end(w, &err) != 0) {
            fprintf(stderr, "row %zu: %s\n", i, err.message);
            exit(1);
        }
    }
    if (s3l_pq_writer_close(w, &err) != 0) {
        fprintf(stderr, "close: %s\n", err.message);
        exit(1);
    }
    double dt = now() - t0;
    *cpu = cpu_now() - c0;
    s3l_pq_writer_free(w);
    s3l_schema_free(schema);
    return dt;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FLIGHTS.csv OUT_DIR [ROW_GROUP_ROWS] [ZSTD_LEVEL] [REPEAT]\n",
                argv[0]);
        return 2;
    }
    uint64_t rg = argc > 3 ? strtoull(argv[3], NULL, 10) : 122880;
    int level = argc > 4 ? atoi(argv[4]) : 3;
    int repeat = argc > 5 ? atoi(argv[5]) : 3;
    const char *only = getenv("PQ_BENCH_CODEC");
    struct table t;
    load(argv[1], &t);
    double bytes = 0;
    for (size_t i = 0; i < t.n; i++)
        bytes += 24 + t.olen[i] + t.dlen[i];
    const enum s3l_codec codecs[] = {S3L_CODEC_ZSTD, S3L_CODEC_SNAPPY, S3L_CODEC_GZIP,
                                     S3L_CODEC_NONE};
    struct mem out = {0};
    const char *apis = getenv("PQ_BENCH_API"); /* rows, batch, or both (default) */
    for (size_t c = 0; c < 8; c++) {
        bool batch = c >= 4;
        if (only && strcmp(only, s3l_codec_name(codecs[c % 4])) != 0)
            continue;
        if (apis && strcmp(apis, batch ? "batch" : "rows") != 0)
            continue;
        double best = 1e30, best_cpu = 1e30;
        for (int r = 0; r < repeat; r++) {
            double cpu;
            double dt = encode(&t, codecs[c % 4], rg, level, batch, &out, &cpu);
            best = dt < best ? dt : best;
            best_cpu = cpu < best_cpu ? cpu : best_cpu;
        }
        char path[4096];
        snprintf(path, sizeof(path), "%s/ours-%s-%s.parquet", argv[2], batch ? "batch" : "rows",
                 s3l_codec_name(codecs[c % 4]));
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(out.p, 1, out.len, f);
            fclose(f);
        }
        printf("ours api=%s codec=%s rows=%zu seconds=%.3f cpu_seconds=%.3f rows_per_s=%.0f "
               "MB_per_s=%.1f bytes=%zu\n",
               batch ? "batch" : "rows", s3l_codec_name(codecs[c % 4]), t.n, best, best_cpu,
               (double)t.n / best_cpu, bytes / best_cpu / 1e6, out.len);
    }
    free(out.p);
    return 0;
}
