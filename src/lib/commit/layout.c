/*
 * The storage layout of a destination, in one place: every key under URL/_openetl/ and under
 * URL/T/ is built or parsed here and nowhere else (docs/internals/commit.md, "Layout"), together
 * with the rules for the names that go into keys (tables, namespaces, pipeline ids: the store
 * checks only what any key needs, the reserved metadata root is the destination's rule) and the
 * dispositions. The names are the on-disk format of every lake already written (a test keeps one,
 * tests/fixtures/lake-v1): a change here is a format change.
 *
 *   T/<pipeline>-<epoch %020>-g<generation %020>-<file %05><ext>                 lane 0
 *   T/<pipeline>-<epoch %020>-g<generation %020>-<lane %05>-<file %05><ext>      lanes >= 1
 *   _openetl/staging/<pipeline>/g<generation %020>/T/<same file name>
 *   _openetl/markers/T/<pipeline>-<epoch %020>.json
 *   _openetl/schemas/T.json
 *   _openetl/checkpoints/<pipeline>.json
 *   _openetl/deadletter/T/<pipeline>-<epoch %020>-g<generation %020>.ndjson
 *   _openetl/check/                          scratch objects of `s3land check`
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "s3l/store.h"
#include "util/util.h"

#define ROOT        "_openetl"
#define CHECKPOINTS ROOT "/checkpoints/"
#define MARKERS     ROOT "/markers/"
#define SCHEMAS     ROOT "/schemas/"
#define STAGING     ROOT "/staging/"
#define DEADLETTER  ROOT "/deadletter/"
#define SCRATCH     ROOT "/check/"
#define JSON_EXT    ".json"

char *s3l__key_fmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n >= 0 ? s3l_malloc((size_t)n + 1) : NULL;
    if (p) {
        va_start(ap, fmt);
        vsnprintf(p, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return p;
}

/* --- names that go into keys --- */

static int name_check(const char *name, const char *what, struct s3l_error *err)
{
    size_t len = name ? strlen(name) : 0;
    int rc = s3l_name_check(name, len, what, err);
    if (rc == 0 && len == strlen(ROOT) && memcmp(name, ROOT, len) == 0)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "%s name '%s' refused: '" ROOT "' is reserved for the destination's "
                           "metadata",
                           what, name);
    return rc;
}

int s3l_dest_table_path(const char *ns, const char *table, char **out, struct s3l_error *err)
{
    int rc = name_check(table, "table", err);
    if (rc == 0 && ns && *ns)
        rc = name_check(ns, "namespace", err);
    if (rc)
        return rc;
    char *p = ns && *ns ? s3l__key_fmt("%s/%s", ns, table) : s3l_strdup(table);
    if (!p)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory naming table %s", table);
    *out = p;
    return 0;
}

int s3l__pipeline_id_check(const char *p, struct s3l_error *err)
{
    size_t n = p ? strlen(p) : 0;
    bool ok = n >= 1 && n <= 64 && strcmp(p, ".") != 0 && strcmp(p, "..") != 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
             (p[i] >= '0' && p[i] <= '9') || p[i] == '-' || p[i] == '_' || p[i] == '.';
    if (!ok)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "pipeline id '%.80s' refused: expected 1 to 64 of A-Z a-z 0-9 . _ -",
                             p ? p : "");
    return 0;
}

int s3l_dest_check_disposition(const char *disposition, struct s3l_error *err)
{
    if (!disposition || strcmp(disposition, "append") == 0)
        return 0;
    if (strcmp(disposition, "replace") == 0 || strcmp(disposition, "merge") == 0)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "disposition '%s' refused: plain Parquet files on object storage "
                             "cannot be %s atomically (readers would see a mix of old and new "
                             "files); only 'append' is supported, use a table format such as "
                             "Iceberg for %s",
                             disposition, disposition[0] == 'r' ? "replaced" : "merged",
                             disposition);
    return s3l_error_set(err, S3L_EINVALID_CONFIG, "disposition '%s' unknown (expected append)",
                         disposition);
}

const char *s3l_dest_scratch_prefix(void)
{
    return SCRATCH;
}

/* --- file names --- */

int s3l__name_data(char *buf, size_t cap, const char *pipeline, uint64_t epoch, uint64_t gen,
                   unsigned lane, unsigned file, const char *ext)
{
    int n = lane == 0
                ? snprintf(buf, cap, "%s-%020llu-g%020llu-%05u%s", pipeline,
                           (unsigned long long)epoch, (unsigned long long)gen, file, ext)
                : snprintf(buf, cap, "%s-%020llu-g%020llu-%05u-%05u%s", pipeline,
                           (unsigned long long)epoch, (unsigned long long)gen, lane, file, ext);
    return n >= 0 && (size_t)n < cap ? 0 : S3L_ETOO_LARGE;
}

int s3l__name_deadletter(char *buf, size_t cap, const char *pipeline, uint64_t epoch, uint64_t gen)
{
    int n = snprintf(buf, cap, "%s-%020llu-g%020llu.ndjson", pipeline, (unsigned long long)epoch,
                     (unsigned long long)gen);
    return n >= 0 && (size_t)n < cap ? 0 : S3L_ETOO_LARGE;
}

/* --- keys --- */

char *s3l__key_table_prefix(const char *table)
{
    return s3l__key_fmt("%s/", table);
}

char *s3l__key_final(const char *table, const char *name)
{
    return s3l__key_fmt("%s/%s", table, name);
}

char *s3l__key_staging_prefix(const char *pipeline)
{
    return s3l__key_fmt(STAGING "%s/", pipeline);
}

