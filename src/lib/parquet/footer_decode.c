/*
 * footer_decode: FileMetaData and the structs under it, from Thrift compact bytes into struct
 * s3l_pq_footer. Field ids and which fields are required come from apache/parquet-format
 * src/main/thrift/parquet.thrift; they are cited at each struct. Unknown fields are skipped, so
 * files of newer writers still read. A field of the wrong wire type, or a missing required field,
 * is corrupt: a value is never reinterpreted.
 */
#include "parquet/footer_internal.h"

typedef int (*elem_fn)(struct s3l__pqf_ctx *c, void *elem);

bool s3l__pqf_more(struct s3l__pqf_ctx *c, struct s3l_tdec_field *f, int *rc)
{
    if (*rc == 0)
        *rc = s3l__tdec_field(&c->d, f);
    return *rc == 0 && f->type != S3L_TDEC_STOP;
}

int s3l__pqf_end(struct s3l__pqf_ctx *c, int rc, uint32_t seen, uint32_t required,
               const char *what)
{
    if (rc)
        return rc;
    if ((seen & required) != required)
        return s3l__tdec_fail(&c->d, what);
    return s3l__tdec_struct_end(&c->d);
}

#define BIT(id) (1u << (id))
/* Required ids are all below 32; higher ids never mark one as seen. */
#define SEEN(id) ((id) < 32 ? BIT(id) : 0u)

static int f_i32(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, int32_t *out)
{
    int rc = s3l__tdec_expect(&c->d, f, S3L_TDEC_I32);
    return rc ? rc : s3l__tdec_i32(&c->d, out);
}

static int f_i64(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, int64_t *out)
{
    int rc = s3l__tdec_expect(&c->d, f, S3L_TDEC_I64);
    return rc ? rc : s3l__tdec_i64(&c->d, out);
}

static int f_bool(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, bool *out)
{
    int rc = s3l__tdec_expect(&c->d, f, S3L_TDEC_TRUE);
    if (rc == 0)
        *out = f->bool_value;
    return rc;
}

static int f_str(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, char **out)
{
    struct s3l_slice s;
    int rc = s3l__tdec_expect(&c->d, f, S3L_TDEC_BINARY);
    if (rc == 0)
        rc = s3l__tdec_binary(&c->d, &s);
    if (rc == 0 && (*out = s3l__pqf_str(c, s)) == NULL)
        rc = c->d.status;
    return rc;
}

static int f_bytes(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f,
                   struct s3l_pq_bytes *out)
{
    struct s3l_slice s;
    int rc = s3l__tdec_expect(&c->d, f, S3L_TDEC_BINARY);
    if (rc == 0)
        rc = s3l__tdec_binary(&c->d, &s);
    return rc ? rc : s3l__pqf_bytes(c, s, out);
}

/* Enters a list field whose elements must have wire type want; allocates count * size bytes. */
int s3l__pqf_list_enter(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, uint8_t want,
                      size_t size, void **out, size_t *n)
{
    uint8_t t;
    uint32_t count;
    int rc = s3l__tdec_expect(&c->d, f, S3L_TDEC_LIST);
    if (rc == 0)
        rc = s3l__tdec_list_begin(&c->d, &t, &count);
    if (rc)
        return rc;
    /* The spec's element type for bool is 2; C++ writers use 1 (BOOLEAN_TRUE): take either. */
    bool bools = want == S3L_TDEC_FALSE && t == S3L_TDEC_TRUE;
    if (t != want && !bools)
        return s3l__tdec_fail(&c->d, "list element of unexpected type");
    *out = s3l__pqf_alloc(c, count, size);
    if (!*out)
        return c->d.status;
    *n = count;
    return 0;
}

static int struct_list(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, size_t size,
                       void **out, size_t *n, elem_fn fn)
{
    int rc = s3l__pqf_list_enter(c, f, S3L_TDEC_STRUCT, size, out, n);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        rc = fn(c, (uint8_t *)*out + i * size);
    return rc ? rc : s3l__tdec_list_end(&c->d);
}

static int i32_list(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, int32_t **out,
                    size_t *n)
{
    int rc = s3l__pqf_list_enter(c, f, S3L_TDEC_I32, sizeof(int32_t), (void **)out, n);
    for (size_t i = 0; rc == 0 && i < *n; i++)
        rc = s3l__tdec_i32(&c->d, &(*out)[i]);
    return rc ? rc : s3l__tdec_list_end(&c->d);
}

static int str_list(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, char ***out,
                    size_t *n)
{
    int rc = s3l__pqf_list_enter(c, f, S3L_TDEC_BINARY, sizeof(char *), (void **)out, n);
    struct s3l_slice s;
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        rc = s3l__tdec_binary(&c->d, &s);
        if (rc == 0 && ((*out)[i] = s3l__pqf_str(c, s)) == NULL)
            rc = c->d.status;
    }
    return rc ? rc : s3l__tdec_list_end(&c->d);
}

