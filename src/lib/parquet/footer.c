/*
 * footer: finds and checks the Parquet trailer, decodes FileMetaData (footer_decode.c), and
 * derives the schema tree: each element's parent, the leaf columns in order, and the maximum
 * definition and repetition levels (apache/parquet-format README "File Format" and "Nested
 * Encoding"; LogicalTypes.md "Nested Types"). The layout at the end of a file is
 *     ... | FileMetaData (len bytes) | len (4 bytes, little-endian) | "PAR1"
 * and a file starts with "PAR1" too. Files whose footer is encrypted end in "PARE" instead.
 */
#include <stdio.h>

#include "parquet/footer_internal.h"

#define TAIL_READ (64 * 1024)  /* the first read: enough for most footers, one request */
#define MAX_NESTING 256        /* deeper schemas are refused (bounds the schema mapping's
                                  recursion; real schemas nest a few levels) */

void s3l_pq_footer_options_init(struct s3l_pq_footer_options *o)
{
    memset(o, 0, sizeof(*o));
    o->version = S3L_PQ_FOOTER_OPTIONS_VERSION;
    o->max_footer_bytes = 64u << 20;
    o->max_memory = 256u << 20;
    o->max_depth = S3L_TDEC_DEFAULT_DEPTH;
    o->name = "parquet file";
}

void s3l__pqf_options(const struct s3l_pq_footer_options *in, struct s3l_pq_footer_options *out)
{
    s3l_pq_footer_options_init(out);
    if (!in)
        return;
    if (in->max_footer_bytes)
        out->max_footer_bytes = in->max_footer_bytes;
    if (in->max_memory)
        out->max_memory = in->max_memory;
    if (in->max_depth)
        out->max_depth = in->max_depth;
    if (in->name)
        out->name = in->name;
}

struct s3l_pq_footer_mem *s3l__pqf_mem_new(size_t max)
{
    struct s3l_pq_footer_mem *m = s3l_malloc(sizeof(*m));
    if (m) {
        s3l_arena_init(&m->arena, 16 * 1024);
        m->max = max;
    }
    return m;
}

void s3l__pqf_mem_free(struct s3l_pq_footer_mem *m)
{
    if (m) {
        s3l_arena_free(&m->arena);
        s3l_free(m);
    }
}

static void *mem_fail(struct s3l__pqf_ctx *c, int code)
{
    if (c->mem_status == 0)
        c->mem_status = code;
    /* Stop the decoder too, so that every loop ends at its next read. */
    s3l__tdec_fail(&c->d, code == S3L_ENOMEM ? "out of memory" : "footer too large to decode");
    c->d.status = code;
    return NULL;
}

void *s3l__pqf_alloc(struct s3l__pqf_ctx *c, size_t count, size_t size)
{
    size_t n;
    if (!s3l_mul_size(count, size, &n) || n > c->mem->max ||
        c->mem->arena.used_total > c->mem->max - n)
        return mem_fail(c, S3L_ETOO_LARGE);
    void *p = s3l_arena_alloc(&c->mem->arena, n);
    if (!p)
        return mem_fail(c, S3L_ENOMEM);
    memset(p, 0, n ? n : 1);
    return p;
}

char *s3l__pqf_str(struct s3l__pqf_ctx *c, struct s3l_slice s)
{
    char *p = s3l__pqf_alloc(c, 1, s.len + 1);
    if (p && s.len)
        memcpy(p, s.ptr, s.len);
    return p;
}

int s3l__pqf_bytes(struct s3l__pqf_ctx *c, struct s3l_slice s, struct s3l_pq_bytes *out)
{
    uint8_t *p = (uint8_t *)s3l__pqf_str(c, s);
    if (!p)
        return c->d.status;
    out->ptr = p;
    out->len = s.len;
    return 0;
}

int s3l__pqf_fail(struct s3l__pqf_ctx *c, uint64_t base, const char *name, const char *what,
                  struct s3l_error *err)
{
    if (c->mem_status == S3L_ENOMEM)
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory decoding the %s", name, what);
    if (c->mem_status)
        return s3l_error_set(err, c->mem_status,
                             "%s: decoding the %s would take more than max_memory (%zu bytes)",
                             name, what, c->mem->max);
    char where[256];
    snprintf(where, sizeof(where), "%s: %s", name, what);
    return s3l__tdec_error(&c->d, base, where, err);
}

