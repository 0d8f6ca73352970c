/*
 * Schemas as lists of top-level columns: construction, copies, lookup, and the JSON form that
 * both the declared-schema file (--schema FILE) and the schema record (URL/_openetl/schemas/T.json)
 * use: [{"name": "ts", "type": "timestamp[us, tz=UTC]", "nullable": true, "key": false}, ...].
 * JSON goes through jansson: these documents are small and off the hot path.
 */
#include <jansson.h>
#include <string.h>

#include "schema/schema_int.h"

struct s3l_schema *s3l_schema_new(void)
{
    return s3l_calloc(1, sizeof(struct s3l_schema));
}

void s3l_schema_free(struct s3l_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_fields; i++)
        s3l__field_cleanup(&s->fields[i]);
    s3l_free(s->fields);
    s3l_free(s);
}

struct s3l_schema *s3l_schema_copy(const struct s3l_schema *s)
{
    struct s3l_schema *c = s3l_schema_new();
    if (!c)
        return NULL;
    if (s->n_fields) {
        c->fields = s3l_calloc(s->n_fields, sizeof(*c->fields));
        if (!c->fields) {
            s3l_free(c);
            return NULL;
        }
        for (size_t i = 0; i < s->n_fields; i++) {
            if (s3l__field_copy(&c->fields[i], &s->fields[i]) != 0) {
                s3l_schema_free(c);
                return NULL;
            }
            c->n_fields = i + 1;
        }
    }
    return c;
}

int s3l_schema_find(const struct s3l_schema *s, const char *name, size_t name_len)
{
    for (size_t i = 0; i < s->n_fields; i++) {
        const char *n = s->fields[i].name;
        if (strlen(n) == name_len && memcmp(n, name, name_len) == 0)
            return (int)i;
    }
    return -1;
}

int s3l__schema_add_field(struct s3l_schema *s, const struct s3l_field *f, struct s3l_error *err)
{
    if (s3l_schema_find(s, f->name, strlen(f->name)) >= 0)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "column \"%s\" is already in the schema",
                             f->name);
    struct s3l_field *nf = s3l_realloc(s->fields, (s->n_fields + 1) * sizeof(*nf));
    if (!nf)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory adding column \"%s\"", f->name);
    s->fields = nf;
    if (s3l__field_copy(&s->fields[s->n_fields], f) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory adding column \"%s\"", f->name);
    s->n_fields++;
    return 0;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static int column_from_json(json_t *col, size_t index, struct s3l_field *f, struct s3l_error *err)
{
    if (!json_is_object(col))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "schema column %zu: expected an object {\"name\", \"type\"}", index);
    json_t *name = json_object_get(col, "name");
    json_t *type = json_object_get(col, "type");
    json_t *nullable = json_object_get(col, "nullable");
    json_t *key = json_object_get(col, "key");
    if (!json_is_string(name) || json_string_length(name) == 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "schema column %zu: \"name\" must be a non-empty string", index);
    const char *nm = json_string_value(name);
    if (strlen(nm) != json_string_length(name))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "schema column %zu: \"name\" holds a NUL character", index);
    if (!json_is_string(type))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "schema column %zu (\"%s\"): \"type\" must be a string", index, nm);
    if ((nullable && !json_is_boolean(nullable)) || (key && !json_is_boolean(key)))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "schema column %zu (\"%s\"): \"nullable\" and \"key\" must be "
                             "true or false", index, nm);
    const char *k;
    json_t *v;
    json_object_foreach(col, k, v)
    {
        if (strcmp(k, "name") && strcmp(k, "type") && strcmp(k, "nullable") && strcmp(k, "key"))
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "schema column %zu (\"%s\"): unknown member \"%s\" (expected "
                                 "name, type, nullable, key)", index, nm, k);
    }
    memset(f, 0, sizeof(*f));
    f->key = key && json_is_true(key);
    f->nullable = nullable ? json_is_true(nullable) : !f->key;
    if (f->key && f->nullable)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "schema column %zu (\"%s\"): a key column cannot be nullable", index,
                             nm);
    int rc = s3l__type_parse(json_string_value(type), json_string_length(type), &f->type, err);
    if (rc)
        return s3l_error_prefix(err, "schema column %zu (\"%s\")", index, nm);
    if (!(f->name = s3l_strdup(nm))) {
        s3l__type_cleanup(&f->type);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the schema");
    }
    return 0;
}

