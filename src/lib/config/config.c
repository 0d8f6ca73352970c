/*
 * The config object: documents added from text or files, each parsed (yaml.c), checked against
 * the schema of its kind (validate.c), its secrets resolved through the caller's lookup and
 * checked again, then turned into its typed view (extract.c). An invalid document becomes a
 * problem naming file, document index and path; the valid ones stay. Secret values live in
 * buffers of their own that are wiped when the config is freed.
 */
#include <stdio.h>
#include <string.h>

#include "config/config_int.h"
#include "os/os.h"

#define MAX_FILE_SIZE (16u << 20)

struct s3l_config {
    struct s3l_arena arena; /* views, their strings, problems */
    struct s3l_config_doc **docs;
    size_t n_docs, cap_docs;
    struct s3l_config_problem *problems;
    size_t n_problems, cap_problems;
    struct s3l__cfg_secret *secrets;
    size_t n_secrets, cap_secrets;
    json_t *schemas[3];
};

int s3l_config_new(struct s3l_config **out)
{
    struct s3l_config *c = s3l_calloc(1, sizeof(*c));
    if (!c)
        return S3L_ENOMEM;
    s3l_arena_init(&c->arena, 16 * 1024);
    *out = c;
    return 0;
}

static void wipe(char *s)
{
    if (!s)
        return;
    /* volatile: the compiler may not drop the stores to memory that is freed next. */
    volatile char *p = s;
    while (*p)
        *p++ = 0;
}

void s3l_config_free(struct s3l_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_secrets; i++) {
        wipe(c->secrets[i].value);
        s3l_free(c->secrets[i].value);
        s3l_free(c->secrets[i].name);
    }
    s3l_free(c->secrets);
    for (size_t i = 0; i < 3; i++)
        json_decref(c->schemas[i]);
    s3l_free(c->docs);
    s3l_free(c->problems);
    s3l_arena_free(&c->arena);
    s3l_free(c);
}

size_t s3l_config_count(const struct s3l_config *c) { return c->n_docs; }

const struct s3l_config_doc *s3l_config_doc(const struct s3l_config *c, size_t i)
{
    return i < c->n_docs ? c->docs[i] : NULL;
}

const struct s3l_config_doc *s3l_config_find(const struct s3l_config *c, enum s3l_config_kind kind,
                                             const char *name)
{
    for (size_t i = 0; i < c->n_docs; i++)
        if (c->docs[i]->kind == kind && strcmp(c->docs[i]->name, name) == 0)
            return c->docs[i];
    return NULL;
}

size_t s3l_config_problem_count(const struct s3l_config *c) { return c->n_problems; }

const struct s3l_config_problem *s3l_config_problem(const struct s3l_config *c, size_t i)
{
    return i < c->n_problems ? &c->problems[i] : NULL;
}

const char *s3l_config_schema(enum s3l_config_kind kind, size_t *len)
{
    switch (kind) {
    case S3L_CONFIG_DESTINATION:
        *len = s3l__config_schema_destination_len;
        return s3l__config_schema_destination;
    case S3L_CONFIG_PIPELINE:
        *len = s3l__config_schema_pipeline_len;
        return s3l__config_schema_pipeline;
    case S3L_CONFIG_SINK:
        *len = s3l__config_schema_sink_len;
        return s3l__config_schema_sink;
    }
    return NULL;
}

const char *s3l_config_check_name(enum s3l_config_check check)
{
    static const char *const names[] = {"read", "syntax", "schema", "references", "secrets"};
    return check >= S3L_CONFIG_CHECK_READ && check <= S3L_CONFIG_CHECK_SECRETS ? names[check - 1]
                                                                              : "unknown";
}

enum s3l_config_kind s3l_config_kind_from_name(const char *name)
{
    static const char *const names[] = {"destination", "pipeline", "sink"};
    for (int i = 0; i < 3; i++)
        if (name && strcmp(name, names[i]) == 0)
            return (enum s3l_config_kind)(i + 1);
    return 0;
}

/* The compiled-in schema of kind, parsed once per config. */
static int schema_of(struct s3l_config *c, enum s3l_config_kind kind, json_t **out)
{
    if (!c->schemas[kind - 1]) {
        size_t len;
        const char *text = s3l_config_schema(kind, &len);
        json_error_t je;
        bool nomem;
        c->schemas[kind - 1] = s3l__json_loadb(text, len, 0, &je, &nomem);
        if (!c->schemas[kind - 1])
            return nomem ? S3L_ENOMEM : S3L_EINTERNAL;
    }
    *out = c->schemas[kind - 1];
    return 0;
}