char *s3l__key_staged(const char *pipeline, uint64_t gen, const char *table, const char *name)
{
    return s3l__key_fmt(STAGING "%s/g%020llu/%s/%s", pipeline, (unsigned long long)gen, table,
                        name);
}

bool s3l__key_staged_generation(const char *key, const char *pipeline, uint64_t *gen)
{
    size_t pl = strlen(pipeline);
    if (strncmp(key, STAGING, strlen(STAGING)) != 0)
        return false;
    key += strlen(STAGING);
    if (strncmp(key, pipeline, pl) != 0 || key[pl] != '/' || key[pl + 1] != 'g')
        return false;
    unsigned long long g = 0;
    if (sscanf(key + pl + 2, "%20llu", &g) != 1)
        return false;
    *gen = g;
    return true;
}

bool s3l__key_staged_parse(const char *key, char *pipeline, size_t cap, uint64_t *gen)
{
    if (strncmp(key, STAGING, strlen(STAGING)) != 0)
        return false;
    const char *p = key + strlen(STAGING), *slash = strchr(p, '/');
    if (!slash || (size_t)(slash - p) >= cap || slash == p)
        return false;
    memcpy(pipeline, p, (size_t)(slash - p));
    pipeline[slash - p] = '\0';
    return s3l__pipeline_id_check(pipeline, NULL) == 0 &&
           s3l__key_staged_generation(key, pipeline, gen);
}

int s3l__key_staged_table(const char *key, const char *pipeline, char **table)
{
    uint64_t gen = 0;
    *table = NULL;
    if (!s3l__key_staged_generation(key, pipeline, &gen))
        return 0;
    /* _openetl/staging/<pipeline>/g<gen %020>/T/<name>: T is all between the generation and the
     * last '/'. */
    const char *t = key + strlen(STAGING) + strlen(pipeline) + 1 + 1 + 20 + 1;
    const char *last = strrchr(key, '/');
    if ((size_t)(t - key) > strlen(key) || t[-1] != '/' || last <= t)
        return 0;
    *table = s3l_strndup(t, (size_t)(last - t));
    return *table ? 1 : S3L_ENOMEM;
}

char *s3l__key_deadletter(const char *table, const char *name)
{
    return s3l__key_fmt(DEADLETTER "%s/%s", table, name);
}

char *s3l__key_marker(const char *table, const char *pipeline, uint64_t epoch)
{
    return s3l__key_fmt(MARKERS "%s/%s-%020llu" JSON_EXT, table, pipeline,
                        (unsigned long long)epoch);
}

char *s3l__key_markers_prefix(const char *table)
{
    return s3l__key_fmt(MARKERS "%s/", table);
}

bool s3l__key_marker_parse(const char *key, const char *table, char *pipeline, size_t cap,
                           uint64_t *epoch)
{
    size_t tl = strlen(table), ml = strlen(MARKERS);
    if (strncmp(key, MARKERS, ml) != 0 || strncmp(key + ml, table, tl) != 0 || key[ml + tl] != '/')
        return false;
    const char *name = key + ml + tl + 1;
    size_t n = strlen(name), tail = 1 + 20 + strlen(JSON_EXT); /* "-<epoch %020>.json" */
    if (n <= tail || memchr(name, '/', n) || name[n - tail] != '-' ||
        strcmp(name + n - strlen(JSON_EXT), JSON_EXT) != 0 || n - tail >= cap)
        return false;
    unsigned long long e = 0;
    for (size_t i = n - tail + 1; i < n - strlen(JSON_EXT); i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        e = e * 10 + (unsigned)(name[i] - '0');
    }
    memcpy(pipeline, name, n - tail);
    pipeline[n - tail] = 0;
    *epoch = e;
    return true;
}

char *s3l__key_schema(const char *table)
{
    return s3l__key_fmt(SCHEMAS "%s" JSON_EXT, table);
}

char *s3l__key_url(struct s3l_store *s, const char *key)
{
    return s3l__key_fmt("%s/%s", s3l_store_url(s), key);
}

const char *s3l__key_schemas_prefix(void)
{
    return SCHEMAS;
}

char *s3l__key_schemas_under(const char *table)
{
    return s3l__key_fmt(SCHEMAS "%s/", table);
}

int s3l__key_schema_parse(const char *key, char **table)
{
    size_t sl = strlen(SCHEMAS), el = strlen(JSON_EXT);
    *table = NULL;
    if (strncmp(key, SCHEMAS, sl) != 0)
        return 0;
    const char *rest = key + sl;
    size_t n = strlen(rest);
    if (n <= el || strcmp(rest + n - el, JSON_EXT) != 0)
        return 0;
    *table = s3l_strndup(rest, n - el);
    return *table ? 1 : S3L_ENOMEM;
}

char *s3l__key_checkpoint(const char *pipeline)
{
    return s3l__key_fmt(CHECKPOINTS "%s" JSON_EXT, pipeline);
}

const char *s3l__key_checkpoints_prefix(void)
{
    return CHECKPOINTS;
}

bool s3l__key_checkpoint_parse(const char *key, char *pipeline, size_t cap)
{
    size_t cl = strlen(CHECKPOINTS), el = strlen(JSON_EXT);
    if (strncmp(key, CHECKPOINTS, cl) != 0)
        return false;
    const char *name = key + cl;
    size_t n = strlen(name);
    if (n <= el || strcmp(name + n - el, JSON_EXT) != 0 || memchr(name, '/', n) || n - el >= cap)
        return false;
    memcpy(pipeline, name, n - el);
    pipeline[n - el] = 0;
    return true;
}
