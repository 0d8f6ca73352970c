/*
 * Fuzz target: the Parquet footer reader (include/s3l/pq_footer.h) over arbitrary bytes taken as
 * a whole file (trailer checks, FileMetaData, schema tree, the Arrow mapping) and as bare
 * FileMetaData bytes. A footer that decodes is walked in full (every leaf, column chunk and
 * statistic, each rendered by s3l_pq_value_format into a small buffer; the page headers of its
 * first chunks walked in the input itself) so ASan sees any size that lies. Memory is capped at 64 MiB per input.
 * Built with libFuzzer under clang (S3L_FUZZ), else replayed over corpus/pq_footer by
 * replay_main.c. The corpus holds the golden files of tests/golden/duckdb, their FileMetaData,
 * truncated, flipped and re-framed variants, and the inputs named min-* that a 5-minute
 * coverage-guided libFuzzer run kept (-merge=1).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/alloc.h"
#include "s3l/pq_footer.h"
#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk(const struct s3l_pq_footer *f)
{
    size_t sum = 0;
    for (size_t i = 0; i < f->n_leaves; i++) {
        const struct s3l_pq_schema_element *se = s3l_pq_footer_leaf(f, i);
        if (!se || se->leaf != (int32_t)i || se->num_children != 0)
            abort();
        sum += strlen(se->name);
    }
    for (size_t i = 0; i < f->n_schema; i++)
        if (i > 0 && (f->schema[i].parent < 0 || (size_t)f->schema[i].parent >= i))
            abort();
    for (size_t g = 0; g < f->n_row_groups; g++) {
        const struct s3l_pq_row_group *rg = &f->row_groups[g];
        if (rg->n_columns != f->n_leaves)
            abort();
        for (size_t c = 0; c < rg->n_columns; c++) {
            const struct s3l_pq_column_chunk *cc = &rg->columns[c];
            sum += strlen(cc->path_str) + cc->n_encodings + cc->n_kv;
            for (size_t k = 0; k < cc->n_path; k++)
                sum += strlen(cc->path[k]);
            if (cc->stats.min_value.ptr)
                sum += cc->stats.min_value.ptr[cc->stats.min_value.len]; /* the NUL */
            const struct s3l_pq_bytes *vals[] = {&cc->stats.min_value, &cc->stats.max_value,
                                                 &cc->stats.min, &cc->stats.max};
            for (size_t k = 0; k < 4; k++) {
                char buf[24]; /* small on purpose: truncation must stay in bounds */
                if (vals[k]->ptr)
                    sum += (size_t)s3l_pq_value_format(s3l_pq_footer_leaf(f, c), vals[k]->ptr,
                                                       vals[k]->len, buf, sizeof(buf)) + 1;
            }
        }
    }
    for (size_t k = 0; k < f->n_kv; k++)
        sum += strlen(f->kv[k].key) + f->kv[k].value.len;
    return sum;
}

static void check(struct s3l_pq_footer *f)
{
    if (walk(f) == (size_t)-1)
        abort();
    struct s3l_schema *s = NULL;
    struct s3l_error err = {0};
    if (s3l_pq_footer_validate(f, &err) != 0 && err.message[0] == 0)
        abort();
    s3l_error_clear(&err);
    if (s3l_pq_footer_schema(f, &s, &err) == 0) {
        char buf[64]; /* small on purpose: the type names truncate */
        for (size_t i = 0; i < s->n_fields; i++)
            s3l__type_format(&s->fields[i].type, buf, sizeof(buf));
        s3l_schema_free(s);
    } else if (err.message[0] == 0) {
        abort();
    }
    s3l_pq_footer_free(f);
}

struct mem {
    const uint8_t *p;
    size_t n;
};

static int read_mem(void *ctx, uint64_t off, void *buf, size_t len, struct s3l_error *err)
{
    const struct mem *m = ctx;
    if (off > m->n || len > m->n - off)
        return s3l_error_set(err, S3L_EIO, "beyond the input");
    memcpy(buf, m->p + off, len);
    return 0;
}

static int count_page(void *ctx, uint64_t off, const struct s3l_pq_page_header *h)
{
    (void)off;
    *(size_t *)ctx += h->header_len;
    return 0;
}

/* Walks the pages of the first chunks of a footer read from the input itself. */
static void walk_pages(const struct s3l_pq_footer *f, const uint8_t *data, size_t size)
{
    struct mem m = {data, size};
    size_t n = 0;
    for (size_t g = 0; g < f->n_row_groups && g < 4; g++) {
        for (size_t c = 0; c < f->row_groups[g].n_columns && c < 8; c++) {
            struct s3l_error err = {0};
            if (s3l_pq_chunk_pages(read_mem, &m, size, &f->row_groups[g].columns[c], NULL,
                                   count_page, &n, &err) != 0 && err.message[0] == 0)
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct s3l_pq_footer_options o;
    s3l_pq_footer_options_init(&o);
    o.max_memory = 64u << 20;
    struct s3l_pq_footer *f = NULL;
    struct s3l_error err = {0};
    if (s3l_pq_footer_read_buf(data, size, &o, &f, &err) == 0) {
        walk_pages(f, data, size);
        check(f);
    }
    else if (f || err.message[0] == 0)
        abort();
    s3l_error_clear(&err);
    f = NULL;
    if (s3l_pq_footer_decode(data, size, 0, &o, &f, &err) == 0)
        check(f);
    else if (f || err.message[0] == 0)
        abort();
    return 0;
}