/* KeyValue: 1 key (required), 2 value. */
static int decode_kv(struct s3l__pqf_ctx *c, void *elem)
{
    struct s3l_pq_kv *kv = elem;
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= SEEN(f.id);
        if (f.id == 1)
            rc = f_str(c, &f, &kv->key);
        else if (f.id == 2)
            rc = f_bytes(c, &f, &kv->value);
        else
            rc = s3l__tdec_skip_field(&c->d, &f);
    }
    return s3l__pqf_end(c, rc, seen, BIT(1), "KeyValue without its required key (field 1)");
}

/* Statistics: 1 max, 2 min, 3 null_count, 4 distinct_count, 5 max_value, 6 min_value,
 * 7 is_max_value_exact, 8 is_min_value_exact, 9 nan_count; all optional. */
int s3l__pqf_decode_stats(struct s3l__pqf_ctx *c, struct s3l_pq_stats *s)
{
    struct s3l_tdec_field f;
    int rc = s3l__tdec_struct_begin(&c->d);
    s->present = true;
    while (s3l__pqf_more(c, &f, &rc)) {
        switch (f.id) {
        case 1: rc = f_bytes(c, &f, &s->max); break;
        case 2: rc = f_bytes(c, &f, &s->min); break;
        case 3: rc = f_i64(c, &f, &s->null_count); s->has_null_count = true; break;
        case 4: rc = f_i64(c, &f, &s->distinct_count); s->has_distinct_count = true; break;
        case 5: rc = f_bytes(c, &f, &s->max_value); break;
        case 6: rc = f_bytes(c, &f, &s->min_value); break;
        case 7: rc = f_bool(c, &f, &s->is_max_exact); s->has_max_exact = true; break;
        case 8: rc = f_bool(c, &f, &s->is_min_exact); s->has_min_exact = true; break;
        case 9: rc = f_i64(c, &f, &s->nan_count); s->has_nan_count = true; break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    return s3l__pqf_end(c, rc, 0, 0, NULL);
}

/* ColumnMetaData: 1 type, 2 encodings, 3 path_in_schema, 4 codec, 5 num_values,
 * 6 total_uncompressed_size, 7 total_compressed_size, 8 key_value_metadata, 9 data_page_offset,
 * 10 index_page_offset, 11 dictionary_page_offset, 12 statistics, 13 encoding_stats (skipped),
 * 14 bloom_filter_offset, 15 bloom_filter_length. Required: 1-7 and 9. */
static int decode_column_meta(struct s3l__pqf_ctx *c, struct s3l_pq_column_chunk *cc)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= SEEN(f.id);
        switch (f.id) {
        case 1: rc = f_i32(c, &f, &cc->type); break;
        case 2: rc = i32_list(c, &f, &cc->encodings, &cc->n_encodings); break;
        case 3: rc = str_list(c, &f, &cc->path, &cc->n_path); break;
        case 4: rc = f_i32(c, &f, &cc->codec); break;
        case 5: rc = f_i64(c, &f, &cc->num_values); break;
        case 6: rc = f_i64(c, &f, &cc->total_uncompressed_size); break;
        case 7: rc = f_i64(c, &f, &cc->total_compressed_size); break;
        case 8:
            rc = struct_list(c, &f, sizeof(struct s3l_pq_kv), (void **)&cc->kv, &cc->n_kv,
                             decode_kv);
            break;
        case 9: rc = f_i64(c, &f, &cc->data_page_offset); break;
        case 10: rc = f_i64(c, &f, &cc->index_page_offset); break;
        case 11: rc = f_i64(c, &f, &cc->dictionary_page_offset); break;
        case 12:
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_STRUCT);
            if (rc == 0)
                rc = s3l__pqf_decode_stats(c, &cc->stats);
            break;
        case 14: rc = f_i64(c, &f, &cc->bloom_filter_offset); break;
        case 15: rc = f_i32(c, &f, &cc->bloom_filter_length); break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    uint32_t req = BIT(1) | BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(9);
    return s3l__pqf_end(c, rc, seen, req, "ColumnMetaData misses a required field (1-7, 9)");
}

/* ColumnChunk: 1 file_path, 2 file_offset, 3 meta_data, 4 offset_index_offset,
 * 5 offset_index_length, 6 column_index_offset, 7 column_index_length; 8 crypto_metadata and
 * 9 encrypted_column_metadata are skipped. file_offset is required by the IDL but defaults to 0,
 * and some writers omit it, so it is not enforced. */
static int decode_column_chunk(struct s3l__pqf_ctx *c, void *elem)
{
    struct s3l_pq_column_chunk *cc = elem;
    struct s3l_tdec_field f;
    cc->index_page_offset = cc->dictionary_page_offset = cc->bloom_filter_offset = -1;
    cc->offset_index_offset = cc->column_index_offset = -1;
    cc->offset_index_length = cc->column_index_length = cc->bloom_filter_length = -1;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        switch (f.id) {
        case 1: rc = f_str(c, &f, &cc->file_path); break;
        case 2: rc = f_i64(c, &f, &cc->file_offset); break;
        case 3:
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_STRUCT);
            if (rc == 0)
                rc = decode_column_meta(c, cc);
            cc->has_meta_data = rc == 0;
            break;
        case 4: rc = f_i64(c, &f, &cc->offset_index_offset); break;
        case 5: rc = f_i32(c, &f, &cc->offset_index_length); break;
        case 6: rc = f_i64(c, &f, &cc->column_index_offset); break;
        case 7: rc = f_i32(c, &f, &cc->column_index_length); break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    return s3l__pqf_end(c, rc, 0, 0, NULL);
}

/* RowGroup: 1 columns, 2 total_byte_size, 3 num_rows (required); 4 sorting_columns (skipped),
 * 5 file_offset, 6 total_compressed_size, 7 ordinal (i16). */
static int decode_row_group(struct s3l__pqf_ctx *c, void *elem)
{
    struct s3l_pq_row_group *rg = elem;
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int16_t ord;
    rg->file_offset = rg->total_compressed_size = -1;
    rg->ordinal = -1;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= SEEN(f.id);
        switch (f.id) {
        case 1:
            rc = struct_list(c, &f, sizeof(struct s3l_pq_column_chunk), (void **)&rg->columns,
                             &rg->n_columns, decode_column_chunk);
            break;
        case 2: rc = f_i64(c, &f, &rg->total_byte_size); break;
        case 3: rc = f_i64(c, &f, &rg->num_rows); break;
        case 5: rc = f_i64(c, &f, &rg->file_offset); break;
        case 6: rc = f_i64(c, &f, &rg->total_compressed_size); break;
        case 7:
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I16);
            if (rc == 0 && (rc = s3l__tdec_i16(&c->d, &ord)) == 0)
                rg->ordinal = ord;
            break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    return s3l__pqf_end(c, rc, seen, BIT(1) | BIT(2) | BIT(3),
               "RowGroup misses a required field (1 columns, 2 total_byte_size, 3 num_rows)");
}

/* TimeUnit union: 1 MILLIS, 2 MICROS, 3 NANOS (each an empty struct). */
static int decode_time_unit(struct s3l__pqf_ctx *c, enum s3l_pq_time_unit *unit)
{
    struct s3l_tdec_field f;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        if (f.id >= 1 && f.id <= 3 && f.type == S3L_TDEC_STRUCT)
            *unit = (enum s3l_pq_time_unit)f.id;
        rc = s3l__tdec_skip_field(&c->d, &f);
    }
    return s3l__pqf_end(c, rc, 0, 0, NULL);
}