/* Joins a column chunk's path_in_schema with '.'. */
static int join_path(struct s3l__pqf_ctx *c, struct s3l_pq_column_chunk *cc)
{
    size_t n = 0;
    for (size_t i = 0; i < cc->n_path; i++)
        n += strlen(cc->path[i]) + 1;
    char *p = s3l__pqf_alloc(c, 1, n + 1);
    if (!p)
        return c->d.status;
    cc->path_str = p;
    for (size_t i = 0; i < cc->n_path; i++) {
        size_t k = strlen(cc->path[i]);
        if (i)
            *p++ = '.';
        memcpy(p, cc->path[i], k);
        p += k;
    }
    *p = 0;
    return 0;
}

struct level {
    size_t index;
    int32_t remaining;
};

/* Places element i under the open group on top of the stack and computes its levels. */
static int attach(struct s3l_pq_footer *f, struct level *stack, size_t *depth, size_t i,
                  const char *name, struct s3l_error *err)
{
    struct s3l_pq_schema_element *se = &f->schema[i];
    while (*depth > 0 && stack[*depth - 1].remaining == 0)
        (*depth)--;
    if (*depth == 0)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: corrupt schema: element %zu (%s) is outside the root's %d "
                             "children", name, i, se->name, f->schema[0].num_children);
    struct s3l_pq_schema_element *parent = &f->schema[stack[*depth - 1].index];
    stack[*depth - 1].remaining--;
    se->parent = (int32_t)stack[*depth - 1].index;
    se->max_def = parent->max_def;
    se->max_rep = parent->max_rep;
    if (se->repetition == 1 || se->repetition == 2) /* OPTIONAL or REPEATED */
        se->max_def++;
    if (se->repetition == 2)
        se->max_rep++;
    if (se->num_children < 0 || (size_t)se->num_children > f->n_schema - 1 - i)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: corrupt schema: element %zu (%s) claims %d children but %zu "
                             "elements follow", name, i, se->name, se->num_children,
                             f->n_schema - 1 - i);
    if (se->num_children > 0) {
        if (*depth >= MAX_NESTING)
            return s3l_error_set(err, S3L_EUNSUPPORTED,
                                 "%s: schema nested deeper than %d levels", name, MAX_NESTING);
        stack[*depth].index = i;
        stack[(*depth)++].remaining = se->num_children;
    } else {
        se->leaf = (int32_t)f->n_leaves;
        f->leaves[f->n_leaves++] = i;
    }
    return 0;
}

/* Derives parents, leaves and levels from the depth-first SchemaElement list. */
static int build_tree(struct s3l__pqf_ctx *c, struct s3l_pq_footer *f, const char *name,
                      struct s3l_error *err)
{
    if (f->n_schema == 0)
        return s3l_error_set(err, S3L_ECORRUPT, "%s: corrupt footer: the schema is empty", name);
    struct level *stack = s3l__pqf_alloc(c, f->n_schema, sizeof(*stack));
    f->leaves = s3l__pqf_alloc(c, f->n_schema, sizeof(size_t));
    if (!stack || !f->leaves)
        return s3l__pqf_fail(c, 0, name, "schema", err);
    struct s3l_pq_schema_element *root = &f->schema[0];
    if (root->num_children < 0 || (size_t)root->num_children > f->n_schema - 1)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: corrupt schema: the root claims %d children of %zu elements",
                             name, root->num_children, f->n_schema - 1);
    root->parent = -1;
    size_t depth = 0;
    stack[depth].index = 0;
    stack[depth++].remaining = root->num_children;
    for (size_t i = 1; i < f->n_schema; i++) {
        int rc = attach(f, stack, &depth, i, name, err);
        if (rc)
            return rc;
    }
    for (size_t k = 0; k < depth; k++)
        if (stack[k].remaining)
            return s3l_error_set(err, S3L_ECORRUPT,
                                 "%s: corrupt schema: element %zu (%s) misses %d children", name,
                                 stack[k].index, f->schema[stack[k].index].name,
                                 stack[k].remaining);
    return 0;
}

