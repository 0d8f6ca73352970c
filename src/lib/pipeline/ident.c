/*
 * The identity of an at_least_once source's rows (issue 12, item 6: "Sources declared
 * at_least_once get _openetl_id too, so readers drop repeats by it"). A source that may send a
 * record again (after a restart, from before its last acknowledged position) sends it with the
 * same source position, wherever it lands in the input; its kind names the record fields that
 * hold that position (struct s3l_source_kind.position_fields). Each record of such a source gets
 * one more member, `_openetl_id`: a UUID v5 (RFC 4122 section 4.3, libuuid's uuid_generate_sha1)
 * in the namespace S3L__IDENT_NAMESPACE over
 *
 *     "<table path>\n" then, per position field in the kind's order, "<name>=<n>:<bytes>\n"
 *
 * where bytes is the value's text (a string decoded, a number as written) and n its length in
 * bytes (so a value holding a line feed cannot pass for two fields). A record sent twice gets
 * the same id, two records at other positions different ones. The column is the type the
 * Debezium format gives its `_openetl_id` (uuid: Arrow's arrow.uuid extension, Parquet's
 * FIXED_LEN_BYTE_ARRAY(16) with the UUID logical type). Exactly-once sources never come here.
 */
#include <stdio.h>
#include <string.h>
#include <uuid/uuid.h>

#include "runner.h"
#include "s3l/input.h"
#include "s3l/schema.h"
#include "schema/schema_int.h"

typedef unsigned long long ull;

const struct s3l_source_kind *s3l__ident_kind(const struct s3l_pipeline_options *src)
{
    const struct s3l_source_kind *k = src && src->kind ? s3l_source_kind_find(src->kind) : NULL;
    return k && k->delivery == S3L_DELIVERY_AT_LEAST_ONCE ? k : NULL;
}

int s3l__ident_schema(struct s3l_schema *s, const char *table, struct s3l_error *err)
{
    int at = s3l_schema_find(s, S3L__IDENT_COLUMN, strlen(S3L__IDENT_COLUMN));
    if (at >= 0) {
        if (s->fields[at].type.id == S3L_TYPE_UUID)
            return 0;
        char type[128];
        s3l__type_format(&s->fields[at].type, type, sizeof(type));
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "table %s: the schema declares column %s as %s, but the rows of an "
                             "at_least_once source carry their id there as uuid; declare it "
                             "uuid or leave it out (it is added)", table, S3L__IDENT_COLUMN,
                             type);
    }
    struct s3l_field f = {0};
    f.name = (char *)S3L__IDENT_COLUMN;
    f.nullable = true;
    int rc = s3l__type_parse("uuid", 4, &f.type, NULL);
    if (rc == 0)
        rc = s3l__schema_add_field(s, &f, NULL);
    s3l__type_cleanup(&f.type);
    if (rc)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory adding %s to table %s",
                             S3L__IDENT_COLUMN, table);
    return 0;
}

void s3l__ident_init(struct s3l__ident *id, const struct s3l_pipeline_options *src,
                     const char *table)
{
    memset(id, 0, sizeof(*id));
    if (!(id->kind = s3l__ident_kind(src)))
        return;
    id->table = table;
    id->source = src->source_name ? src->source_name : src->table;
    s3l_buf_init(&id->name, 2 * src->max_record_size + 4096);
}

void s3l__ident_cleanup(struct s3l__ident *id)
{
    s3l_free(id->tape);
    s3l_buf_free(&id->name);
    memset(id, 0, sizeof(*id));
}

/* The index of the top-level member named name in rec's object, or 0. */
static size_t member(const struct s3l_record *rec, const char *name)
{
    const struct s3l_value *v = rec->values;
    size_t len = strlen(name);
    for (size_t i = 1; i < v[0].end; i = v[i + 1].end)
        if (v[i].len == len && memcmp(v[i].str, name, len) == 0)
            return i + 1;
    return 0;
}

