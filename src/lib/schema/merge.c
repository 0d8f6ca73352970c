/*
 * Schema evolution: merging the schema a stream brings with the table's schema record
 * (URL/_openetl/schemas/T.json, docs/design.md section 3), and the widening lattice inference uses
 * to combine the types seen in a sample (int64 + double -> double, date32 + timestamp -> timestamp,
 * struct + struct -> the union of their fields, mixed scalars -> string, nested + scalar -> json).
 */
#include <string.h>

#include "schema/schema_int.h"

static bool is_int(enum s3l_type_id id)
{
    return id >= S3L_TYPE_INT8 && id <= S3L_TYPE_UINT64;
}

static bool is_number(enum s3l_type_id id)
{
    return is_int(id) || (id >= S3L_TYPE_FLOAT16 && id <= S3L_TYPE_FLOAT64);
}

static bool is_nested(enum s3l_type_id id)
{
    return id == S3L_TYPE_LIST || id == S3L_TYPE_STRUCT || id == S3L_TYPE_MAP;
}

static int simple(struct s3l_type *out, enum s3l_type_id id)
{
    memset(out, 0, sizeof(*out));
    out->id = id;
    return 0;
}

static int widen_struct(const struct s3l_type *a, const struct s3l_type *b, struct s3l_type *out)
{
    struct s3l_type t = {0};
    t.id = S3L_TYPE_STRUCT;
    size_t cap = a->n_children + b->n_children;
    if (cap && !(t.children = s3l_calloc(cap, sizeof(*t.children))))
        return S3L_ENOMEM;
    int rc = 0;
    /* a's fields in a's order (widened with b's of the same name), then b's new ones. */
    for (size_t i = 0; i < a->n_children && rc == 0; i++) {
        const struct s3l_field *fa = &a->children[i], *fb = NULL;
        for (size_t j = 0; j < b->n_children; j++)
            if (strcmp(b->children[j].name, fa->name) == 0)
                fb = &b->children[j];
        struct s3l_field *f = &t.children[t.n_children];
        if (!(f->name = s3l_strdup(fa->name))) {
            rc = S3L_ENOMEM;
            break;
        }
        t.n_children++;
        f->nullable = true;
        rc = fb ? s3l__type_widen(&fa->type, &fb->type, &f->type)
                : s3l__type_copy(&f->type, &fa->type);
    }
    for (size_t j = 0; j < b->n_children && rc == 0; j++) {
        bool seen = false;
        for (size_t i = 0; i < a->n_children; i++)
            seen = seen || strcmp(a->children[i].name, b->children[j].name) == 0;
        if (seen)
            continue;
        struct s3l_field *f = &t.children[t.n_children];
        rc = s3l__field_copy(f, &b->children[j]);
        if (rc == 0) {
            t.n_children++;
            f->nullable = true;
        }
    }
    if (rc) {
        s3l__type_cleanup(&t);
        return rc;
    }
    *out = t;
    return 0;
}

static int widen_list(const struct s3l_type *a, const struct s3l_type *b, struct s3l_type *out)
{
    struct s3l_type t = {0};
    t.id = S3L_TYPE_LIST;
    if (!(t.children = s3l_calloc(1, sizeof(*t.children))))
        return S3L_ENOMEM;
    struct s3l_field *f = &t.children[0];
    int rc = 0;
    if (!(f->name = s3l_strdup("item")))
        rc = S3L_ENOMEM;
    t.n_children = 1;
    f->nullable = a->children[0].nullable || b->children[0].nullable;
    if (rc == 0)
        rc = s3l__type_widen(&a->children[0].type, &b->children[0].type, &f->type);
    if (rc) {
        s3l__type_cleanup(&t);
        return rc;
    }
    *out = t;
    return 0;
}

/*
 * A decimal with an integer or another decimal: a decimal with the most integer digits and the
 * largest scale of the two (an integer has 19 digits, scale 0) when that fits 38 digits, else
 * double. Inference makes decimal128(38, 0) for whole numbers past int64, so int64 + that is
 * decimal128(38, 0) and no value loses a digit.
 */
