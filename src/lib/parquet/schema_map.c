/*
 * The writer's schema: copies the Arrow-typed s3l_schema into a tree of pq_node with Dremel
 * definition and repetition levels, lists the leaf columns with their physical types, and writes
 * the flattened SchemaElement list of FileMetaData (parquet.thrift field 2).
 *
 * Mapping (LogicalTypes.md): lists use the 3-level form `<rep> group name (LIST) { repeated group
 * list { <rep> element } }`; maps `<rep> group name (MAP) { repeated group key_value { required
 * key; <rep> value } }`; intervals a group {months INT32, days INT32, nanoseconds INT64} (all
 * required). Levels: a nullable node adds one definition level, a repeated group one definition and
 * one repetition level (Dremel; parquet-format README "Nested Encoding").
 */
#include <stdio.h>

#include "parquet/pq.h"
#include "schema/schema_int.h"

static char *join_path(const char *parent, const char *name)
{
    if (!parent || !*parent)
        return s3l_strdup(name);
    size_t n = strlen(parent) + strlen(name) + 2;
    char *p = s3l_malloc(n);
    if (p)
        snprintf(p, n, "%s.%s", parent, name);
    return p;
}

static int build_node(struct s3l_pq_writer *w, struct pq_node *n, const char *name,
                      const struct s3l_type *t, bool nullable, const struct pq_node *parent,
                      int depth, struct s3l_error *err);

/* The row API's fast paths: integers that need only a range check, strings and binaries
 * (rows.c). */
static void set_fast_int(struct pq_node *n)
{
    n->fast_int = 0;
    n->fast_bytes = 0;
    if (n->kind != PQ_LEAF)
        return;
    switch (n->type.id) {
    case S3L_TYPE_INT8:
        n->fast_int = 1, n->lo = INT8_MIN, n->hi = INT8_MAX;
        break;
    case S3L_TYPE_INT16:
        n->fast_int = 1, n->lo = INT16_MIN, n->hi = INT16_MAX;
        break;
    case S3L_TYPE_INT32:
    case S3L_TYPE_DATE32:
        n->fast_int = 1, n->lo = INT32_MIN, n->hi = INT32_MAX;
        break;
    case S3L_TYPE_UINT8:
        n->fast_int = 1, n->lo = 0, n->hi = UINT8_MAX;
        break;
    case S3L_TYPE_UINT16:
        n->fast_int = 1, n->lo = 0, n->hi = UINT16_MAX;
        break;
    case S3L_TYPE_UINT32:
        n->fast_int = 1, n->lo = 0, n->hi = UINT32_MAX;
        break;
    case S3L_TYPE_INT64:
        n->fast_int = 2, n->lo = INT64_MIN, n->hi = INT64_MAX;
        break;
    case S3L_TYPE_UINT64:
        n->fast_int = 2, n->lo = 0, n->hi = INT64_MAX;
        break;
    case S3L_TYPE_TIMESTAMP:
        if (n->type.unit != S3L_UNIT_SECOND)
            n->fast_int = 2, n->lo = INT64_MIN, n->hi = INT64_MAX;
        break;
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
        n->fast_bytes = 1;
        break;
    case S3L_TYPE_BINARY:
        n->fast_bytes = 2;
        break;
    default:
        break;
    }
}

static int build_children(struct s3l_pq_writer *w, struct pq_node *n, const struct s3l_type *t,
                          int depth, struct s3l_error *err)
{
    size_t want = t->n_children;
    if (n->kind == PQ_LIST && want != 1)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "column %s: a list needs one child",
                             n->path);
    if (n->kind == PQ_MAP && want != 2)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "column %s: a map needs two children (key, value)", n->path);
    if (n->kind == PQ_STRUCT && want == 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "column %s: Parquet cannot hold a struct without fields", n->path);
    n->children = s3l_calloc(want, sizeof(*n->children));
    if (!n->children)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory mapping column %s", n->path);
    n->n_children = want;
    for (size_t i = 0; i < want; i++) {
        const struct s3l_field *f = &t->children[i];
        const char *cname = f->name;
        bool cnull = f->nullable && !f->key; /* a key column refuses nulls (schema.h) */
        if (n->kind == PQ_LIST) {
            cname = "element";
        } else if (n->kind == PQ_MAP) {
            cname = i == 0 ? "key" : "value";
            if (i == 0)
                cnull = false; /* LogicalTypes.md: the key field must be required */
        }
        if (!cname || !*cname)
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "column %s: field %zu has no name",
                                 n->path, i);
        int rc = build_node(w, &n->children[i], cname, &f->type, cnull, n, depth + 1, err);
        if (rc)
            return rc;
    }
    if (n->kind == PQ_MAP && n->children[0].kind != PQ_LEAF)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "column %s: map keys must be of a primitive type", n->path);
    return 0;
}