/* Records a problem whose whole message is msg. Returns code. */
int s3l__cfg_add_problem_msg(struct s3l_config *c, const char *file, size_t index,
                             const char *path, const char *msg, int code,
                             enum s3l_config_check check, struct s3l_error *err)
{
    s3l_error_set(err, code, "%s", msg);
    if (s3l__array_reserve(&c->problems, &c->cap_problems, c->n_problems + 1,
                           sizeof(*c->problems), 8))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory recording a problem of %s", file);
    struct s3l_config_problem *p = &c->problems[c->n_problems];
    p->file = s3l_arena_strndup(&c->arena, file, strlen(file));
    p->path = s3l_arena_strndup(&c->arena, path, strlen(path));
    p->message = s3l_arena_strndup(&c->arena, msg, strlen(msg));
    p->index = index;
    p->code = code;
    p->check = check;
    if (!p->file || !p->path || !p->message)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory recording a problem of %s", file);
    c->n_problems++;
    return code;
}

/* Records a problem; its message is "FILE (document N): PATH: TEXT". Returns code. */
static int add_problem(struct s3l_config *c, const char *file, size_t index, const char *path,
                       const char *text, int code, enum s3l_config_check check,
                       struct s3l_error *err)
{
    char msg[S3L_ERROR_MESSAGE_MAX];
    char where[64] = "";
    if (index)
        snprintf(where, sizeof(where), " (document %zu)", index);
    /* A message is one line: a long one is cut (the return value checked, so -O3's truncation
     * warning knows it is meant). */
    if (snprintf(msg, sizeof(msg), "%s%s: %s%s%s", file, where, path, *path ? ": " : "", text) < 0)
        msg[0] = 0;
    return s3l__cfg_add_problem_msg(c, file, index, path, msg, code, check, err);
}

static const struct s3l__cfg_secret *secret_named(const struct s3l_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_secrets; i++)
        if (strcmp(c->secrets[i].name, name) == 0)
            return &c->secrets[i];
    return NULL;
}

/* Keeps a secret's name and value (value NULL: not resolved). Takes value over. */
static int keep_secret(struct s3l_config *c, const char *name, char *value)
{
    if (s3l__array_reserve(&c->secrets, &c->cap_secrets, c->n_secrets + 1, sizeof(*c->secrets),
                           8))
        goto nomem;
    char *n = s3l_strdup(name);
    if (!n)
        goto nomem;
    c->secrets[c->n_secrets].name = n;
    c->secrets[c->n_secrets++].value = value;
    return 0;
nomem:
    wipe(value);
    s3l_free(value);
    return S3L_ENOMEM;
}

/* The secret references found in a document: where, and which secret. */
struct refs {
    struct s3l__cfg_redact *v;
    char (*paths)[S3L__CFG_PATH_MAX];
    size_t n, cap;
};

static void refs_free(struct refs *r)
{
    s3l_free(r->v);
    s3l_free(r->paths);
}

