/*
 * footer_schema: maps a file's Parquet schema back to Arrow-typed columns (include/s3l/schema.h),
 * the way Arrow's reader does, following apache/parquet-format LogicalTypes.md:
 *  - a leaf's LogicalType decides its type; without one, its ConvertedType (translated by the
 *    "Backward compatibility" tables of LogicalTypes.md); without either, its physical type;
 *  - a LIST group holds one repeated field; the "Lists" backward-compatibility rules decide
 *    whether that repeated field or its single child is the element;
 *  - a MAP (or MAP_KEY_VALUE) group holds one repeated group of key and value;
 *  - any other group is a struct, and a repeated field outside LIST/MAP is a list of required
 *    items ("Nested Types", unannotated repeated fields).
 * The tree is built with s3l_malloc and released, on failure too, by the schema module's
 * s3l__field_cleanup, so that s3l_schema_free frees what this returns.
 */
#include "parquet/footer_internal.h"
#include "schema/schema_int.h"

struct mapper {
    const struct s3l_pq_footer *f;
    size_t *end; /* end[i]: one past the last element of i's subtree */
    const char *name;
    struct s3l_error *err;
};

static int nomem(struct mapper *m)
{
    return s3l_error_set(m->err, S3L_ENOMEM, "%s: out of memory mapping the schema", m->name);
}

/* The logical type of a leaf: its LogicalType, else one derived from its ConvertedType. */
static struct s3l_pq_logical leaf_logical(const struct s3l_pq_schema_element *se)
{
    struct s3l_pq_logical lt = se->logical;
    if (lt.kind != S3L_PQ_LT_NONE)
        return lt;
    int32_t ct = se->converted_type;
    static const enum s3l_pq_logical_kind simple[] = {
        [0] = S3L_PQ_LT_STRING, [4] = S3L_PQ_LT_ENUM, [6] = S3L_PQ_LT_DATE,
        [19] = S3L_PQ_LT_JSON, [20] = S3L_PQ_LT_BSON,
    };
    if (ct >= 0 && (size_t)ct < S3L_ARRAY_LEN(simple) && simple[ct] != S3L_PQ_LT_NONE)
        lt.kind = simple[ct];
    if (ct == 5) { /* DECIMAL: precision and scale live on the SchemaElement */
        lt.kind = S3L_PQ_LT_DECIMAL;
        lt.precision = se->precision;
        lt.scale = se->scale < 0 ? 0 : se->scale;
    }
    if (ct >= 7 && ct <= 10) { /* TIME_MILLIS, TIME_MICROS, TIMESTAMP_MILLIS, TIMESTAMP_MICROS */
        lt.kind = ct <= 8 ? S3L_PQ_LT_TIME : S3L_PQ_LT_TIMESTAMP;
        lt.unit = (ct == 7 || ct == 9) ? S3L_PQ_UNIT_MILLIS : S3L_PQ_UNIT_MICROS;
        lt.adjusted_to_utc = true; /* LogicalTypes.md: converted types are UTC-adjusted */
    }
    if (ct >= 11 && ct <= 18) { /* UINT_8 .. UINT_64, INT_8 .. INT_64 */
        lt.kind = S3L_PQ_LT_INTEGER;
        lt.is_signed = ct >= 15;
        lt.bit_width = 8 << ((ct - 11) % 4);
    }
    return lt;
}

