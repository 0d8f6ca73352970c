/*
 * Type compatibility between inferred values and a table's schema record: which inferred types
 * go into a recorded column without loss (so the recorded type is kept and no type change is
 * reported), and the schema an inference sample gives against a record (the recorded columns
 * first, with their recorded types where the sample fits them, then the new columns). The
 * runner (src/lib/pipeline) uses these when it infers a schema for a table that has a record;
 * a column whose type does not fit is left for s3l_schema_merge to report as drift.
 */
#include <string.h>

#include "schema_int.h"

static bool is_int(enum s3l_type_id id)
{
    return id >= S3L_TYPE_INT8 && id <= S3L_TYPE_UINT64;
}

/* Whether values inferred as the primitive type id go into a string column as the converter
 * writes them: text keeps its characters (a JSON string, whatever it looks like: a date, a
 * timestamp) and a JSON number keeps its text; a JSON true or false is not text. From CSV every
 * value is text. */
static bool fits_string(enum s3l_type_id id, bool text)
{
    if (id == S3L_TYPE_LIST || id == S3L_TYPE_STRUCT || id == S3L_TYPE_MAP || id == S3L_TYPE_JSON)
        return false;
    return text || id != S3L_TYPE_BOOL;
}

bool s3l__type_fits(const struct s3l_type *in, const struct s3l_type *rec, bool text)
{
    if (in->id == S3L__TYPE_NONE || rec->id == S3L_TYPE_JSON || s3l__type_equal(in, rec))
        return true;
    if (rec->id == S3L_TYPE_UTF8)
        return fits_string(in->id, text);
    if (is_int(in->id))
        return is_int(rec->id) || rec->id == S3L_TYPE_FLOAT32 || rec->id == S3L_TYPE_FLOAT64 ||
               rec->id == S3L_TYPE_DECIMAL128;
    if (in->id == S3L_TYPE_FLOAT32 || in->id == S3L_TYPE_FLOAT64)
        return rec->id == S3L_TYPE_FLOAT64;
    if (in->id == S3L_TYPE_DATE32 || in->id == S3L_TYPE_TIMESTAMP)
        return rec->id == S3L_TYPE_TIMESTAMP;
    if (in->id != rec->id)
        return false;
    if (in->id == S3L_TYPE_STRUCT) {
        /* Children only one side has are schema growth, not a change. */
        for (size_t i = 0; i < in->n_children; i++)
            for (size_t j = 0; j < rec->n_children; j++)
                if (strcmp(in->children[i].name, rec->children[j].name) == 0 &&
                    !s3l__type_fits(&in->children[i].type, &rec->children[j].type, text))
                    return false;
        return true;
    }
    if ((in->id == S3L_TYPE_LIST || in->id == S3L_TYPE_MAP) && in->n_children == rec->n_children) {
        for (size_t i = 0; i < in->n_children; i++)
            if (!s3l__type_fits(&in->children[i].type, &rec->children[i].type, text))
                return false;
        return true;
    }
    return false;
}

int s3l__schema_fit_sample(struct s3l_schema *rec, const struct s3l_schema *inferred, bool text,
                           struct s3l_error *err)
{
    for (size_t i = 0; i < inferred->n_fields; i++) {
        const struct s3l_field *f = &inferred->fields[i];
        int k = s3l_schema_find(rec, f->name, strlen(f->name));
        if (k < 0) {
            int rc = s3l__schema_add_field(rec, f, err);
            if (rc)
                return rc;
            continue;
        }
        if (s3l__type_fits(&f->type, &rec->fields[k].type, text))
            continue;
        struct s3l_type t;
        if (s3l__type_copy(&t, &f->type) != 0)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory copying the type of column %s",
                                 f->name);
        s3l__type_cleanup(&rec->fields[k].type);
        rec->fields[k].type = t;
        rec->fields[k].nullable = rec->fields[k].nullable || f->nullable;
    }
    return 0;
}