/* Collects every { secret: NAME } under node (the schema allows them only in spec.config). */
static int find_refs(json_t *node, char *path, size_t plen, struct refs *r)
{
    if (json_is_object(node) && json_object_size(node) == 1 &&
        json_is_string(json_object_get(node, "secret"))) {
        /* Two arrays of one capacity: each grows from a copy of it, kept when both did. */
        size_t cv = r->cap, cp = r->cap;
        if (s3l__array_reserve(&r->v, &cv, r->n + 1, sizeof(*r->v), 8) ||
            s3l__array_reserve(&r->paths, &cp, r->n + 1, sizeof(*r->paths), 8))
            return S3L_ENOMEM;
        r->cap = cv;
        snprintf(r->paths[r->n], S3L__CFG_PATH_MAX, "%s", path);
        r->v[r->n].secret = json_string_value(json_object_get(node, "secret"));
        r->n++;
        return 0;
    }
    const char *k;
    json_t *x;
    json_object_foreach(node, k, x) {
        size_t l = plen;
        s3l__cfg_path_key(path, S3L__CFG_PATH_MAX, &l, k);
        int rc = find_refs(x, path, l, r);
        path[plen] = 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Looks up every referenced secret once; fills v for a missing one. Returns 0, 1 or a code. */
static int resolve_refs(struct s3l_config *c, const struct s3l_config_secrets *sec,
                        const struct refs *r, struct s3l__cfg_verdict *v, int *code)
{
    for (size_t i = 0; i < r->n; i++) {
        const char *name = r->v[i].secret;
        if (secret_named(c, name))
            continue;
        char *value = NULL;
        struct s3l_error e = {0};
        int rc = sec ? sec->lookup(sec->ctx, name, &value, &e) : 0;
        if (rc == S3L_ENOMEM)
            return rc;
        if (rc != 0 || (sec && !value)) {
            snprintf(v->path, sizeof(v->path), "%s", r->v[i].path);
            snprintf(v->text, sizeof(v->text), "secret %s %s%s%.300s", name,
                     rc == S3L_ENOT_FOUND || rc == 0 ? "not found" : "could not be read",
                     e.message[0] ? ": " : "", e.message);
            *code = rc == S3L_ENOT_FOUND || rc == 0 ? S3L_EINVALID_CONFIG : rc;
            wipe(value);
            s3l_free(value);
            return 1;
        }
        if ((rc = keep_secret(c, name, value)) != 0)
            return rc;
    }
    return 0;
}

/* The document again with the secrets' values in place, checked by the same schema; messages
 * name the secret, never its value. The copy's strings are wiped before it is freed. */
static int check_resolved(struct s3l_config *c, json_t *schema, json_t *doc, const struct refs *r,
                          struct s3l__cfg_verdict *v)
{
    json_t *copy = json_deep_copy(doc);
    if (!copy)
        return S3L_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        const struct s3l__cfg_secret *s = secret_named(c, r->v[i].secret);
        /* The path is spec.config.KEY or spec.config.aws.KEY: walk it by its dots. */
        char buf[S3L__CFG_PATH_MAX];
        snprintf(buf, sizeof(buf), "%s", r->v[i].path);
        json_t *parent = copy;
        char *seg = buf, *dot;
        while ((dot = strchr(seg, '.')) != NULL) {
            *dot = 0;
            parent = json_object_get(parent, seg);
            seg = dot + 1;
        }
        json_t *str = json_string(s->value);
        if (!str || json_object_set_new(parent, seg, str) != 0)
            rc = str || s3l__utf8_valid((const uint8_t *)s->value, strlen(s->value), NULL)
                     ? S3L_ENOMEM /* json_string also fails when out of memory */
                     : 1;
        if (rc == 1) {
            snprintf(v->path, sizeof(v->path), "%s", r->v[i].path);
            snprintf(v->text, sizeof(v->text), "the value of secret %s is not valid UTF-8",
                     r->v[i].secret);
        }
    }
    if (rc == 0)
        rc = s3l__cfg_validate(schema, copy, r->v, r->n, v);
    for (size_t i = 0; i < r->n; i++) {
        char buf[S3L__CFG_PATH_MAX];
        snprintf(buf, sizeof(buf), "%s", r->v[i].path);
        json_t *node = copy;
        char *save = NULL;
        for (char *seg = strtok_r(buf, ".", &save); node && seg; seg = strtok_r(NULL, ".", &save))
            node = json_object_get(node, seg);
        if (json_is_string(node))
            memset((char *)json_string_value(node), 0, json_string_length(node));
    }
    json_decref(copy);
    return rc;
}

/* The kind named by a document's `kind`; anything else is checked as a Destination (whose
 * schema then names `kind`). */
static enum s3l_config_kind kind_of(json_t *doc)
{
    const char *k = json_string_value(json_object_get(doc, "kind"));
    if (k && strcmp(k, "Pipeline") == 0)
        return S3L_CONFIG_PIPELINE;
    if (k && strcmp(k, "Sink") == 0)
        return S3L_CONFIG_SINK;
    return S3L_CONFIG_DESTINATION;
}

static int push_doc(struct s3l_config *c, struct s3l_config_doc *d)
{
    if (s3l__array_reserve(&c->docs, &c->cap_docs, c->n_docs + 1, sizeof(*c->docs), 8))
        return S3L_ENOMEM;
    c->docs[c->n_docs++] = d;
    return 0;
}

/* One document: checks, secrets, view. Returns 0, 1 (invalid: v and *code set) or a code. */
static int add_doc(struct s3l_config *c, json_t *doc, const char *file, size_t index,
                   const char *dir, const struct s3l_config_options *opts,
                   struct s3l__cfg_verdict *v, int *code, enum s3l_config_check *check)
{
    enum s3l_config_kind kind = kind_of(doc);
    json_t *schema;
    int rc = schema_of(c, kind, &schema);
    *check = S3L_CONFIG_CHECK_SCHEMA;
    if (rc == 0)
        rc = s3l__cfg_validate(schema, doc, NULL, 0, v);
    if (rc != 0)
        return rc;
    *check = S3L_CONFIG_CHECK_SECRETS;
    struct refs r = {0};
    char path[S3L__CFG_PATH_MAX] = "";
    rc = find_refs(doc, path, 0, &r);
    for (size_t i = 0; rc == 0 && i < r.n; i++)
        r.v[i].path = r.paths[i];
    if (rc == 0)
        rc = resolve_refs(c, opts ? opts->secrets : NULL, &r, v, code);
    if (rc == 0 && opts && opts->secrets)
        rc = check_resolved(c, schema, doc, &r, v);
    refs_free(&r);
    if (rc != 0)
        return rc;
    struct s3l_config_doc *d = s3l_arena_alloc(&c->arena, sizeof(*d));
    if (!d)
        return S3L_ENOMEM;
    memset(d, 0, sizeof(*d));
    d->file = s3l_arena_strndup(&c->arena, file, strlen(file));
    d->index = index;
    if (!d->file)
        return S3L_ENOMEM;
    *check = S3L_CONFIG_CHECK_REFERENCES;
    rc = s3l__cfg_extract(doc, kind, dir, c->secrets, c->n_secrets, &c->arena, d, v);
    if (rc == 0)
        rc = push_doc(c, d);
    return rc;
}

int s3l__cfg_add_json(struct s3l_config *c, json_t *doc, const char *file, size_t index,
                      const char *name, const struct s3l_config_options *opts,
                      struct s3l__cfg_verdict *v, int *code, enum s3l_config_check *check)
{
    size_t before = c->n_docs;
    int rc = add_doc(c, doc, file, index, "", opts, v, code, check);
    if (rc == 0 && name && c->n_docs > before) {
        struct s3l_config_doc *d = c->docs[c->n_docs - 1];
        if (!(d->name = s3l_arena_strndup(&c->arena, name, strlen(name))))
            rc = S3L_ENOMEM;
    }
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int s3l_config_add_text(struct s3l_config *c, const char *text, size_t len, const char *file,
                        const struct s3l_config_options *opts, struct s3l_error *err)
{
    if (opts && opts->version != S3L_CONFIG_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "config options version %d, expected %d",
                             opts->version, S3L_CONFIG_OPTIONS_VERSION);
    if (!file)
        file = "(text)";
    json_t **docs;
    size_t n, bad;
    struct s3l_error perr = {0};
    int rc = s3l__cfg_parse(text, len, ends_with(file, ".json"), &docs, &n, &bad, &perr);
    if (rc == S3L_ENOMEM)
        return s3l_error_set(err, rc, "%s: out of memory", file);
    if (rc != 0)
        return add_problem(c, file, bad, "", perr.message, rc, S3L_CONFIG_CHECK_SYNTAX, err);
    char dir[4096] = "";
    const char *slash = strrchr(file, '/');
    if (slash)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file == 0 ? 1 : slash - file), file);
    int result = 0;
    for (size_t i = 0; i < n; i++) {
        struct s3l__cfg_verdict v;
        int code = S3L_EINVALID_CONFIG;
        enum s3l_config_check check = S3L_CONFIG_CHECK_SCHEMA;
        if (rc < 0) {
            json_decref(docs[i]);
            continue;
        }
        int r = add_doc(c, docs[i], file, i + 1, dir, opts, &v, &code, &check);
        if (r == 1)
            r = add_problem(c, file, i + 1, v.path, v.text, code, check, err);
        else if (r == S3L_EINTERNAL)
            r = s3l_error_set(err, r, "%s (document %zu): the built-in schema uses a keyword the "
                                      "validator does not know", file, i + 1);
        else if (r < 0)
            r = s3l_error_set(err, r, "%s (document %zu): out of memory", file, i + 1);
        if (r != 0 && result == 0)
            result = r;
        if (r == S3L_ENOMEM || r == S3L_EINTERNAL)
            rc = r;
        json_decref(docs[i]);
    }
    s3l_free(docs);
    return result;
}