static int physical_type(struct mapper *m, const struct s3l_pq_schema_element *se,
                         struct s3l_type *t)
{
    switch (se->type) {
    case S3L_PQ_BOOLEAN: t->id = S3L_TYPE_BOOL; return 0;
    case S3L_PQ_INT32: t->id = S3L_TYPE_INT32; return 0;
    case S3L_PQ_INT64: t->id = S3L_TYPE_INT64; return 0;
    case S3L_PQ_INT96: /* legacy timestamps, nanoseconds as Arrow reads them */
        t->id = S3L_TYPE_TIMESTAMP;
        t->unit = S3L_UNIT_NANO;
        return 0;
    case S3L_PQ_FLOAT: t->id = S3L_TYPE_FLOAT32; return 0;
    case S3L_PQ_DOUBLE: t->id = S3L_TYPE_FLOAT64; return 0;
    case S3L_PQ_BYTE_ARRAY: t->id = S3L_TYPE_BINARY; return 0;
    case S3L_PQ_FIXED_LEN_BYTE_ARRAY:
        if (se->type_length < 1)
            break;
        t->id = S3L_TYPE_FIXED_SIZE_BINARY;
        t->byte_width = se->type_length;
        return 0;
    default: break;
    }
    return s3l_error_set(m->err, S3L_ECORRUPT, "%s: column %s: invalid physical type %d "
                         "(type_length %d)", m->name, se->name, se->type, se->type_length);
}

static const enum s3l_type_id int_ids[2][4] = {
    {S3L_TYPE_UINT8, S3L_TYPE_UINT16, S3L_TYPE_UINT32, S3L_TYPE_UINT64},
    {S3L_TYPE_INT8, S3L_TYPE_INT16, S3L_TYPE_INT32, S3L_TYPE_INT64},
};

static int time_type(struct mapper *m, const struct s3l_pq_schema_element *se,
                     const struct s3l_pq_logical *lt, struct s3l_type *t)
{
    static const enum s3l_time_unit units[] = {S3L_UNIT_SECOND, S3L_UNIT_MILLI, S3L_UNIT_MICRO,
                                               S3L_UNIT_NANO};
    if (lt->unit == S3L_PQ_UNIT_NONE)
        return s3l_error_set(m->err, S3L_ECORRUPT, "%s: column %s: TIME or TIMESTAMP without a "
                             "unit", m->name, se->name);
    t->unit = units[lt->unit];
    if (lt->kind == S3L_PQ_LT_TIME) {
        t->id = lt->unit == S3L_PQ_UNIT_MILLIS ? S3L_TYPE_TIME32 : S3L_TYPE_TIME64;
        return 0;
    }
    t->id = S3L_TYPE_TIMESTAMP;
    if (lt->adjusted_to_utc && (t->tz = s3l_strdup("UTC")) == NULL)
        return nomem(m);
    return 0;
}

static int leaf_type(struct mapper *m, const struct s3l_pq_schema_element *se, struct s3l_type *t)
{
    struct s3l_pq_logical lt = leaf_logical(se);
    int bw = lt.bit_width;
    switch (lt.kind) {
    case S3L_PQ_LT_STRING:
    case S3L_PQ_LT_ENUM: t->id = S3L_TYPE_UTF8; return 0;
    case S3L_PQ_LT_JSON: t->id = S3L_TYPE_JSON; return 0;
    case S3L_PQ_LT_DATE: t->id = S3L_TYPE_DATE32; return 0;
    case S3L_PQ_LT_UUID: t->id = S3L_TYPE_UUID; t->byte_width = 16; return 0;
    case S3L_PQ_LT_FLOAT16: t->id = S3L_TYPE_FLOAT16; return 0;
    case S3L_PQ_LT_TIME:
    case S3L_PQ_LT_TIMESTAMP: return time_type(m, se, &lt, t);
    case S3L_PQ_LT_INTEGER:
        if (bw != 8 && bw != 16 && bw != 32 && bw != 64)
            return s3l_error_set(m->err, S3L_ECORRUPT, "%s: column %s: INTEGER bitWidth %d",
                                 m->name, se->name, bw);
        t->id = int_ids[lt.is_signed][bw == 8 ? 0 : bw == 16 ? 1 : bw == 32 ? 2 : 3];
        return 0;
    case S3L_PQ_LT_DECIMAL:
        if (lt.precision < 1 || lt.precision > 38 || lt.scale < 0 || lt.scale > lt.precision)
            return s3l_error_set(m->err, S3L_EUNSUPPORTED, "%s: column %s: decimal(%d, %d) is "
                                 "not a decimal128", m->name, se->name, lt.precision, lt.scale);
        t->id = S3L_TYPE_DECIMAL128;
        t->precision = lt.precision;
        t->scale = lt.scale;
        return 0;
    case S3L_PQ_LT_VARIANT:
        return s3l_error_set(m->err, S3L_EUNSUPPORTED, "%s: column %s: VARIANT has no Arrow "
                             "type here", m->name, se->name);
    default:
        /* None, UNKNOWN (all nulls), BSON, GEOMETRY, GEOGRAPHY, INTERVAL, logical types newer
         * than this reader: the physical type keeps every byte. */
        return physical_type(m, se, t);
    }
}