static int widen_decimal(const struct s3l_type *a, const struct s3l_type *b, struct s3l_type *out)
{
    int ia = a->id == S3L_TYPE_DECIMAL128 ? a->precision - a->scale : 19;
    int ib = b->id == S3L_TYPE_DECIMAL128 ? b->precision - b->scale : 19;
    int sa = a->id == S3L_TYPE_DECIMAL128 ? a->scale : 0;
    int sb = b->id == S3L_TYPE_DECIMAL128 ? b->scale : 0;
    int scale = S3L_MAX(sa, sb), digits = S3L_MAX(ia, ib) + scale;
    if (digits > 38)
        return simple(out, S3L_TYPE_FLOAT64);
    simple(out, S3L_TYPE_DECIMAL128);
    out->precision = digits;
    out->scale = scale;
    return 0;
}

int s3l__type_widen(const struct s3l_type *a, const struct s3l_type *b, struct s3l_type *out)
{
    if ((int)a->id == S3L__TYPE_NONE)
        return s3l__type_copy(out, b);
    if ((int)b->id == S3L__TYPE_NONE || s3l__type_equal(a, b))
        return s3l__type_copy(out, a);
    if (a->id == S3L_TYPE_STRUCT && b->id == S3L_TYPE_STRUCT)
        return widen_struct(a, b, out);
    if (a->id == S3L_TYPE_LIST && b->id == S3L_TYPE_LIST)
        return widen_list(a, b, out);
    if (is_nested(a->id) || is_nested(b->id) || a->id == S3L_TYPE_JSON || b->id == S3L_TYPE_JSON)
        return simple(out, S3L_TYPE_JSON);
    if (is_int(a->id) && is_int(b->id))
        return simple(out, S3L_TYPE_INT64);
    if ((a->id == S3L_TYPE_DECIMAL128 && (is_int(b->id) || b->id == S3L_TYPE_DECIMAL128)) ||
        (b->id == S3L_TYPE_DECIMAL128 && is_int(a->id)))
        return widen_decimal(a, b, out);
    if ((is_number(a->id) || a->id == S3L_TYPE_DECIMAL128) &&
        (is_number(b->id) || b->id == S3L_TYPE_DECIMAL128))
        return simple(out, S3L_TYPE_FLOAT64); /* ints with fractions: double, as DuckDB */
    /* A date is midnight of a timestamp without zone; a zone on one side only is ambiguous. */
    const struct s3l_type *d = a->id == S3L_TYPE_DATE32 ? a : b;
    const struct s3l_type *ts = d == a ? b : a;
    if (d->id == S3L_TYPE_DATE32 && ts->id == S3L_TYPE_TIMESTAMP && !ts->tz)
        return s3l__type_copy(out, ts);
    if (a->id == S3L_TYPE_TIMESTAMP && b->id == S3L_TYPE_TIMESTAMP && !a->tz == !b->tz) {
        int rc = s3l__type_copy(out, a->unit >= b->unit ? a : b);
        return rc;
    }
    return simple(out, S3L_TYPE_UTF8);
}

/* ---- the schema record --------------------------------------------------------------------- */

static int drift(const struct s3l_schema_merge_options *opt, const struct s3l_field *old,
                 const struct s3l_field *new_, struct s3l_error *err)
{
    char a[200], b[200];
    s3l__type_name(&old->type, a, sizeof(a));
    s3l__type_name(&new_->type, b, sizeof(b));
    const char *table = opt && opt->table ? opt->table : "?";
    const char *path = opt && opt->record_path ? opt->record_path : "the schema record";
    return s3l_error_set(err, S3L_ESCHEMA_DRIFT,
                         "table %s: column \"%s\" changed type from %s to %s; remove %s to accept "
                         "it, or allow type changes (s3land write --type-changes allow)", table,
                         old->name, a, b, path);
}

/*
 * Grows t (a recorded type) by in (the incoming one) when in only adds nullable struct fields, at
 * any depth (in structs, list items and map values): like a new top-level column, an added nested
 * field is schema growth, and a nested field in lacks is kept (made nullable: files written from
 * now on lack it). Returns 0 (with *ch set when t changed), 1 when the types differ in any other
 * way (drift; t may then be half grown: the caller replaces or drops it), or S3L_ENOMEM.
 */
