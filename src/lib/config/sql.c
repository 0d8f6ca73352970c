/*
 * The SQL binding of the raw-object connector's sinks (issue 13, item 5): statements such as
 *
 *     CREATE TABLE out_s3 (line STRING) WITH (connector = 's3', bucket = 'b',
 *                                             key_prefix = 'events', delivery_guarantee = 'exactly_once')
 *
 * become Sink documents of the config (docs/config.md), checked by the Sink document's JSON
 * Schema like any other, so a value means the same in SQL, YAML and JSON. A hand-written
 * tokenizer and recursive descent parser: identifiers unquoted (letters, digits, _ and $, not
 * starting with a digit; compared case-insensitively), quoted "x" or `x` (a doubled quote is one
 * quote), strings '...' ('' is one '), decimal integers, the punctuation ( ) , = ;, comments
 * -- to the end of the line and / * ... * / (no nesting), keywords in any case. Every error
 * names the file, the line and column (from 1; columns count characters) and the word at fault.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/config_int.h"

#define WORD_MAX 48       /* the part of a word an error quotes */
#define PART_MIN (5u << 20) /* S3: every part but the last is at least 5 MiB */

enum tok_kind { T_END, T_IDENT, T_QIDENT, T_STRING, T_NUMBER, T_PUNCT };

struct tok {
    enum tok_kind kind;
    const char *at; /* in the text */
    size_t len;     /* bytes of the token as written */
    size_t line, col;
    char *value; /* decoded: the identifier, the string's content, the digits (s3l_malloc) */
};

/* One option of WITH (...): its key and value tokens. */
struct opt {
    struct tok key, value;
};

struct parser {
    const char *text, *end, *p;
    size_t line, col;
    const char *file;
    struct tok t; /* the current token */
    /* the first error: where and what */
    bool failed;
    int code;
    char msg[S3L_ERROR_MESSAGE_MAX];
};

/* The options a statement may set: the Sink document's spec.config fields and connector, less
 * the credentials (a statement is printed and hashed: it must not hold a key). */
static const char *const known[] = {
    "connector",     "bucket",         "key_prefix",        "region",
    "endpoint_override", "rollover_bytes", "rollover_interval", "part_size",
    "commit_group",  "delivery_guarantee", "compression",    "content_type",
};
#define N_KNOWN (sizeof(known) / sizeof(known[0]))

static bool is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_ident_char(unsigned char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* Advances one byte, counting lines and characters (UTF-8 continuation bytes are not columns). */
static void step(struct parser *ps)
{
    unsigned char c = (unsigned char)*ps->p++;
    if (c == '\n') {
        ps->line++;
        ps->col = 1;
    } else if ((c & 0xC0) != 0x80) {
        ps->col++;
    }
}

/* Records the first error, at token t (its word quoted, cut to WORD_MAX bytes). */
__attribute__((format(printf, 3, 4))) static void fail_at(struct parser *ps, const struct tok *t,
                                                          const char *fmt, ...)
{
    if (ps->failed)
        return;
    ps->failed = true;
    ps->code = S3L_EINVALID_CONFIG;
    char what[S3L_ERROR_MESSAGE_MAX - 96]; /* room for the file, the place and the word */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (t->kind == T_END)
        snprintf(ps->msg, sizeof(ps->msg), "%.40s:%zu:%zu: at the end of the text: %s",
                 ps->file, t->line, t->col, what);
    else
        snprintf(ps->msg, sizeof(ps->msg), "%.40s:%zu:%zu: at %.*s%s: %s", ps->file, t->line, t->col,
                 (int)(t->len > WORD_MAX ? WORD_MAX : t->len), t->at,
                 t->len > WORD_MAX ? "..." : "", what);
}

static void tok_free(struct tok *t)
{
    s3l_free(t->value);
    t->value = NULL;
}

/* Skips blanks and comments; an unterminated block comment is an error at its start. */
static void skip_space(struct parser *ps)
{
    for (;;) {
        while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
                                   *ps->p == '\r' || *ps->p == '\f' || *ps->p == '\v'))
            step(ps);
        if (ps->end - ps->p >= 2 && ps->p[0] == '-' && ps->p[1] == '-') {
            while (ps->p < ps->end && *ps->p != '\n')
                step(ps);
            continue;
        }
        if (ps->end - ps->p >= 2 && ps->p[0] == '/' && ps->p[1] == '*') {
            struct tok t = {T_PUNCT, ps->p, 2, ps->line, ps->col, NULL};
            step(ps), step(ps);
            while (ps->p < ps->end && !(ps->end - ps->p >= 2 && ps->p[0] == '*' && ps->p[1] == '/'))
                step(ps);
            if (ps->p >= ps->end) {
                fail_at(ps, &t, "a comment /* that is never closed with */");
                return;
            }
            step(ps), step(ps);
            continue;
        }
        return;
    }
}