int s3l_config_add_file(struct s3l_config *c, const char *path,
                        const struct s3l_config_options *opts, struct s3l_error *err)
{
    struct s3l_error e = {0};
    int fd = -1, rc = s3l__os_open_read(path, &fd, &e);
    struct s3l__os_stat st = {0};
    if (rc == 0)
        rc = s3l__os_fstat(fd, path, &st, &e);
    if (rc == 0 && st.size > MAX_FILE_SIZE)
        rc = s3l_error_set(&e, S3L_ETOO_LARGE, "%s: %llu bytes, more than a config file may have "
                                               "(16 MiB)", path, (unsigned long long)st.size);
    char *text = NULL;
    size_t got = 0;
    if (rc == 0 && !(text = s3l_malloc(st.size + 1)))
        rc = s3l_error_set(&e, S3L_ENOMEM, "out of memory");
    if (rc == 0)
        rc = s3l__os_pread_full(fd, text, st.size, 0, &got, path, &e);
    if (fd >= 0)
        s3l__os_close(fd, path, NULL);
    if (rc == 0)
        rc = s3l_config_add_text(c, text, got, path, opts, err);
    else if (rc != S3L_ENOMEM)
        add_problem(c, path, 0, "", e.message, rc, S3L_CONFIG_CHECK_READ, err);
    else
        s3l_error_set(err, rc, "%s", e.message);
    s3l_free(text);
    return rc;
}
