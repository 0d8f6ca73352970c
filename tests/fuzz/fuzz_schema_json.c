/*
 * Fuzz target: declared-schema JSON and Arrow type names. A schema that parses must serialise,
 * parse back and print identically (a fixed point); a type name that parses must print a name
 * that parses back to an equal type. Failures must carry a message. Merging a parsed schema with
 * itself must change nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void schema_round_trip(const char *text, size_t size)
{
    struct s3l_schema *s = NULL, *back = NULL, *m = NULL;
    struct s3l_error err = {0};
    if (s3l_schema_from_json(text, size, &s, &err) != 0) {
        if (!err.message[0])
            abort();
        return;
    }
    char *j1, *j2;
    size_t n1, n2;
    if (s3l_schema_to_json(s, &j1, &n1) != 0)
        abort();
    if (s3l_schema_from_json(j1, n1, &back, &err) != 0) {
        fprintf(stderr, "re-parse failed: %s\n%s\n", err.message, j1);
        abort();
    }
    if (s3l_schema_to_json(back, &j2, &n2) != 0 || n1 != n2 || memcmp(j1, j2, n1) != 0)
        abort();
    bool changed = true;
    if (s3l_schema_merge(s, back, NULL, &m, &changed, &err) != 0 || changed)
        abort();
    s3l_free(j1);
    s3l_free(j2);
    s3l_schema_free(m);
    s3l_schema_free(back);
    s3l_schema_free(s);
}

static void type_round_trip(const char *text, size_t size)
{
    struct s3l_type t, u;
    struct s3l_error err = {0};
    if (s3l__type_parse(text, size, &t, &err) != 0) {
        if (!err.message[0])
            abort();
        return;
    }
    size_t need = s3l__type_format(&t, NULL, 0);
    char *name = malloc(need + 1);
    s3l__type_format(&t, name, need + 1);
    s3l_error_clear(&err);
    if (s3l__type_parse(name, need, &u, &err) != 0) {
        fprintf(stderr, "printed type does not parse: %s: %s\n", name, err.message);
        abort();
    }
    if (!s3l__type_equal(&t, &u))
        abort();
    struct s3l_type w;
    if (s3l__type_widen(&t, &u, &w) != 0 || !s3l__type_equal(&w, &t))
        abort();
    s3l__type_cleanup(&w);
    free(name);
    s3l__type_cleanup(&u);
    s3l__type_cleanup(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    schema_round_trip((const char *)data, size);
    type_round_trip((const char *)data, size);
    return 0;
}