/* A quoted token (q: the quote; a doubled quote stands for one) into t->value. The content is
 * never longer than the token, so one allocation of the rest of the text holds it. */
static void quoted(struct parser *ps, struct tok *t, char q)
{
    char *v = s3l_malloc((size_t)(ps->end - ps->p) + 1);
    size_t n = 0;
    if (!v) {
        ps->failed = true;
        ps->code = S3L_ENOMEM;
        return;
    }
    step(ps);
    for (;;) {
        if (ps->p >= ps->end) {
            t->len = (size_t)(ps->p - t->at);
            fail_at(ps, t, "a %s opened with %c is never closed", q == '\'' ? "string" : "name",
                    q);
            break;
        }
        if (*ps->p == q) {
            step(ps);
            if (ps->p < ps->end && *ps->p == q) {
                step(ps);
                v[n++] = q;
                continue;
            }
            break;
        }
        v[n++] = *ps->p;
        step(ps);
    }
    v[n] = 0;
    t->len = (size_t)(ps->p - t->at);
    t->value = v;
}

/* Reads the next token into ps->t (the previous one's value freed). */
static void next(struct parser *ps)
{
    tok_free(&ps->t);
    skip_space(ps);
    struct tok *t = &ps->t;
    *t = (struct tok){T_END, ps->p, 0, ps->line, ps->col, NULL};
    if (ps->failed || ps->p >= ps->end)
        return;
    unsigned char c = (unsigned char)*ps->p;
    if (c == '\'' || c == '"' || c == '`') {
        t->kind = c == '\'' ? T_STRING : T_QIDENT;
        quoted(ps, t, (char)c);
        return;
    }
    if (is_ident_start(c) || (c >= '0' && c <= '9')) {
        t->kind = is_ident_start(c) ? T_IDENT : T_NUMBER;
        while (ps->p < ps->end && (t->kind == T_IDENT ? is_ident_char((unsigned char)*ps->p)
                                                      : (*ps->p >= '0' && *ps->p <= '9')))
            step(ps);
        t->len = (size_t)(ps->p - t->at);
        if (t->kind == T_NUMBER && ps->p < ps->end && is_ident_char((unsigned char)*ps->p)) {
            while (ps->p < ps->end && is_ident_char((unsigned char)*ps->p))
                step(ps);
            t->len = (size_t)(ps->p - t->at);
            fail_at(ps, t, "expected a number (digits) or a name (not starting with a digit); "
                           "a size with a unit is a string: '5MiB'");
            return;
        }
        if ((t->value = s3l_malloc(t->len + 1)) != NULL) {
            memcpy(t->value, t->at, t->len);
            t->value[t->len] = 0;
        } else {
            ps->failed = true;
            ps->code = S3L_ENOMEM;
        }
        return;
    }
    t->kind = T_PUNCT;
    t->len = 1;
    step(ps);
    if (!strchr("(),=;", (int)c)) {
        /* a whole UTF-8 character in the message */
        while (ps->p < ps->end && ((unsigned char)*ps->p & 0xC0) == 0x80)
            step(ps), t->len++;
        fail_at(ps, t, "unexpected character");
    }
}

static bool is_punct(const struct tok *t, char c)
{
    return t->kind == T_PUNCT && t->at[0] == c;
}

