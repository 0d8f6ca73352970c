/*
 * Schema inference over a sample of records (the first 1,000 by default; the caller feeds them).
 * Each value gets a type (s3l__infer_value) and a column's types are combined with the widening
 * lattice of s3l__type_widen. A column that only held nulls has no type: it is never written with
 * a guessed one, and waits for its first value (the issue 3 rule). CSV text is typed by its shape
 * (integer, float, bool, ISO-8601 date or timestamp); JSON strings only by the date shapes, since
 * a JSON string that looks like a number is still a string.
 */
#include <string.h>

#include "input/input.h"
#include "input/value.h"
#include "schema/schema_int.h"

struct col {
    char *name;
    size_t name_len;
    struct s3l_type type; /* id S3L__TYPE_NONE while only nulls were seen */
};

struct s3l_infer {
    struct s3l_infer_options opt;
    struct col *cols;
    size_t n;
    size_t cap;
    size_t count;
};

static int set_simple(struct s3l_type *out, enum s3l_type_id id)
{
    memset(out, 0, sizeof(*out));
    out->id = id;
    return 0;
}

/* decimal128(38, 0): whole numbers outside int64 (all 38-digit integers fit). */
static int set_bigint(struct s3l_type *out)
{
    set_simple(out, S3L_TYPE_DECIMAL128);
    out->precision = 38;
    out->scale = 0;
    return 0;
}

static enum s3l_time_unit ts_unit(const struct s3l_infer_options *opt)
{
    return opt && opt->timestamp_unit != S3L_UNIT_SECOND ? opt->timestamp_unit : S3L_UNIT_MICRO;
}

static int set_timestamp(struct s3l_type *out, const struct s3l_infer_options *opt, bool tz)
{
    set_simple(out, S3L_TYPE_TIMESTAMP);
    out->unit = ts_unit(opt);
    if (tz && !(out->tz = s3l_strdup("UTC")))
        return S3L_ENOMEM;
    return 0;
}

/*
 * The type of a string. Inference never picks a type that would refuse the value it saw: a
 * timestamp with digits finer than the unit, or out of the unit's range, stays a string.
 */
static int string_type(const struct s3l_value *v, const struct s3l_infer_options *opt,
                       struct s3l_type *out)
{
    enum s3l__text_shape shape = s3l__text_shape(v->str, v->len);
    if (!(v->flags & S3L_VALUE_TEXT) && shape != S3L__SHAPE_DATE &&
        shape != S3L__SHAPE_TIMESTAMP && shape != S3L__SHAPE_TIMESTAMP_TZ)
        shape = S3L__SHAPE_TEXT;
    if (shape == S3L__SHAPE_TIMESTAMP || shape == S3L__SHAPE_TIMESTAMP_TZ) {
        int64_t x;
        bool off;
        const char *why;
        if (s3l__parse_time(v->str, v->len, S3L__TIMESTAMP, ts_unit(opt), &x, &off, &why) != 0)
            shape = S3L__SHAPE_TEXT;
    }
    switch (shape) {
    case S3L__SHAPE_INT: return set_simple(out, S3L_TYPE_INT64);
    case S3L__SHAPE_FLOAT: return set_simple(out, S3L_TYPE_FLOAT64);
    case S3L__SHAPE_BIGINT: return set_bigint(out);
    case S3L__SHAPE_BOOL: return set_simple(out, S3L_TYPE_BOOL);
    case S3L__SHAPE_DATE: return set_simple(out, S3L_TYPE_DATE32);
    case S3L__SHAPE_TIMESTAMP: return set_timestamp(out, opt, false);
    case S3L__SHAPE_TIMESTAMP_TZ: return set_timestamp(out, opt, true);
    default: return set_simple(out, S3L_TYPE_UTF8);
    }
}

/* Widens *acc with t (consumed). */
static int widen_into(struct s3l_type *acc, struct s3l_type *t)
{
    struct s3l_type w;
    int rc = s3l__type_widen(acc, t, &w);
    s3l__type_cleanup(t);
    if (rc)
        return rc;
    s3l__type_cleanup(acc);
    *acc = w;
    return 0;
}

/* Lists and structs nest at most this deep in an inferred type (type names parse up to 64);
 * deeper values become json text. */
#define MAX_INFER_DEPTH 32

static int infer_at(const struct s3l_value *values, size_t i, const struct s3l_infer_options *opt,
                    int depth, struct s3l_type *out);

static int list_type(const struct s3l_value *values, size_t i,
                     const struct s3l_infer_options *opt, int depth, struct s3l_type *out)
{
    struct s3l_type item = {0};
    size_t j = i + 1;
    int rc = 0;
    for (uint32_t k = 0; k < values[i].len && rc == 0; k++) {
        struct s3l_type t;
        rc = infer_at(values, j, opt, depth + 1, &t);
        if (rc == 0)
            rc = widen_into(&item, &t);
        j = values[j].end;
    }
    if (rc || (int)item.id == S3L__TYPE_NONE) {
        s3l__type_cleanup(&item);
        set_simple(out, (enum s3l_type_id)S3L__TYPE_NONE);
        return rc;
    }
    set_simple(out, S3L_TYPE_LIST);
    out->children = s3l_calloc(1, sizeof(*out->children));
    if (!out->children || !(out->children[0].name = s3l_strdup("item"))) {
        s3l__type_cleanup(&item);
        s3l__type_cleanup(out);
        return S3L_ENOMEM;
    }
    out->n_children = 1;
    out->children[0].nullable = true;
    out->children[0].type = item;
    return 0;
}