static int map_field(struct mapper *m, size_t i, bool in_list, struct s3l_field *out);

/* Allocates n children for t. */
static int children(struct mapper *m, struct s3l_type *t, size_t n)
{
    t->children = s3l_calloc(n ? n : 1, sizeof(*t->children));
    if (!t->children)
        return nomem(m);
    t->n_children = n;
    return 0;
}

static int struct_type(struct mapper *m, size_t i, struct s3l_type *t)
{
    const struct s3l_pq_schema_element *se = &m->f->schema[i];
    t->id = S3L_TYPE_STRUCT;
    int rc = children(m, t, (size_t)se->num_children);
    size_t j = i + 1;
    for (size_t k = 0; rc == 0 && k < t->n_children; k++, j = m->end[j])
        rc = map_field(m, j, false, &t->children[k]);
    return rc;
}

static bool is_list(const struct s3l_pq_schema_element *se)
{
    return se->logical.kind == S3L_PQ_LT_LIST || se->converted_type == 3;
}

static bool is_map(const struct s3l_pq_schema_element *se)
{
    return se->logical.kind == S3L_PQ_LT_MAP || se->converted_type == 1 ||
           se->converted_type == 2;
}

static int bad_group(struct mapper *m, const struct s3l_pq_schema_element *se, const char *why)
{
    return s3l_error_set(m->err, S3L_ECORRUPT, "%s: column %s: %s (LogicalTypes.md)", m->name,
                         se->name, why);
}

/* Whether name is "<list>_tuple" (LogicalTypes.md, Lists, backward-compatibility rule 3). */
static bool is_tuple_name(const char *name, const char *list)
{
    size_t n = strlen(name), l = strlen(list);
    return n == l + 6 && strncmp(name, list, l) == 0 && strcmp(name + l, "_tuple") == 0;
}

/* LogicalTypes.md "Lists", backward-compatibility rules 1-4: which element is the item. */
static int list_type(struct mapper *m, size_t i, struct s3l_type *t)
{
    const struct s3l_pq_schema_element *se = &m->f->schema[i];
    size_t r = i + 1;
    const struct s3l_pq_schema_element *rep = &m->f->schema[r];
    if (se->num_children != 1 || rep->repetition != 2)
        return bad_group(m, se, "a LIST must hold exactly one repeated field");
    t->id = S3L_TYPE_LIST;
    int rc = children(m, t, 1);
    if (rc)
        return rc;
    bool rep_is_item = rep->num_children != 1 || strcmp(rep->name, "array") == 0 ||
                       is_tuple_name(rep->name, se->name);
    /* Rules 1-3: the repeated field itself is the (required) item; rule 4: its only child. */
    return map_field(m, rep_is_item ? r : r + 1, rep_is_item, &t->children[0]);
}