static int build_node(struct s3l_pq_writer *w, struct pq_node *n, const char *name,
                      const struct s3l_type *t, bool nullable, const struct pq_node *parent,
                      int depth, struct s3l_error *err)
{
    memset(n, 0, sizeof(*n));
    n->name = s3l_strdup(name);
    n->path = join_path(parent ? parent->path : NULL, name);
    if (!n->name || !n->path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory mapping column %s", name);
    if (depth > PQ_MAX_DEPTH / 2)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "column %s: nested deeper than %d", n->path,
                             PQ_MAX_DEPTH / 2);
    n->type = *t;
    n->type.tz = NULL;
    n->type.children = NULL;
    n->has_tz = t->tz != NULL && t->tz[0] != 0;
    n->nullable = nullable;
    uint8_t pdef = parent ? parent->item_def : 0;
    n->rep = parent ? parent->item_rep : 0;
    n->def = (uint8_t)(pdef + (nullable ? 1 : 0));
    n->item_def = n->def;
    n->item_rep = n->rep;
    n->first_leaf = w->n_cols;
    switch (t->id) {
    case S3L_TYPE_LIST:
    case S3L_TYPE_MAP:
        n->kind = t->id == S3L_TYPE_LIST ? PQ_LIST : PQ_MAP;
        n->item_def = (uint8_t)(n->def + 1);
        n->item_rep = (uint8_t)(n->rep + 1);
        break;
    case S3L_TYPE_STRUCT:
        n->kind = PQ_STRUCT;
        break;
    case S3L_TYPE_INTERVAL:
        n->kind = PQ_INTERVAL;
        w->n_cols += 3;
        break;
    default:
        n->kind = PQ_LEAF;
        w->n_cols += 1;
        break;
    }
    if (n->kind == PQ_LIST || n->kind == PQ_MAP || n->kind == PQ_STRUCT) {
        int rc = build_children(w, n, t, depth, err);
        if (rc)
            return rc;
    }
    n->n_leaves = w->n_cols - n->first_leaf;
    set_fast_int(n);
    return 0;
}

static void free_node(struct pq_node *n)
{
    for (size_t i = 0; i < n->n_children; i++)
        free_node(&n->children[i]);
    s3l_free(n->children);
    s3l_free(n->name);
    s3l_free(n->path);
}

/* Decimal128 in FIXED_LEN_BYTE_ARRAY: the fewest bytes whose signed range holds 10^p - 1. */
static int32_t decimal_bytes(int32_t precision)
{
    static const uint8_t digits_for_bytes[17] = {0,  2,  4,  6,  9,  11, 14, 16, 18,
                                                 21, 23, 26, 28, 31, 33, 35, 38};
    for (int32_t b = 1; b <= 16; b++)
        if (digits_for_bytes[b] >= precision)
            return b;
    return 16;
}