static int struct_type(const struct s3l_value *values, size_t i,
                       const struct s3l_infer_options *opt, int depth, struct s3l_type *out)
{
    /* Each member as a one-field struct, widened in: duplicates and order handled by widen. */
    struct s3l_type acc = {0};
    size_t j = i + 1;
    int rc = 0;
    for (uint32_t k = 0; k < values[i].len && rc == 0; k++) {
        const struct s3l_value *key = &values[j];
        struct s3l_field f = {0};
        j = values[j + 1].end;
        if (key->len == 0 || memchr(key->str, 0, key->len))
            continue; /* "" or a name with U+0000 cannot be a column name: ignored */
        rc = infer_at(values, (size_t)(key - values) + 1, opt, depth + 1, &f.type);
        if (rc || (int)f.type.id == S3L__TYPE_NONE) {
            s3l__type_cleanup(&f.type);
            continue;
        }
        f.nullable = true;
        f.name = s3l_strndup(key->str, key->len);
        if (!f.name) {
            s3l__type_cleanup(&f.type);
            rc = S3L_ENOMEM;
            break;
        }
        struct s3l_type one = {.id = S3L_TYPE_STRUCT, .n_children = 1, .children = &f};
        struct s3l_type w;
        if ((int)acc.id == S3L__TYPE_NONE)
            acc.id = S3L_TYPE_STRUCT;
        rc = s3l__type_widen(&acc, &one, &w);
        s3l__field_cleanup(&f);
        if (rc == 0) {
            s3l__type_cleanup(&acc);
            acc = w;
        }
    }
    if (rc) {
        s3l__type_cleanup(&acc);
        set_simple(out, (enum s3l_type_id)S3L__TYPE_NONE);
        return rc;
    }
    /* An object with no typed member ({} or {"c": null}) is a struct with no fields: still an
     * object, so it widens to json beside a scalar and into the fields of a struct beside one
     * (as a null would not: [1, {"c": null}] was list<int64>, then the object was refused). What
     * is left of it when inference ends has no type, as a null (settle). */
    acc.id = S3L_TYPE_STRUCT;
    *out = acc;
    return 0;
}

/* True when t holds no typed leaf: no value but nulls and fieldless objects was seen. */
static bool untyped(const struct s3l_type *t)
{
    if ((int)t->id == S3L__TYPE_NONE)
        return true;
    if (t->id == S3L_TYPE_LIST)
        return t->n_children == 1 && untyped(&t->children[0].type);
    if (t->id != S3L_TYPE_STRUCT)
        return false;
    for (size_t i = 0; i < t->n_children; i++)
        if (!untyped(&t->children[i].type))
            return false;
    return true;
}

/* The inferred type as a column gets it: struct fields without a type dropped, and a type with
 * no typed leaf left none (S3L__TYPE_NONE), as only nulls give. */
static void settle(struct s3l_type *t)
{
    if (untyped(t)) {
        s3l__type_cleanup(t); /* id 0: S3L__TYPE_NONE */
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->n_children; i++) {
        struct s3l_field *f = &t->children[i];
        if (t->id == S3L_TYPE_STRUCT && untyped(&f->type)) {
            s3l__field_cleanup(f);
            continue;
        }
        settle(&f->type);
        t->children[k++] = *f;
    }
    t->n_children = k;
}

int s3l__infer_value(const struct s3l_value *values, size_t i, const struct s3l_infer_options *opt,
                    struct s3l_type *out)
{
    return s3l__infer_value_at(values, i, opt, 0, out);
}

int s3l__infer_value_at(const struct s3l_value *values, size_t i,
                        const struct s3l_infer_options *opt, int depth, struct s3l_type *out)
{
    int rc = infer_at(values, i, opt, depth, out);
    if (rc == 0)
        settle(out);
    return rc;
}