/* The members of LogicalType with fields: DecimalType {1 scale, 2 precision}, TimeType and
 * TimestampType {1 isAdjustedToUTC, 2 unit}, IntType {1 bitWidth (i8), 2 isSigned}. */
static int decode_logical_member(struct s3l__pqf_ctx *c, struct s3l_pq_logical *lt)
{
    struct s3l_tdec_field f;
    int8_t bw;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        if (lt->kind == S3L_PQ_LT_DECIMAL && f.id == 1) {
            rc = f_i32(c, &f, &lt->scale);
        } else if (lt->kind == S3L_PQ_LT_DECIMAL && f.id == 2) {
            rc = f_i32(c, &f, &lt->precision);
        } else if ((lt->kind == S3L_PQ_LT_TIME || lt->kind == S3L_PQ_LT_TIMESTAMP) && f.id == 1) {
            rc = f_bool(c, &f, &lt->adjusted_to_utc);
        } else if ((lt->kind == S3L_PQ_LT_TIME || lt->kind == S3L_PQ_LT_TIMESTAMP) && f.id == 2) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_STRUCT);
            if (rc == 0)
                rc = decode_time_unit(c, &lt->unit);
        } else if (lt->kind == S3L_PQ_LT_INTEGER && f.id == 1) {
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_I8);
            if (rc == 0 && (rc = s3l__tdec_i8(&c->d, &bw)) == 0)
                lt->bit_width = bw;
        } else if (lt->kind == S3L_PQ_LT_INTEGER && f.id == 2) {
            rc = f_bool(c, &f, &lt->is_signed);
        } else {
            rc = s3l__tdec_skip_field(&c->d, &f);
        }
    }
    return s3l__pqf_end(c, rc, 0, 0, NULL);
}