static int leaf_setup(struct pq_col *c, const struct pq_node *n, struct s3l_error *err)
{
    const struct s3l_type *t = &n->type;
    c->order = PQ_ORD_SIGNED;
    c->type_length = 0;
    switch (t->id) {
    case S3L_TYPE_BOOL:
        c->phys = PQ_BOOLEAN, c->order = PQ_ORD_BOOL, c->value_width = 1;
        break;
    case S3L_TYPE_INT8:
    case S3L_TYPE_INT16:
    case S3L_TYPE_INT32:
    case S3L_TYPE_DATE32:
    case S3L_TYPE_TIME32:
        c->phys = PQ_INT32, c->value_width = 4;
        break;
    case S3L_TYPE_UINT8:
    case S3L_TYPE_UINT16:
    case S3L_TYPE_UINT32:
        c->phys = PQ_INT32, c->order = PQ_ORD_UNSIGNED, c->value_width = 4;
        break;
    case S3L_TYPE_INT64:
    case S3L_TYPE_TIME64:
    case S3L_TYPE_TIMESTAMP:
        c->phys = PQ_INT64, c->value_width = 8;
        break;
    case S3L_TYPE_UINT64:
        c->phys = PQ_INT64, c->order = PQ_ORD_UNSIGNED, c->value_width = 8;
        break;
    case S3L_TYPE_FLOAT16:
        c->phys = PQ_FLBA, c->type_length = 2, c->order = PQ_ORD_FLOAT16, c->value_width = 2;
        break;
    case S3L_TYPE_FLOAT32:
        c->phys = PQ_FLOAT, c->order = PQ_ORD_FLOAT, c->value_width = 4;
        break;
    case S3L_TYPE_FLOAT64:
        c->phys = PQ_DOUBLE, c->order = PQ_ORD_FLOAT, c->value_width = 8;
        break;
    case S3L_TYPE_UTF8:
    case S3L_TYPE_JSON:
    case S3L_TYPE_BINARY:
        c->phys = PQ_BYTE_ARRAY, c->order = PQ_ORD_BYTES, c->value_width = 0;
        break;
    case S3L_TYPE_FIXED_SIZE_BINARY:
    case S3L_TYPE_UUID: {
        int32_t wdt = t->id == S3L_TYPE_UUID ? 16 : t->byte_width;
        if (wdt < 1)
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "column %s: fixed_size_binary needs a width >= 1", n->path);
        c->phys = PQ_FLBA, c->type_length = wdt, c->order = PQ_ORD_BYTES;
        c->value_width = (size_t)wdt;
        break;
    }
    case S3L_TYPE_DECIMAL128:
        if (t->precision < 1 || t->precision > 38 || t->scale < 0 || t->scale > t->precision)
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "column %s: decimal128(%d, %d) needs 1 <= precision <= 38 and "
                                 "0 <= scale <= precision",
                                 n->path, t->precision, t->scale);
        if (t->precision <= 9) {
            c->phys = PQ_INT32, c->value_width = 4;
        } else if (t->precision <= 18) {
            c->phys = PQ_INT64, c->value_width = 8;
        } else {
            c->phys = PQ_FLBA, c->order = PQ_ORD_DECIMAL;
            c->type_length = decimal_bytes(t->precision);
            c->value_width = (size_t)c->type_length;
        }
        break;
    default:
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "column %s: type id %d is not a leaf",
                             n->path, (int)t->id);
    }
    if ((t->id == S3L_TYPE_TIME32 && t->unit > S3L_UNIT_MILLI) ||
        (t->id == S3L_TYPE_TIME64 && t->unit < S3L_UNIT_MICRO))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "column %s: time32 takes s or ms, time64 us or ns", n->path);
    return 0;
}