static int infer_at(const struct s3l_value *values, size_t i, const struct s3l_infer_options *opt,
                    int depth, struct s3l_type *out)
{
    const struct s3l_value *v = &values[i];
    bool as_json = (opt && opt->nested_as_json) || depth >= MAX_INFER_DEPTH;
    switch (v->kind) {
    case S3L_VALUE_TRUE:
    case S3L_VALUE_FALSE: return set_simple(out, S3L_TYPE_BOOL);
    case S3L_VALUE_NUMBER: {
        int64_t x;
        const char *why;
        double d;
        if ((v->flags & S3L_VALUE_INT) &&
            s3l__parse_int(v->str, v->len, INT64_MIN, INT64_MAX, &x, &why) == 0)
            return set_simple(out, S3L_TYPE_INT64);
        /* A whole number past int64: decimal128(38, 0) up to 38 digits, else text (a double
         * would lose digits, also of the in-range values it would widen). */
        if (v->flags & S3L_VALUE_INT)
            return s3l__int_digits(v->str, v->len) <= 38 ? set_bigint(out)
                                                          : set_simple(out, S3L_TYPE_UTF8);
        /* 1e400 fits no number column; its text fits a string column. */
        if (s3l__parse_double(v->str, v->len, &d, &why) != 0)
            return set_simple(out, S3L_TYPE_UTF8);
        return set_simple(out, S3L_TYPE_FLOAT64);
    }
    case S3L_VALUE_STRING: return string_type(v, opt, out);
    case S3L_VALUE_ARRAY:
        return as_json ? set_simple(out, S3L_TYPE_JSON) : list_type(values, i, opt, depth, out);
    case S3L_VALUE_OBJECT:
        return as_json ? set_simple(out, S3L_TYPE_JSON)
                       : struct_type(values, i, opt, depth, out);
    default: return set_simple(out, (enum s3l_type_id)S3L__TYPE_NONE);
    }
}

struct s3l_infer *s3l_infer_new(const struct s3l_infer_options *opt)
{
    struct s3l_infer *inf = s3l_calloc(1, sizeof(*inf));
    if (inf && opt)
        inf->opt = *opt;
    return inf;
}

void s3l_infer_free(struct s3l_infer *inf)
{
    if (!inf)
        return;
    for (size_t i = 0; i < inf->n; i++) {
        s3l_free(inf->cols[i].name);
        s3l__type_cleanup(&inf->cols[i].type);
    }
    s3l_free(inf->cols);
    s3l_free(inf);
}

static struct col *find_or_add(struct s3l_infer *inf, const struct s3l_value *key, size_t hint)
{
    if (hint < inf->n && inf->cols[hint].name_len == key->len &&
        memcmp(inf->cols[hint].name, key->str, key->len) == 0)
        return &inf->cols[hint];
    for (size_t i = 0; i < inf->n; i++)
        if (inf->cols[i].name_len == key->len && memcmp(inf->cols[i].name, key->str, key->len) == 0)
            return &inf->cols[i];
    if (s3l__array_reserve(&inf->cols, &inf->cap, inf->n + 1, sizeof(*inf->cols), 16))
        return NULL;
    struct col *c = &inf->cols[inf->n];
    memset(c, 0, sizeof(*c));
    if (!(c->name = s3l_strndup(key->str, key->len)))
        return NULL;
    c->name_len = key->len;
    inf->n++;
    return c;
}

int s3l_infer_add(struct s3l_infer *inf, const struct s3l_record *rec)
{
    const struct s3l_value *values = rec->values;
    if (!values || values[0].kind != S3L_VALUE_OBJECT)
        return 0;
    size_t j = 1;
    for (uint32_t k = 0; k < values[0].len; k++) {
        if (values[j].len == 0 || memchr(values[j].str, 0, values[j].len)) {
            j = values[j + 1].end; /* "" or a name with U+0000 cannot be a column: ignored */
            continue;
        }
        struct col *c = find_or_add(inf, &values[j], k);
        if (!c)
            return S3L_ENOMEM;
        struct s3l_type t;
        int rc = infer_at(values, j + 1, &inf->opt, 0, &t); /* settled in s3l_infer_schema */
        if (rc == 0)
            rc = widen_into(&c->type, &t);
        if (rc)
            return rc;
        j = values[j + 1].end;
    }
    inf->count++;
    return 0;
}

size_t s3l_infer_count(const struct s3l_infer *inf)
{
    return inf->count;
}

int s3l_infer_schema(const struct s3l_infer *inf, struct s3l_schema **out)
{
    struct s3l_schema *s = s3l_schema_new();
    if (!s)
        return S3L_ENOMEM;
    for (size_t i = 0; i < inf->n; i++) {
        const struct col *c = &inf->cols[i];
        if (untyped(&c->type))
            continue;
        struct s3l_field f = {.name = c->name, .nullable = true};
        int rc = s3l__type_copy(&f.type, &c->type);
        if (rc == 0) {
            settle(&f.type);
            rc = s3l__schema_add_field(s, &f, NULL);
        }
        s3l__type_cleanup(&f.type);
        if (rc) {
            s3l_schema_free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

size_t s3l_infer_n_pending(const struct s3l_infer *inf)
{
    size_t n = 0;
    for (size_t i = 0; i < inf->n; i++)
        n += untyped(&inf->cols[i].type);
    return n;
}

const char *s3l_infer_pending(const struct s3l_infer *inf, size_t i)
{
    for (size_t k = 0; k < inf->n; k++)
        if (untyped(&inf->cols[k].type) && i-- == 0)
            return inf->cols[k].name;
    return NULL;
}
