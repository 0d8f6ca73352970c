/*
 * Fuzz target: the whole write path, as s3land write takes it (s3l_pipeline_run, the public
 * pipeline API), so that a record goes through the reader, the inference sample, schema growth,
 * the converter, the bad-records policy and the commit into a file:// store in a temporary
 * directory, removed after each input. The parser targets (fuzz_ndjson, fuzz_csv, ...) stop at the
 * reader; the crashes of issue 10 item 15 were on the way from the sample to the converter.
 *
 * The first two bytes choose the run: byte 0 the format (ndjson, json, csv: % 3; debezium
 * change events when / 18 % 2, so that the seeds below 18 keep their meaning), the
 * --bad-records mode (fail, skip, dead-letter: / 3 % 3) and inferred or a small declared schema
 * (/ 9 % 2); byte 1 a small --max-record-size (9 .. 70 bytes, 2 MiB, or 0: the default) and
 * --infer-rows (1 .. 4), so that the limits are reached. The rest is the input file.
 *
 * Invariants: no crash, no leak (ASan's leak check at exit); a failure has an error code and a
 * message; a success lands, in the table's committed Parquet files, exactly the rows the stats
 * say were accepted, and a second run over the same input lands nothing more (exactly once).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "s3l/pipeline.h"
#include "pq_fd.h"
#include "s3l/pq_footer.h"
#include "s3l/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const formats[] = {"ndjson", "json", "csv"};
static const char declared[] = "[{\"name\":\"a\",\"type\":\"int64\"},"
                               "{\"name\":\"b\",\"type\":\"string\"}]";

/* The rows in the committed Parquet files under dir (the table's folder), recursively. */
static int64_t rows_under(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0)
            abort();
        if (S_ISDIR(st.st_mode)) {
            n += rows_under(p);
            continue;
        }
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 8, ".parquet") != 0)
            continue;
        int fd = open(p, O_RDONLY);
        struct s3l_pq_footer *f = NULL;
        struct s3l_error err = {0};
        if (fd < 0 || s3l_test_pq_footer_read_fd(fd, NULL, &f, &err) != 0)
            abort(); /* a committed data file that does not read back */
        n += f->num_rows;
        s3l_pq_footer_free(f);
        close(fd);
    }
    closedir(d);
    return n;
}

static int run(const struct s3l_pipeline_options *o, struct s3l_pipeline_stats *st)
{
    struct s3l_error err = {0};
    memset(st, 0, sizeof(*st));
    int rc = s3l_pipeline_run(o, st, NULL, &err);
    if (rc != 0 && (rc >= 0 || err.code == 0 || !err.message[0]))
        abort(); /* a failure without a code or a message */
    if (rc == 0 && err.code != 0)
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    char dir[] = "/tmp/s3l_fuzz_wp_XXXXXX";
    if (!mkdtemp(dir))
        abort();
    char input[64], url[80], table[80], cmd[96];
    snprintf(input, sizeof(input), "%s/in", dir);
    snprintf(url, sizeof(url), "file://%s/lake", dir);
    snprintf(table, sizeof(table), "%s/lake/t", dir);
    FILE *f = fopen(input, "wb");
    if (!f || (size > 2 && fwrite(data + 2, 1, size - 2, f) != size - 2) || fclose(f) != 0)
        abort();

    struct s3l_schema *schema = NULL;
    struct s3l_error err = {0};
    if ((data[0] / 9) % 2 && s3l_schema_from_json(declared, strlen(declared), &schema, &err))
        abort();
    const char *inputs[] = {input};
    struct s3l_pipeline_options o;
    s3l_pipeline_options_init(&o);
    o.url = url;
    o.table = "t";
    o.inputs = inputs;
    o.n_inputs = 1;
    o.input_format = (data[0] / 18) % 2 ? "debezium" : formats[data[0] % 3];
    o.bad_records = (enum s3l_bad_records)((data[0] / 3) % 3);
    o.schema = schema;
    /* 63: 2 MiB, past two of the reader's 1 MiB blocks: a row over it is found after refills
     * that moved the read buffer (the use-after-free of a CSV row in the sample). */
    unsigned m = data[1] & 63;
    o.max_record_size = m == 63 ? 2u << 20 : m ? 8 + m : 0;
    o.infer_rows = 1 + (data[1] >> 6);
    o.commit_interval_ns = 0;

    struct s3l_pipeline_stats st;
    if (run(&o, &st) == 0) {
        if (rows_under(table) != (int64_t)st.rows)
            abort(); /* the rows landed are not the rows accepted */
        struct s3l_pipeline_stats again;
        if (run(&o, &again) != 0 || again.rows != 0 || rows_under(table) != (int64_t)st.rows)
            abort(); /* a rerun over the same input landed it twice, or failed */
    }
    s3l_schema_free(schema);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        abort();
    return 0;
}