/* A bad record: its line and byte offset, the source and what was expected. */
static int bad(const struct s3l__ident *id, const struct s3l_record *rec, uint32_t pos,
               const char *what, struct s3l_error *err)
{
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s line %llu, column %llu (byte offset %llu): a record of source %s "
                         "(kind %s, at_least_once) %s",
                         rec->source ? rec->source : "input", (ull)rec->line, (ull)pos + 1,
                         (ull)(rec->offset + pos), id->source, id->kind->name, what);
}

int s3l__ident_add(struct s3l__ident *id, const struct s3l_record *rec, struct s3l_record *out,
                   struct s3l_error *err)
{
    const struct s3l_value *v = rec->values;
    if (!v || rec->n_values == 0 || v[0].kind != S3L_VALUE_OBJECT)
        return bad(id, rec, 0, "is not an object", err);
    if (member(rec, S3L__IDENT_COLUMN))
        return bad(id, rec, v[member(rec, S3L__IDENT_COLUMN) - 1].pos,
                   "has a member named " S3L__IDENT_COLUMN ": that column is the one the "
                   "pipeline adds, the record's id", err);
    struct s3l_buf *b = &id->name;
    s3l_buf_reset(b);
    int rc = s3l_buf_append_str(b, id->table) || s3l_buf_append_byte(b, '\n') ? S3L_ENOMEM : 0;
    for (const char *const *f = id->kind->position_fields; rc == 0 && *f; f++) {
        size_t at = member(rec, *f);
        if (!at || (v[at].kind != S3L_VALUE_STRING && v[at].kind != S3L_VALUE_NUMBER)) {
            char what[300];
            snprintf(what, sizeof(what),
                     "has no position in member \"%.100s\": expected a string or a number "
                     "there (%s), the source position that names the record so that a record "
                     "sent again gets the same " S3L__IDENT_COLUMN, *f,
                     at ? "not a string or a number" : "missing");
            return bad(id, rec, at ? v[at].pos : 0, what, err);
        }
        char head[32];
        int n = snprintf(head, sizeof(head), "=%u:", (unsigned)v[at].len);
        if (s3l_buf_append_str(b, *f) || s3l_buf_append(b, head, (size_t)n) ||
            s3l_buf_append(b, v[at].str, v[at].len) || s3l_buf_append_byte(b, '\n'))
            rc = S3L_ENOMEM;
    }
    /* The record's tape with the member appended to its top-level object. */
    size_t n = rec->n_values;
    if (rc == 0 && id->cap < n + 2) /* from empty: room for twice the record's tape */
        rc = s3l__array_reserve(&id->tape, &id->cap, n + 2, sizeof(*id->tape), (n + 2) * 2);
    if (rc)
        return s3l_error_set(err, S3L_ENOMEM, "%s line %llu: out of memory", rec->source,
                             (ull)rec->line);
    uuid_t ns, u;
    if (uuid_parse(S3L__IDENT_NAMESPACE, ns) != 0)
        return s3l_error_set(err, S3L_EINTERNAL, "bad namespace uuid");
    uuid_generate_sha1(u, ns, (const char *)b->ptr, b->len);
    uuid_unparse_lower(u, id->text);
    memcpy(id->tape, v, n * sizeof(*v));
    /* The tape holds values[0]'s subtree (its end) and nothing after it. */
    n = v[0].end;
    uint32_t pos = (uint32_t)rec->raw_len;
    id->tape[n] = (struct s3l_value){S3L_VALUE_STRING, 0, (uint32_t)strlen(S3L__IDENT_COLUMN),
                                     (uint32_t)n + 1, pos, S3L__IDENT_COLUMN};
    id->tape[n + 1] = (struct s3l_value){S3L_VALUE_STRING, 0, 36, (uint32_t)n + 2, pos, id->text};
    id->tape[0].len++;
    id->tape[0].end = (uint32_t)n + 2;
    *out = *rec;
    out->values = id->tape;
    out->n_values = n + 2;
    return 1;
}