/* LogicalTypes.md "Maps": a repeated group key_value {required key; value}. */
static int map_type(struct mapper *m, size_t i, struct s3l_type *t)
{
    const struct s3l_pq_schema_element *se = &m->f->schema[i];
    const struct s3l_pq_schema_element *kv = &m->f->schema[i + 1];
    if (se->num_children != 1 || kv->repetition != 2 || kv->num_children != 2)
        return bad_group(m, se, "a MAP must hold one repeated group of key and value");
    t->id = S3L_TYPE_MAP;
    int rc = children(m, t, 2);
    if (rc == 0)
        rc = map_field(m, i + 2, false, &t->children[0]);
    if (rc == 0)
        rc = map_field(m, m->end[i + 2], false, &t->children[1]);
    if (rc == 0)
        t->children[0].nullable = false;
    return rc;
}

static int node_type(struct mapper *m, size_t i, struct s3l_type *t)
{
    const struct s3l_pq_schema_element *se = &m->f->schema[i];
    if (se->num_children == 0)
        return leaf_type(m, se, t);
    if (is_list(se))
        return list_type(m, i, t);
    if (is_map(se))
        return map_type(m, i, t);
    return struct_type(m, i, t);
}

/*
 * Maps element i to a field. in_list: i is the repeated field that a LIST group uses as its item
 * (so its repetition is already the list's); else a REPEATED element becomes a list of required
 * items of its own type.
 */
static int map_field(struct mapper *m, size_t i, bool in_list, struct s3l_field *out)
{
    const struct s3l_pq_schema_element *se = &m->f->schema[i];
    memset(out, 0, sizeof(*out));
    out->name = s3l_strdup(se->name ? se->name : "");
    if (!out->name)
        return nomem(m);
    out->nullable = se->repetition == 1;
    int rc;
    if (se->repetition == 2 && !in_list) {
        struct s3l_type *t = &out->type;
        t->id = S3L_TYPE_LIST;
        rc = children(m, t, 1);
        if (rc == 0 && (t->children[0].name = s3l_strdup(se->name ? se->name : "")) == NULL)
            rc = nomem(m);
        if (rc == 0)
            rc = node_type(m, i, &t->children[0].type);
    } else {
        rc = node_type(m, i, &out->type);
    }
    if (rc)
        s3l__field_cleanup(out);
    return rc;
}

/* end[i] for every element, from the parents: one pass from the back (see footer.c). */
static int subtree_ends(const struct s3l_pq_footer *f, size_t **out)
{
    size_t *end = s3l_calloc(f->n_schema, sizeof(size_t));
    if (!end)
        return S3L_ENOMEM;
    for (size_t k = f->n_schema; k-- > 0;) {
        const struct s3l_pq_schema_element *se = &f->schema[k];
        if (end[k] == 0) /* no child has set it: a leaf, or a group with no children */
            end[k] = k + 1;
        /* The first child of a parent seen from the back is its last child. */
        if (se->parent >= 0 && end[se->parent] == 0)
            end[se->parent] = end[k];
    }
    *out = end;
    return 0;
}

int s3l_pq_footer_schema(const struct s3l_pq_footer *f, struct s3l_schema **out,
                         struct s3l_error *err)
{
    struct mapper m = {.f = f, .name = f->name ? f->name : "parquet file", .err = err};
    struct s3l_schema *s = s3l_calloc(1, sizeof(*s));
    const struct s3l_pq_schema_element *root = &f->schema[0];
    size_t n = root->num_children > 0 ? (size_t)root->num_children : 0;
    if (!s || subtree_ends(f, &m.end) != 0 ||
        (s->fields = s3l_calloc(n ? n : 1, sizeof(*s->fields))) == NULL) {
        s3l_free(s);
        s3l_free(m.end);
        return nomem(&m);
    }
    int rc = 0;
    size_t j = 1;
    for (size_t k = 0; rc == 0 && k < n; k++, j = m.end[j]) {
        rc = map_field(&m, j, false, &s->fields[k]);
        if (rc == 0)
            s->n_fields++;
    }
    s3l_free(m.end);
    if (rc) {
        for (size_t k = 0; k < s->n_fields; k++)
            s3l__field_cleanup(&s->fields[k]);
        s3l_free(s->fields);
        s3l_free(s);
        return rc;
    }
    *out = s;
    return 0;
}
