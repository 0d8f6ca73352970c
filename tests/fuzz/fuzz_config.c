/*
 * Fuzz target: config documents (src/lib/config). The input is read as YAML and as JSON, with
 * secrets resolved through a lookup whose values are a canary. Whatever the input: the call
 * returns 0 exactly when no problem was recorded; every problem's message names the file and
 * holds its path; no message holds the canary; every valid document has a name and the view of
 * its kind; a config frees cleanly (ASan and UBSan watch the rest).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/s3l.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CANARY "fuzz-CANARY-7d1e"

static int lookup(void *ctx, const char *name, char **value, struct s3l_error *err)
{
    (void)ctx, (void)err;
    if (name[0] == 'M')
        return S3L_ENOT_FOUND;
    *value = s3l_strdup(CANARY);
    return *value ? 0 : S3L_ENOMEM;
}

static void one(const uint8_t *data, size_t size, const char *file)
{
    struct s3l_config *c = NULL;
    if (s3l_config_new(&c) != 0)
        return;
    struct s3l_config_secrets sec = {lookup, NULL};
    struct s3l_config_options opts = {S3L_CONFIG_OPTIONS_VERSION, &sec};
    struct s3l_error err = {0};
    int rc = s3l_config_add_text(c, (const char *)data, size, file, &opts, &err);
    size_t np = s3l_config_problem_count(c);
    if ((rc == 0) != (np == 0) && rc != S3L_ENOMEM)
        abort();
    if (rc != 0 && (!err.message[0] || strstr(err.message, CANARY)))
        abort();
    for (size_t i = 0; i < np; i++) {
        const struct s3l_config_problem *p = s3l_config_problem(c, i);
        if (strncmp(p->message, file, strlen(file)) != 0 || !strstr(p->message, p->path) ||
            strstr(p->message, CANARY) || p->code == 0)
            abort();
    }
    for (size_t i = 0; i < s3l_config_count(c); i++) {
        const struct s3l_config_doc *d = s3l_config_doc(c, i);
        int views = !!d->destination + !!d->pipeline + !!d->sink;
        if (!d->name || views != 1 || d->index == 0)
            abort();
    }
    s3l_config_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size, "fuzz.yaml");
    one(data, size, "fuzz.json");
    return 0;
}