/* The path_in_schema of leaves: names of the Parquet schema elements, list/map groups included. */
static int leaf_paths(struct s3l_pq_writer *w, const struct pq_node *n, const char **stack,
                      size_t depth, struct s3l_error *err)
{
    stack[depth++] = n->name;
    if (n->kind == PQ_LIST)
        stack[depth++] = "list";
    else if (n->kind == PQ_MAP)
        stack[depth++] = "key_value";
    if (n->kind == PQ_LEAF || n->kind == PQ_INTERVAL) {
        static const char *const iv[3] = {"months", "days", "nanoseconds"};
        size_t k = n->kind == PQ_LEAF ? 1 : 3;
        for (size_t i = 0; i < k; i++) {
            struct pq_col *c = &w->cols[n->first_leaf + i];
            c->node = n;
            c->max_def = n->def;
            c->max_rep = n->rep;
            c->n_path = depth + (k == 3 ? 1 : 0);
            c->path = s3l_calloc(c->n_path, sizeof(*c->path));
            if (!c->path)
                return s3l_error_set(err, S3L_ENOMEM, "out of memory mapping column %s", n->path);
            memcpy(c->path, stack, depth * sizeof(*stack));
            if (k == 3) {
                c->path[depth] = iv[i];
                c->phys = i < 2 ? PQ_INT32 : PQ_INT64;
                c->value_width = i < 2 ? 4 : 8;
                c->order = PQ_ORD_SIGNED;
            } else {
                int rc = leaf_setup(c, n, err);
                if (rc)
                    return rc;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < n->n_children; i++) {
        int rc = leaf_paths(w, &n->children[i], stack, depth, err);
        if (rc)
            return rc;
    }
    return 0;
}

int s3l__pq_schema_build(struct s3l_pq_writer *w, const struct s3l_schema *s, struct s3l_error *err)
{
    if (!s || s->n_fields == 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "schema has no columns");
    struct s3l_type root_t = {
        .id = S3L_TYPE_STRUCT, .n_children = s->n_fields, .children = s->fields};
    memset(&w->root, 0, sizeof(w->root));
    w->root.kind = PQ_STRUCT;
    w->root.name = s3l_strdup("schema");
    w->root.path = s3l_strdup("");
    if (!w->root.name || !w->root.path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory mapping the schema");
    w->n_cols = 0;
    int rc = build_children(w, &w->root, &root_t, 0, err);
    if (rc)
        return rc;
    w->root.n_leaves = w->n_cols;
    w->cols = s3l_calloc(w->n_cols, sizeof(*w->cols));
    if (!w->cols)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory mapping the schema");
    for (size_t i = 0; i < w->n_cols; i++) {
        rc = s3l__pq_col_init(&w->cols[i]);
        if (rc)
            return rc;
    }
    const char *stack[PQ_MAX_DEPTH * 2];
    for (size_t i = 0; i < w->root.n_children; i++) {
        rc = leaf_paths(w, &w->root.children[i], stack, 0, err);
        if (rc)
            return rc;
    }
    return 0;
}

void s3l__pq_schema_free(struct s3l_pq_writer *w)
{
    for (size_t i = 0; w->cols && i < w->n_cols; i++) {
        s3l__pq_col_free(&w->cols[i]);
        s3l_free(w->cols[i].path);
    }
    s3l_free(w->cols);
    w->cols = NULL;
    free_node(&w->root);
    memset(&w->root, 0, sizeof(w->root));
}

/* parquet.thrift: ConvertedType and FieldRepetitionType values. */
enum {
    CT_UTF8 = 0,
    CT_MAP = 1,
    CT_LIST = 3,
    CT_DECIMAL = 5,
    CT_DATE = 6,
    CT_TIME_MILLIS = 7,
    CT_TIME_MICROS = 8,
    CT_TS_MILLIS = 9,
    CT_TS_MICROS = 10,
    CT_UINT_8 = 11,
    CT_INT_8 = 15,
    CT_JSON = 19
};
enum { REP_REQUIRED = 0, REP_OPTIONAL = 1, REP_REPEATED = 2 };

/* SchemaElement of a group (fields 3 repetition_type, 4 name, 5 num_children, 6, 10). */
static void group_element(struct s3l_tc_enc *e, const char *name, int rep, int32_t n_children,
                          int converted, int logical)
{
    s3l__tc_elem_struct(e);
    if (rep >= 0)
        s3l__tc_field_i32(e, 3, rep);
    s3l__tc_field_string(e, 4, name);
    s3l__tc_field_i32(e, 5, n_children);
    if (converted >= 0)
        s3l__tc_field_i32(e, 6, converted);
    if (logical > 0) { /* LogicalType union: 2 MAP, 3 LIST (empty structs) */
        s3l__tc_field_struct(e, 10);
        s3l__tc_field_struct(e, (int16_t)logical);
        s3l__tc_struct_end(e);
        s3l__tc_struct_end(e);
    }
    s3l__tc_struct_end(e);
}

/* TimeUnit union (parquet.thrift): 1 MILLIS, 2 MICROS, 3 NANOS. */
static void time_unit(struct s3l_tc_enc *e, enum s3l_time_unit u)
{
    s3l__tc_field_struct(e, 2);
    s3l__tc_field_struct(e, u <= S3L_UNIT_MILLI ? 1 : u == S3L_UNIT_MICRO ? 2 : 3);
    s3l__tc_struct_end(e);
    s3l__tc_struct_end(e);
}

/* The ConvertedType (SchemaElement field 6) of a leaf's type, or -1 for none. */
static int converted_type(const struct pq_col *c)
{
    const struct s3l_type *t = &c->node->type;
    int ct = -1;
    switch (t->id) {
    case S3L_TYPE_UTF8:
        ct = CT_UTF8;
        break;
    case S3L_TYPE_JSON:
        ct = CT_JSON;
        break;
    case S3L_TYPE_DATE32:
        ct = CT_DATE;
        break;
    case S3L_TYPE_DECIMAL128:
        ct = CT_DECIMAL;
        break;
    case S3L_TYPE_INT8:
    case S3L_TYPE_INT16:
    case S3L_TYPE_INT32:
    case S3L_TYPE_INT64:
        ct = CT_INT_8 + (t->id - S3L_TYPE_INT8);
        break;
    case S3L_TYPE_UINT8:
    case S3L_TYPE_UINT16:
    case S3L_TYPE_UINT32:
    case S3L_TYPE_UINT64:
        ct = CT_UINT_8 + (t->id - S3L_TYPE_UINT8);
        break;
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64:
        /* TIME_MILLIS/MICROS denote UTC-adjusted times (LogicalTypes.md); ours are local. */
        break;
    case S3L_TYPE_TIMESTAMP:
        if (c->node->has_tz && t->unit != S3L_UNIT_NANO)
            ct = t->unit == S3L_UNIT_MICRO ? CT_TS_MICROS : CT_TS_MILLIS;
        break;
    default:
        break;
    }
    return ct;
}

/* The LogicalType union (SchemaElement field 10) of a leaf. */
static void logical_type(struct s3l_tc_enc *e, const struct pq_col *c)
{
    const struct s3l_type *t = &c->node->type;
    s3l__tc_field_struct(e, 10);
    switch (t->id) {
    case S3L_TYPE_UTF8:
        s3l__tc_field_struct(e, 1);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_JSON:
        s3l__tc_field_struct(e, 12);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_UUID:
        s3l__tc_field_struct(e, 14);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_FLOAT16:
        s3l__tc_field_struct(e, 15);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_DATE32:
        s3l__tc_field_struct(e, 6);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_DECIMAL128: /* DecimalType: 1 scale, 2 precision */
        s3l__tc_field_struct(e, 5);
        s3l__tc_field_i32(e, 1, t->scale);
        s3l__tc_field_i32(e, 2, t->precision);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_INT8:
    case S3L_TYPE_INT16:
    case S3L_TYPE_INT32:
    case S3L_TYPE_INT64:
    case S3L_TYPE_UINT8:
    case S3L_TYPE_UINT16:
    case S3L_TYPE_UINT32:
    case S3L_TYPE_UINT64: {
        /* IntType: 1 bitWidth (i8), 2 isSigned */
        bool is_signed = t->id <= S3L_TYPE_INT64;
        int k = is_signed ? t->id - S3L_TYPE_INT8 : t->id - S3L_TYPE_UINT8;
        s3l__tc_field_struct(e, 10);
        s3l__tc_field_i8(e, 1, (int8_t)(8 << k));
        s3l__tc_field_bool(e, 2, is_signed);
        s3l__tc_struct_end(e);
        break;
    }
    case S3L_TYPE_TIME32:
    case S3L_TYPE_TIME64: /* TimeType: 1 isAdjustedToUTC, 2 unit */
        s3l__tc_field_struct(e, 7);
        s3l__tc_field_bool(e, 1, false);
        time_unit(e, t->unit);
        s3l__tc_struct_end(e);
        break;
    case S3L_TYPE_TIMESTAMP: /* TimestampType: 1 isAdjustedToUTC (iff a zone), 2 unit */
        s3l__tc_field_struct(e, 8);
        s3l__tc_field_bool(e, 1, c->node->has_tz);
        time_unit(e, t->unit);
        s3l__tc_struct_end(e);
        break;
    default:
        break;
    }
    s3l__tc_struct_end(e);
}

/* The converted type and LogicalType (SchemaElement fields 6, 7, 8, 10) of a leaf. */
static void leaf_annotations(struct s3l_tc_enc *e, const struct pq_col *c)
{
    const struct s3l_type *t = &c->node->type;
    int ct = converted_type(c);
    if (ct >= 0)
        s3l__tc_field_i32(e, 6, ct);
    if (t->id == S3L_TYPE_DECIMAL128) {
        s3l__tc_field_i32(e, 7, t->scale);
        s3l__tc_field_i32(e, 8, t->precision);
    }
    logical_type(e, c);
}

static void leaf_element(struct s3l_tc_enc *e, const struct pq_col *c, const char *name,
                         bool nullable, bool annotate)
{
    s3l__tc_elem_struct(e);
    s3l__tc_field_i32(e, 1, (int32_t)c->phys);
    if (c->phys == PQ_FLBA)
        s3l__tc_field_i32(e, 2, c->type_length);
    s3l__tc_field_i32(e, 3, nullable ? REP_OPTIONAL : REP_REQUIRED);
    s3l__tc_field_string(e, 4, name);
    if (annotate && (c->node->type.id != S3L_TYPE_BOOL && c->node->type.id != S3L_TYPE_BINARY &&
                     c->node->type.id != S3L_TYPE_FIXED_SIZE_BINARY &&
                     c->node->type.id != S3L_TYPE_FLOAT32 && c->node->type.id != S3L_TYPE_FLOAT64))
        leaf_annotations(e, c);
    s3l__tc_struct_end(e);
}

static void write_node(struct s3l_pq_writer *w, struct s3l_tc_enc *e, const struct pq_node *n)
{
    int rep = n->nullable ? REP_OPTIONAL : REP_REQUIRED;
    switch (n->kind) {
    case PQ_LEAF:
        leaf_element(e, &w->cols[n->first_leaf], n->name, n->nullable, true);
        return;
    case PQ_INTERVAL: {
        static const char *const iv[3] = {"months", "days", "nanoseconds"};
        group_element(e, n->name, rep, 3, -1, 0);
        for (int i = 0; i < 3; i++)
            leaf_element(e, &w->cols[n->first_leaf + (size_t)i], iv[i], false, false);
        return;
    }
    case PQ_STRUCT:
        group_element(e, n->name, rep, (int32_t)n->n_children, -1, 0);
        break;
    case PQ_LIST:
        group_element(e, n->name, rep, 1, CT_LIST, 3);
        group_element(e, "list", REP_REPEATED, 1, -1, 0);
        break;
    case PQ_MAP:
        group_element(e, n->name, rep, 1, CT_MAP, 2);
        group_element(e, "key_value", REP_REPEATED, 2, -1, 0);
        break;
    }
    for (size_t i = 0; i < n->n_children; i++)
        write_node(w, e, &n->children[i]);
}

static uint32_t count_elements(const struct pq_node *n)
{
    if (n->kind == PQ_LEAF)
        return 1;
    if (n->kind == PQ_INTERVAL)
        return 4;
    uint32_t k = (n->kind == PQ_LIST || n->kind == PQ_MAP) ? 2 : 1;
    for (size_t i = 0; i < n->n_children; i++)
        k += count_elements(&n->children[i]);
    return k;
}

uint32_t s3l__pq_schema_elements(const struct s3l_pq_writer *w)
{
    return count_elements(&w->root);
}

void s3l__pq_schema_write(struct s3l_pq_writer *w, struct s3l_tc_enc *e)
{
    /* The root: name only and num_children (no repetition_type, parquet.thrift SchemaElement). */
    group_element(e, "schema", -1, (int32_t)w->root.n_children, -1, 0);
    for (size_t i = 0; i < w->root.n_children; i++)
        write_node(w, e, &w->root.children[i]);
}
