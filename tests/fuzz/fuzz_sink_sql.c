/*
 * Fuzz target: the sinks' SQL binding (src/lib/config/sql.c, s3l_config_add_sql). Whatever the
 * input: the call returns 0 exactly when no problem was recorded, and then at least one
 * statement was added; a problem is one line "fuzz.sql:LINE:COLUMN: at WORD: ..." (or "... at the
 * end of the text: ...", or a UTF-8 error naming the byte); every document added is a Sink with
 * a name, connector s3, a bucket, and a part_size of 0 (not set) or at least 5 MiB; a config
 * frees cleanly (ASan and UBSan watch the rest).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/s3l.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct s3l_config *c = NULL;
    if (s3l_config_new(&c) != 0)
        return 0;
    struct s3l_error err = {0};
    int rc = s3l_config_add_sql(c, (const char *)data, size, "fuzz.sql", NULL, &err);
    size_t np = s3l_config_problem_count(c);
    if (rc != S3L_ENOMEM && (rc == 0) != (np == 0))
        abort();
    if (rc == 0 && s3l_config_count(c) == 0)
        abort();
    if (rc != 0 && !err.message[0])
        abort();
    for (size_t i = 0; i < np; i++) {
        const char *m = s3l_config_problem(c, i)->message;
        size_t line = 0, col = 0;
        int used = 0;
        if (strncmp(m, "fuzz.sql:", 9) != 0 || strchr(m, '\n'))
            abort();
        if (strstr(m, ": not UTF-8"))
            continue;
        if (sscanf(m + 9, "%zu:%zu: %n", &line, &col, &used) != 2 || used == 0 || line == 0 ||
            col == 0)
            abort();
        if (strncmp(m + 9 + used, "at ", 3) != 0)
            abort();
    }
    for (size_t i = 0; i < s3l_config_count(c); i++) {
        const struct s3l_config_doc *d = s3l_config_doc(c, i);
        if (d->kind != S3L_CONFIG_SINK || !d->sink || !d->name || !d->sink->bucket.value ||
            strcmp(d->sink->connector, "s3") != 0 ||
            (d->sink->part_size != 0 && d->sink->part_size < (5u << 20)))
            abort();
    }
    s3l_config_free(c);
    return 0;
}