static bool is_kw(const struct tok *t, const char *kw)
{
    return t->kind == T_IDENT && t->len == strlen(kw) && strncasecmp(t->at, kw, t->len) == 0;
}

static void expect_punct(struct parser *ps, char c, const char *what)
{
    if (!ps->failed && !is_punct(&ps->t, c))
        fail_at(ps, &ps->t, "expected %s", what);
    if (!ps->failed)
        next(ps);
}

static void expect_kw(struct parser *ps, const char *kw, const char *what)
{
    if (!ps->failed && !is_kw(&ps->t, kw))
        fail_at(ps, &ps->t, "expected %s", what);
    if (!ps->failed)
        next(ps);
}

/* Takes the current token over (the parser's copy forgets its value). */
static struct tok take(struct parser *ps)
{
    struct tok t = ps->t;
    ps->t.value = NULL;
    next(ps);
    return t;
}

static bool is_name(const struct tok *t)
{
    return t->kind == T_IDENT || t->kind == T_QIDENT;
}

/* An option's key, lower-cased when unquoted (keywords and names are case-insensitive). */
static void lower(struct tok *t)
{
    if (t->kind != T_IDENT)
        return;
    for (char *p = t->value; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
}

struct stmt {
    struct tok create, name, with;
    struct opt opts[N_KNOWN];
    size_t n_opts;
};

static void stmt_free(struct stmt *s)
{
    tok_free(&s->create);
    tok_free(&s->name);
    tok_free(&s->with);
    for (size_t i = 0; i < s->n_opts; i++) {
        tok_free(&s->opts[i].key);
        tok_free(&s->opts[i].value);
    }
}

/* ( name STRING ): exactly one column, of type STRING. */
static void columns(struct parser *ps)
{
    expect_punct(ps, '(', "( and the column list: (line STRING)");
    if (ps->failed)
        return;
    if (!is_name(&ps->t)) {
        fail_at(ps, &ps->t, "expected a column name: the sink takes exactly one STRING column "
                            "(each value is one line), as (line STRING)");
        return;
    }
    next(ps);
    if (!ps->failed && !is_kw(&ps->t, "STRING")) {
        fail_at(ps, &ps->t, "expected the type STRING: the sink takes exactly one STRING column "
                            "(each value is one line)");
        return;
    }
    next(ps);
    if (!ps->failed && is_punct(&ps->t, ',')) {
        next(ps);
        fail_at(ps, &ps->t, "a second column: the sink takes exactly one STRING column (each "
                            "value is one line)");
        return;
    }
    expect_punct(ps, ')', ") after the one STRING column");
}

static const struct opt *find_opt(const struct stmt *s, const char *key)
{
    for (size_t i = 0; i < s->n_opts; i++)
        if (strcmp(s->opts[i].key.value, key) == 0)
            return &s->opts[i];
    return NULL;
}

static bool known_key(const char *k)
{
    for (size_t i = 0; i < N_KNOWN; i++)
        if (strcmp(known[i], k) == 0)
            return true;
    return false;
}

/* WITH ( key = value, ... ) */
static void options(struct parser *ps, struct stmt *s)
{
    if (!ps->failed && !is_kw(&ps->t, "WITH")) {
        fail_at(ps, &ps->t, "expected WITH (connector = 's3', bucket = '...', ...)");
        return;
    }
    s->with = take(ps);
    expect_punct(ps, '(', "( and the options: WITH (connector = 's3', bucket = '...')");
    while (!ps->failed) {
        if (!is_name(&ps->t) && ps->t.kind != T_STRING) {
            fail_at(ps, &ps->t, "expected an option name (connector, bucket, key_prefix, ...)");
            return;
        }
        struct tok key = take(ps);
        lower(&key);
        if (!known_key(key.value)) {
            bool cred = strstr(key.value, "access_key") || strstr(key.value, "secret") ||
                        strstr(key.value, "session_token");
            if (cred)
                fail_at(ps, &key, "credentials are not options of a statement (it is printed "
                                  "and hashed); give them as write does: --profile, --role-arn "
                                  "or the environment");
            else
                fail_at(ps, &key, "unknown option (known: connector, bucket, key_prefix, region, "
                                  "endpoint_override, rollover_bytes, rollover_interval, "
                                  "part_size, commit_group, delivery_guarantee, compression, "
                                  "content_type)");
            tok_free(&key);
            return;
        }
        if (find_opt(s, key.value)) {
            fail_at(ps, &key, "option given twice");
            tok_free(&key);
            return;
        }
        struct opt *o = &s->opts[s->n_opts++];
        o->key = key;
        expect_punct(ps, '=', "= and the option's value");
        if (ps->failed)
            return;
        if (ps->t.kind != T_STRING && ps->t.kind != T_NUMBER) {
            fail_at(ps, &ps->t, "expected the value of %s: a string in single quotes or a number",
                    o->key.value);
            return;
        }
        o->value = take(ps);
        if (ps->failed)
            return;
        if (is_punct(&ps->t, ',')) {
            next(ps);
            continue;
        }
        expect_punct(ps, ')', ", or ) after an option");
        return;
    }
}

/* CREATE TABLE [IF NOT EXISTS] name (col STRING) WITH (...) */
static void statement(struct parser *ps, struct stmt *s)
{
    if (!is_kw(&ps->t, "CREATE")) {
        fail_at(ps, &ps->t, "expected CREATE TABLE");
        return;
    }
    s->create = take(ps);
    expect_kw(ps, "TABLE", "TABLE after CREATE");
    if (!ps->failed && is_kw(&ps->t, "IF")) {
        next(ps);
        expect_kw(ps, "NOT", "NOT after IF");
        expect_kw(ps, "EXISTS", "EXISTS after IF NOT");
    }
    if (!ps->failed && !is_name(&ps->t)) {
        fail_at(ps, &ps->t, "expected the table's name");
        return;
    }
    if (ps->failed)
        return;
    s->name = take(ps);
    columns(ps);
    options(ps, s);
}

/* The token an error about option key points at: its value, or WITH when it is not given. */
static const struct tok *where(const struct stmt *s, const char *key)
{
    const struct opt *o = key ? find_opt(s, key) : NULL;
    return o ? &o->value : &s->with;
}

/* The checks beyond the Sink schema that SQL makes here: connector given and 's3', bucket
 * given, part_size at least 5 MiB (the sink checks it again when it opens). */
static void check_stmt(struct parser *ps, const struct stmt *s)
{
    const struct opt *c = find_opt(s, "connector");
    if (!c)
        fail_at(ps, &s->with, "connector: missing (required): connector = 's3'");
    else if (c->value.kind != T_STRING || strcmp(c->value.value, "s3") != 0)
        fail_at(ps, &c->value, "connector: expected 's3' (the NDJSON object sinks)");
    else if (!find_opt(s, "bucket"))
        fail_at(ps, &s->with, "bucket: missing (required): bucket = 'NAME' or "
                              "bucket = 'file:///ABSOLUTE/PATH'");
    const struct opt *p = find_opt(s, "part_size");
    uint64_t v = 0;
    if (p && !ps->failed && s3l_parse_size(p->value.value, &v) && v < PART_MIN)
        fail_at(ps, &p->value,
                "part_size: %llu bytes is below 5 MiB (5242880 bytes), S3's minimum part",
                (unsigned long long)v);
}

/* The statement as a Sink document (NULL when out of memory). json_object_set_new takes its
 * value over also when it fails, so nothing is freed twice. */
static json_t *to_json(const struct stmt *s)
{
    json_t *config = json_object(), *spec = json_object(), *doc = json_object();
    bool ok = config && spec && doc;
    for (size_t i = 0; ok && i < s->n_opts; i++) {
        const struct opt *o = &s->opts[i];
        json_t *v;
        uint64_t n = 0;
        if (o->value.kind == T_NUMBER && o->value.len <= 15 && s3l_parse_size(o->value.value, &n))
            v = json_integer((json_int_t)n);
        else
            v = json_string(o->value.value);
        bool conn = strcmp(o->key.value, "connector") == 0;
        ok = v && json_object_set_new(conn ? spec : config, conn ? "connector" : o->key.value,
                                      v) == 0;
    }
    if (ok) {
        ok = json_object_set_new(spec, "config", config) == 0;
        config = NULL;
    }
    if (ok) {
        ok = json_object_set_new(doc, "spec", spec) == 0;
        spec = NULL;
    }
    ok = ok && json_object_set_new(doc, "apiVersion", json_string(S3L_CONFIG_API_VERSION)) == 0 &&
         json_object_set_new(doc, "kind", json_string("Sink")) == 0 &&
         json_object_set_new(doc, "metadata", json_pack("{s:s}", "name", "sql")) == 0;
    json_decref(config);
    json_decref(spec);
    if (!ok) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* The option a verdict's path names (spec.config.KEY or spec.connector), or NULL. */
static const char *verdict_key(const char *path)
{
    if (strcmp(path, "spec.connector") == 0)
        return "connector";
    if (strncmp(path, "spec.config.", 12) == 0)
        return path + 12;
    return NULL;
}

/* Adds statement number index (from 1) of s: the Sink document, or the problem at its word. */
static int add_stmt(struct s3l_config *c, struct parser *ps, const struct stmt *s, size_t index,
                    const struct s3l_config_options *opts)
{
    check_stmt(ps, s);
    if (ps->failed)
        return 1;
    json_t *doc = to_json(s);
    if (!doc)
        return S3L_ENOMEM;
    struct s3l__cfg_verdict v;
    int code = S3L_EINVALID_CONFIG;
    enum s3l_config_check check;
    int rc = s3l__cfg_add_json(c, doc, ps->file, index, s->name.value, opts, &v, &code, &check);
    json_decref(doc);
    if (rc == 1) {
        const char *key = verdict_key(v.path);
        fail_at(ps, where(s, key), "%s: %s", key ? key : v.path, v.text);
        ps->code = code;
    }
    return rc;
}

int s3l_config_add_sql(struct s3l_config *c, const char *text, size_t len, const char *file,
                       const struct s3l_config_options *opts, struct s3l_error *err)
{
    if (!c || (!text && len))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "config: NULL argument");
    if (opts && opts->version != S3L_CONFIG_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "config options version %d, expected %d",
                             opts->version, S3L_CONFIG_OPTIONS_VERSION);
    if (!file)
        file = "(sql)";
    size_t bad = 0;
    if (!s3l__utf8_valid((const uint8_t *)text, len, &bad)) {
        char msg[S3L_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof(msg), "%s: byte %zu: not UTF-8", file, bad);
        return s3l__cfg_add_problem_msg(c, file, 0, "", msg, S3L_EINVALID_CONFIG,
                                        S3L_CONFIG_CHECK_SYNTAX, err);
    }
    struct parser ps = {.text = text, .end = text + len, .p = text, .line = 1, .col = 1,
                        .file = file};
    next(&ps);
    size_t index = 0;
    int rc = 0;
    while (!ps.failed) {
        while (!ps.failed && is_punct(&ps.t, ';'))
            next(&ps);
        if (ps.failed || ps.t.kind == T_END)
            break;
        struct stmt s = {0};
        index++;
        statement(&ps, &s);
        if (!ps.failed && ps.t.kind != T_END && !is_punct(&ps.t, ';'))
            fail_at(&ps, &ps.t, "expected ; or the end after the statement");
        if (!ps.failed)
            rc = add_stmt(c, &ps, &s, index, opts);
        stmt_free(&s);
        if (rc < 0)
            break;
    }
    if (!ps.failed && rc == 0 && index == 0) {
        struct tok t = ps.t;
        fail_at(&ps, &t, "no statement: expected CREATE TABLE name (line STRING) WITH (...)");
    }
    tok_free(&ps.t);
    if (rc < 0 || ps.code == S3L_ENOMEM)
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory", file);
    if (ps.failed)
        return s3l__cfg_add_problem_msg(c, file, index, "", ps.msg, ps.code,
                                        index ? S3L_CONFIG_CHECK_SCHEMA : S3L_CONFIG_CHECK_SYNTAX,
                                        err);
    return 0;
}