static int grow_type(struct s3l_type *t, const struct s3l_type *in, bool *ch)
{
    if (s3l__type_equal(t, in))
        return 0;
    if (t->id != in->id || (t->id != S3L_TYPE_STRUCT && t->n_children != in->n_children))
        return 1;
    if (t->id == S3L_TYPE_LIST || t->id == S3L_TYPE_MAP) {
        /* A list item or a map value may grow; a map's key may not. */
        if (t->id == S3L_TYPE_MAP && !s3l__type_equal(&t->children[0].type, &in->children[0].type))
            return 1;
        for (size_t i = 0; i < t->n_children; i++) {
            struct s3l_field *f = &t->children[i];
            const struct s3l_field *g = &in->children[i];
            if (strcmp(f->name, g->name) != 0)
                return 1;
            int rc = grow_type(&f->type, &g->type, ch);
            if (rc)
                return rc;
            if (g->nullable && !f->nullable)
                f->nullable = *ch = true;
        }
        return 0;
    }
    if (t->id != S3L_TYPE_STRUCT)
        return 1;
    size_t n_new = 0;
    for (size_t j = 0; j < in->n_children; j++) {
        bool seen = false;
        for (size_t i = 0; i < t->n_children && !seen; i++)
            seen = strcmp(t->children[i].name, in->children[j].name) == 0;
        if (!seen && !in->children[j].nullable)
            return 1; /* a new field that refuses nulls: old files cannot have it */
        n_new += !seen;
    }
    for (size_t i = 0; i < t->n_children; i++) {
        struct s3l_field *f = &t->children[i];
        const struct s3l_field *g = NULL;
        for (size_t j = 0; j < in->n_children && !g; j++)
            if (strcmp(in->children[j].name, f->name) == 0)
                g = &in->children[j];
        if (g) {
            int rc = grow_type(&f->type, &g->type, ch);
            if (rc)
                return rc;
        }
        if ((!g || g->nullable) && !f->nullable)
            f->nullable = *ch = true;
    }
    if (!n_new)
        return 0;
    struct s3l_field *c = s3l_realloc(t->children, (t->n_children + n_new) * sizeof(*c));
    if (!c)
        return S3L_ENOMEM;
    t->children = c;
    for (size_t j = 0; j < in->n_children; j++) {
        bool seen = false;
        for (size_t i = 0; i < t->n_children && !seen; i++)
            seen = strcmp(t->children[i].name, in->children[j].name) == 0;
        if (seen)
            continue;
        if (s3l__field_copy(&t->children[t->n_children], &in->children[j]) != 0)
            return S3L_ENOMEM;
        t->n_children++;
        *ch = true;
    }
    return 0;
}

int s3l__type_grow(struct s3l_type *t, const struct s3l_type *in, bool *changed)
{
    return grow_type(t, in, changed);
}

int s3l_schema_merge(const struct s3l_schema *recorded, const struct s3l_schema *incoming,
                     const struct s3l_schema_merge_options *opt, struct s3l_schema **out,
                     bool *changed, struct s3l_error *err)
{
    bool allow = opt && opt->allow_type_changes;
    bool ch = recorded == NULL;
    struct s3l_schema *m = s3l_schema_copy(recorded ? recorded : incoming);
    if (!m)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory merging schemas");
    int rc = 0;
    for (size_t i = 0; recorded && i < m->n_fields && rc == 0; i++) {
        struct s3l_field *f = &m->fields[i];
        int j = s3l_schema_find(incoming, f->name, strlen(f->name));
        if (j < 0) {
            /* Files written from now on lack the column: readers see nulls. */
            if (!f->nullable && !f->key) {
                f->nullable = true;
                ch = true;
            }
            continue;
        }
        const struct s3l_field *in = &incoming->fields[j];
        int g = grow_type(&f->type, &in->type, &ch);
        if (g == S3L_ENOMEM) {
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory merging schemas");
            break;
        }
        if (g) {
            if (!allow) {
                rc = drift(opt, f, in, err);
                break;
            }
            struct s3l_type t;
            if (s3l__type_copy(&t, &in->type) != 0) {
                rc = s3l_error_set(err, S3L_ENOMEM, "out of memory merging schemas");
                break;
            }
            s3l__type_cleanup(&f->type);
            f->type = t;
            ch = true;
        }
        /* A key column stays required whatever the incoming schema says (an inferred schema
         * marks everything nullable): the record's key constraint stands, and a key is never
         * nullable (s3l_schema_from_json refuses such a record). */
        if (in->nullable && !f->nullable && !f->key) {
            f->nullable = true;
            ch = true;
        }
    }
    for (size_t j = 0; recorded && j < incoming->n_fields && rc == 0; j++) {
        const struct s3l_field *in = &incoming->fields[j];
        if (s3l_schema_find(m, in->name, strlen(in->name)) >= 0)
            continue;
        rc = s3l__schema_add_field(m, in, err);
        ch = true;
    }
    if (rc) {
        s3l_schema_free(m);
        return rc;
    }
    *out = m;
    if (changed)
        *changed = ch;
    return 0;
}