static int check_row_groups(struct s3l__pqf_ctx *c, struct s3l_pq_footer *f, const char *name,
                            struct s3l_error *err)
{
    for (size_t g = 0; g < f->n_row_groups; g++) {
        struct s3l_pq_row_group *rg = &f->row_groups[g];
        if (rg->n_columns != f->n_leaves)
            return s3l_error_set(err, S3L_ECORRUPT,
                                 "%s: corrupt footer: row group %zu has %zu column chunks for %zu "
                                 "leaf columns", name, g, rg->n_columns, f->n_leaves);
        for (size_t i = 0; i < rg->n_columns; i++) {
            if (join_path(c, &rg->columns[i]))
                return s3l__pqf_fail(c, 0, name, "column paths", err);
        }
    }
    return 0;
}

int s3l_pq_footer_decode(const void *data, size_t len, uint64_t base,
                         const struct s3l_pq_footer_options *opts, struct s3l_pq_footer **out,
                         struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    s3l__pqf_options(opts, &o);
    if (len > o.max_footer_bytes)
        return s3l_error_set(err, S3L_ETOO_LARGE,
                             "%s: footer of %zu bytes exceeds max_footer_bytes (%zu)", o.name,
                             len, o.max_footer_bytes);
    struct s3l_pq_footer *f = s3l_calloc(1, sizeof(*f));
    struct s3l__pqf_ctx c = {.mem = s3l__pqf_mem_new(o.max_memory)};
    if (!f || !c.mem) {
        s3l_free(f);
        s3l__pqf_mem_free(c.mem);
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory reading the footer", o.name);
    }
    f->mem = c.mem;
    f->metadata_offset = base;
    f->metadata_len = (uint32_t)len;
    s3l__tdec_init(&c.d, data, len, o.max_depth);
    f->name = s3l__pqf_str(&c, s3l_slice_cstr(o.name)); /* on failure c.d holds the code */
    int rc = f->name ? s3l__pqf_decode_file_metadata(&c, f) : c.d.status;
    if (rc)
        rc = s3l__pqf_fail(&c, base, o.name, "FileMetaData", err);
    if (rc == 0)
        rc = build_tree(&c, f, o.name, err);
    if (rc == 0)
        rc = check_row_groups(&c, f, o.name, err);
    if (rc) {
        s3l_pq_footer_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void s3l_pq_footer_free(struct s3l_pq_footer *f)
{
    if (!f)
        return;
    s3l__pqf_mem_free(f->mem);
    s3l_free(f);
}

const struct s3l_pq_schema_element *s3l_pq_footer_leaf(const struct s3l_pq_footer *f, size_t i)
{
    return i < f->n_leaves ? &f->schema[f->leaves[i]] : NULL;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int s3l__pqf_read_range(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size, uint64_t off,
                        uint64_t len, const char *name, const char *what, uint8_t **out,
                        struct s3l_error *err)
{
    *out = NULL; /* defined on every path, so no caller reads an unset pointer */
    if (off > file_size || len > file_size - off)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: corrupt footer: %s at offset %llu (%llu bytes) lies beyond the "
                             "file's %llu bytes", name, what, (unsigned long long)off,
                             (unsigned long long)len, (unsigned long long)file_size);
    uint8_t *buf = s3l_malloc(len ? (size_t)len : 1);
    if (!buf)
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory reading the %s", name, what);
    int rc = len ? read_at(ctx, off, buf, (size_t)len, err) : 0;
    if (rc) {
        s3l_free(buf);
        return rc;
    }
    *out = buf;
    return 0;
}

/* Checks the 4 magic bytes at file offset off. */
static int check_magic(const uint8_t *p, uint64_t off, const char *name, struct s3l_error *err)
{
    if (memcmp(p, "PAR1", 4) == 0)
        return 0;
    if (memcmp(p, "PARE", 4) == 0)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "%s: encrypted footer (magic PARE at offset %llu) is not supported",
                             name, (unsigned long long)off);
    /* A file cut short (an upload that never finished) has its head but not its tail. */
    return s3l_error_set(err, S3L_ECORRUPT,
                         "%s: not a Parquet file: bad magic at offset %llu (expected PAR1, found "
                         "%02x %02x %02x %02x)%s", name, (unsigned long long)off, p[0], p[1], p[2],
                         p[3], off ? "; a truncated file ends like this" : "");
}

/* With the tail in hand: checks the magic at both ends and finds the metadata. */
static int read_trailer(s3l_pq_read_fn read_at, void *ctx, uint64_t size, const uint8_t *tail,
                        size_t tail_len, const struct s3l_pq_footer_options *o, uint32_t *mlen,
                        struct s3l_error *err)
{
    int rc = check_magic(tail + tail_len - 4, size - 4, o->name, err);
    if (rc)
        return rc;
    *mlen = le32(tail + tail_len - 8);
    if (*mlen > size - 12)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: corrupt footer: metadata length %u (at offset %llu) is beyond "
                             "the file's %llu bytes", o->name, *mlen,
                             (unsigned long long)(size - 8), (unsigned long long)size);
    if (*mlen > o->max_footer_bytes)
        return s3l_error_set(err, S3L_ETOO_LARGE,
                             "%s: footer of %u bytes exceeds max_footer_bytes (%zu)", o->name,
                             *mlen, o->max_footer_bytes);
    if (tail_len == size)
        return check_magic(tail, 0, o->name, err);
    uint8_t head[4];
    rc = read_at(ctx, 0, head, sizeof(head), err);
    return rc ? rc : check_magic(head, 0, o->name, err);
}