/* LogicalType union: the member's field id is the kind (parquet.thrift, union LogicalType). */
static int decode_logical(struct s3l__pqf_ctx *c, struct s3l_pq_logical *lt)
{
    struct s3l_tdec_field f;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        bool known = (f.id >= 1 && f.id <= 8) || (f.id >= 10 && f.id <= 18);
        lt->kind = known ? (enum s3l_pq_logical_kind)f.id : S3L_PQ_LT_OTHER;
        if (f.type == S3L_TDEC_STRUCT && (f.id == 5 || f.id == 7 || f.id == 8 || f.id == 10))
            rc = decode_logical_member(c, lt);
        else
            rc = s3l__tdec_skip_field(&c->d, &f);
    }
    return s3l__pqf_end(c, rc, 0, 0, NULL);
}

/* SchemaElement: 1 type, 2 type_length, 3 repetition_type, 4 name (required), 5 num_children,
 * 6 converted_type, 7 scale, 8 precision, 9 field_id, 10 logicalType. */
static int decode_schema_element(struct s3l__pqf_ctx *c, void *elem)
{
    struct s3l_pq_schema_element *se = elem;
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    se->type = se->type_length = se->repetition = se->converted_type = -1;
    se->scale = se->precision = se->field_id = se->parent = se->leaf = -1;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= SEEN(f.id);
        switch (f.id) {
        case 1: rc = f_i32(c, &f, &se->type); break;
        case 2: rc = f_i32(c, &f, &se->type_length); break;
        case 3: rc = f_i32(c, &f, &se->repetition); break;
        case 4: rc = f_str(c, &f, &se->name); break;
        case 5: rc = f_i32(c, &f, &se->num_children); break;
        case 6: rc = f_i32(c, &f, &se->converted_type); break;
        case 7: rc = f_i32(c, &f, &se->scale); break;
        case 8: rc = f_i32(c, &f, &se->precision); break;
        case 9: rc = f_i32(c, &f, &se->field_id); break;
        case 10:
            rc = s3l__tdec_expect(&c->d, &f, S3L_TDEC_STRUCT);
            if (rc == 0)
                rc = decode_logical(c, &se->logical);
            break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    return s3l__pqf_end(c, rc, seen, BIT(4), "SchemaElement without its required name (field 4)");
}

/* ColumnOrder union: records the member id (1 TYPE_ORDER, 2 IEEE_754_TOTAL_ORDER, ...). */
static int decode_column_order(struct s3l__pqf_ctx *c, void *elem)
{
    int32_t *order = elem;
    struct s3l_tdec_field f;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        *order = f.id;
        rc = s3l__tdec_skip_field(&c->d, &f);
    }
    return s3l__pqf_end(c, rc, 0, 0, NULL);
}

/* FileMetaData: 1 version, 2 schema, 3 num_rows, 4 row_groups (required), 5 key_value_metadata,
 * 6 created_by, 7 column_orders, 8 encryption_algorithm, 9 footer_signing_key_metadata. */
int s3l__pqf_decode_file_metadata(struct s3l__pqf_ctx *c, struct s3l_pq_footer *fm)
{
    struct s3l_tdec_field f;
    uint32_t seen = 0;
    int rc = s3l__tdec_struct_begin(&c->d);
    while (s3l__pqf_more(c, &f, &rc)) {
        seen |= SEEN(f.id);
        switch (f.id) {
        case 1: rc = f_i32(c, &f, &fm->version); break;
        case 2:
            rc = struct_list(c, &f, sizeof(struct s3l_pq_schema_element), (void **)&fm->schema,
                             &fm->n_schema, decode_schema_element);
            break;
        case 3: rc = f_i64(c, &f, &fm->num_rows); break;
        case 4:
            rc = struct_list(c, &f, sizeof(struct s3l_pq_row_group), (void **)&fm->row_groups,
                             &fm->n_row_groups, decode_row_group);
            break;
        case 5:
            rc = struct_list(c, &f, sizeof(struct s3l_pq_kv), (void **)&fm->kv, &fm->n_kv,
                             decode_kv);
            break;
        case 6: rc = f_str(c, &f, &fm->created_by); break;
        case 7:
            rc = struct_list(c, &f, sizeof(int32_t), (void **)&fm->column_orders,
                             &fm->n_column_orders, decode_column_order);
            break;
        case 8:
            fm->encrypted = true;
            rc = s3l__tdec_skip_field(&c->d, &f);
            break;
        default: rc = s3l__tdec_skip_field(&c->d, &f); break;
        }
    }
    return s3l__pqf_end(c, rc, seen, BIT(1) | BIT(2) | BIT(3) | BIT(4),
               "FileMetaData misses a required field (1 version, 2 schema, 3 num_rows, "
               "4 row_groups)");
}