int s3l_schema_from_json(const char *json, size_t len, struct s3l_schema **out,
                         struct s3l_error *err)
{
    json_error_t jerr;
    bool nomem;
    json_t *root = s3l__json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr, &nomem);
    if (nomem)
        return s3l_error_set(err, S3L_ENOMEM, "schema: out of memory");
    if (!root)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "schema: line %d, column %d: %s",
                             jerr.line, jerr.column, jerr.text);
    json_t *cols = json_is_object(root) ? json_object_get(root, "columns") : root;
    int rc = 0;
    struct s3l_schema *s = NULL;
    if (!json_is_array(cols)) {
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "schema: expected a list of columns [{\"name\", \"type\"}, ...]");
        goto done;
    }
    if (!(s = s3l_schema_new())) {
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading the schema");
        goto done;
    }
    size_t n = json_array_size(cols);
    if (n && !(s->fields = s3l_calloc(n, sizeof(*s->fields)))) {
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading the schema");
        goto done;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = column_from_json(json_array_get(cols, i), i, &s->fields[i], err);
        if (rc)
            break;
        s->n_fields = i + 1;
        const char *nm = s->fields[i].name;
        if (s3l_schema_find(s, nm, strlen(nm)) != (int)i)
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                               "schema column %zu: the name \"%s\" is used twice", i, nm);
    }
done:
    json_decref(root);
    if (rc) {
        s3l_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int s3l_schema_to_json(const struct s3l_schema *s, char **out, size_t *out_len)
{
    struct s3l_buf b;
    s3l_buf_init(&b, SIZE_MAX / 2);
    int rc = s3l_buf_append_str(&b, "[");
    for (size_t i = 0; i < s->n_fields && rc == 0; i++) {
        const struct s3l_field *f = &s->fields[i];
        size_t need = s3l__type_format(&f->type, NULL, 0);
        char *tn = s3l_malloc(need + 1);
        if (!tn) {
            rc = S3L_ENOMEM;
            break;
        }
        s3l__type_format(&f->type, tn, need + 1);
        json_t *o = json_pack("{s:s, s:s, s:b, s:b}", "name", f->name, "type", tn, "nullable",
                              (int)f->nullable, "key", (int)f->key);
        s3l_free(tn);
        char *text = o ? s3l__json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!text) {
            rc = S3L_ENOMEM;
            break;
        }
        rc = s3l_buf_printf(&b, "%s\n  %s", i ? "," : "", text);
        s3l_free(text); /* jansson's allocation */
    }
    if (rc == 0)
        rc = s3l_buf_append_str(&b, s->n_fields ? "\n]\n" : "]\n");
    if (rc == 0)
        rc = s3l_buf_detach(&b, (uint8_t **)out, out_len);
    if (rc) {
        s3l_buf_free(&b);
        return S3L_ENOMEM;
    }
    return 0;
}

size_t s3l_schema_n_fields(const struct s3l_schema *s)
{
    return s->n_fields;
}

const struct s3l_field *s3l_schema_field(const struct s3l_schema *s, size_t i)
{
    return &s->fields[i];
}

int s3l_schema_add_column(struct s3l_schema *s, const char *name, const char *type, bool nullable,
                          bool key, struct s3l_error *err)
{
    if (!name || !*name)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "a column needs a non-empty name");
    if (!type || !*type)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "column \"%s\": no type given", name);
    if (key && nullable)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "column \"%s\": a key column cannot be nullable", name);
    struct s3l_field f = {0};
    f.name = (char *)name; /* borrowed: s3l__schema_add_field copies the field */
    f.nullable = nullable;
    f.key = key;
    int rc = s3l__type_parse(type, strlen(type), &f.type, err);
    if (rc)
        return s3l_error_prefix(err, "column \"%s\"", name);
    rc = s3l__schema_add_field(s, &f, err);
    s3l__type_cleanup(&f.type);
    return rc;
}

const char *s3l_field_name(const struct s3l_field *f)
{
    return f->name;
}

bool s3l_field_nullable(const struct s3l_field *f)
{
    return f->nullable;
}

bool s3l_field_key(const struct s3l_field *f)
{
    return f->key;
}

enum s3l_type_id s3l_field_type_id(const struct s3l_field *f)
{
    return f->type.id;
}

size_t s3l_field_type_name(const struct s3l_field *f, char *out, size_t cap)
{
    return s3l__type_format(&f->type, out, cap);
}