int s3l_pq_footer_read(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                       const struct s3l_pq_footer_options *opts, struct s3l_pq_footer **out,
                       struct s3l_error *err)
{
    struct s3l_pq_footer_options o;
    s3l__pqf_options(opts, &o);
    if (file_size < 12)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "%s: not a Parquet file: %llu bytes, fewer than the 12 of magic, "
                             "footer length and magic", o.name, (unsigned long long)file_size);
    size_t tail_len = file_size < TAIL_READ ? (size_t)file_size : TAIL_READ;
    uint8_t *tail;
    int rc = s3l__pqf_read_range(read_at, ctx, file_size, file_size - tail_len, tail_len, o.name,
                                 "file tail", &tail, err);
    if (rc)
        return rc;
    uint32_t mlen = 0;
    rc = read_trailer(read_at, ctx, file_size, tail, tail_len, &o, &mlen, err);
    uint64_t moff = file_size - 8 - mlen;
    if (rc == 0 && (uint64_t)mlen + 8 <= tail_len) {
        rc = s3l_pq_footer_decode(tail + tail_len - 8 - mlen, mlen, moff, &o, out, err);
    } else if (rc == 0) {
        uint8_t *meta;
        rc = s3l__pqf_read_range(read_at, ctx, file_size, moff, mlen, o.name, "FileMetaData", &meta,
                                 err);
        if (rc == 0) {
            rc = s3l_pq_footer_decode(meta, mlen, moff, &o, out, err);
            s3l_free(meta);
        }
    }
    s3l_free(tail);
    if (rc == 0)
        (*out)->file_size = file_size;
    return rc;
}

struct mem_file {
    const uint8_t *data;
    size_t len;
};

static int read_mem(void *ctx, uint64_t off, void *buf, size_t len, struct s3l_error *err)
{
    const struct mem_file *m = ctx;
    if (off > m->len || len > m->len - off)
        return s3l_error_set(err, S3L_EIO, "read of %zu bytes at offset %llu beyond %zu bytes",
                             len, (unsigned long long)off, m->len);
    memcpy(buf, m->data + off, len);
    return 0;
}

int s3l_pq_footer_read_buf(const void *data, size_t len, const struct s3l_pq_footer_options *opts,
                           struct s3l_pq_footer **out, struct s3l_error *err)
{
    struct mem_file m = {data, data ? len : 0};
    return s3l_pq_footer_read(read_mem, &m, m.len, opts, out, err);
}
