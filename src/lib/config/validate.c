/*
 * A JSON Schema 2020-12 interpreter for the keywords the shipped schemas use (schemas/KIND.schema.json):
 * $ref to local $defs, type, const, enum, if/then/else, minLength, maxLength, pattern, minimum,
 * maximum, minItems, items, required, additionalProperties (false) and properties. Annotations
 * ($schema, $id, title, description, $defs) are skipped; any other keyword is an internal error,
 * so a schema cannot silently mean more than this file checks.
 *
 * It stops at the first failure, in the order Ajv 8 (allErrors off) reports it, so the path it
 * names is the one Ajv names: type first; then the keywords of any type ($ref, const, enum, if);
 * then those of the value's type: strings maxLength, minLength, pattern; numbers maximum,
 * minimum; lists minItems, then each item; objects required (in the schema's order), then
 * unknown keys (in the document's order, integer-like keys first as JavaScript orders them),
 * then the listed properties (in the schema's order).
 *
 * Messages say what was expected in the words of docs/config.md: the innermost $defs entry the
 * value is checked under names the expected form ("a size like 256MiB").
 */
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"

struct vctx {
    json_t *root;
    const char *def; /* the innermost $defs name being checked, or NULL */
    bool secret_ok;  /* inside the else of a secret wrapper: a { secret: NAME } was possible */
    const struct s3l__cfg_redact *redact;
    size_t n_redact;
    char path[S3L__CFG_PATH_MAX];
    size_t plen;
    struct s3l__cfg_verdict *v;
};

/* What each $defs entry expects, for type and pattern failures. */
static const struct {
    const char *def, *phrase;
} phrases[] = {
    {"size", "a size like 256MiB"},
    {"duration", "a duration like 1m, 30s or 500ms"},
    {"destUrl", "a URL with a scheme: s3://BUCKET/PREFIX or file:///ABSOLUTE/PATH"},
    {"httpUrl", "an endpoint http(s)://HOST[:PORT]"},
    {"name", "a name of lower-case letters, digits and - (a DNS label)"},
    {"identifier", "an identifier of letters, digits and _, not starting with a digit"},
    {"secretRef", "a secret name of letters, digits and _, not starting with a digit"},
    {"roleArn", "an IAM role ARN like arn:aws:iam::123456789012:role/NAME (the account may be "
                "empty, as Ceph RGW names roles)"},
    {"sessionName", "a session name of 2 to 64 characters A-Z a-z 0-9 + = , . @ _ -"},
    {"storageClass", "a storage class like STANDARD_IA"},
    {"bucket", "a bucket name (3 to 63 of a-z 0-9 . -) or file:///ABSOLUTE/PATH"},
    {"keyPrefix", "a key prefix without a leading or trailing /"},
    {"csvDelimiter", "one printable character other than '\"', or a tab (also written tab or \\t)"},
};

static const char *phrase_of(const char *def)
{
    for (size_t i = 0; def && i < S3L_ARRAY_LEN(phrases); i++)
        if (strcmp(phrases[i].def, def) == 0)
            return phrases[i].phrase;
    return NULL;
}

void s3l__cfg_path_key(char *buf, size_t cap, size_t *len, const char *key)
{
    int n = snprintf(buf + *len, cap - *len, "%s%s", *len ? "." : "", key);
    if (n > 0)
        *len = S3L_MIN(*len + (size_t)n, cap - 1);
}

void s3l__cfg_path_index(char *buf, size_t cap, size_t *len, size_t i)
{
    int n = snprintf(buf + *len, cap - *len, "[%zu]", i);
    if (n > 0)
        *len = S3L_MIN(*len + (size_t)n, cap - 1);
}

static const struct s3l__cfg_redact *redacted(const struct vctx *c)
{
    for (size_t i = 0; i < c->n_redact; i++) {
        size_t n = strlen(c->redact[i].path);
        if (strncmp(c->path, c->redact[i].path, n) == 0 &&
            (c->path[n] == 0 || c->path[n] == '.' || c->path[n] == '['))
            return &c->redact[i];
    }
    return NULL;
}

/* "a string", "an integer" ... for a JSON Schema type name. */
static const char *type_phrase(const char *t)
{
    static const char *const names[][2] = {
        {"string", "a string"}, {"integer", "an integer"}, {"number", "a number"},
        {"boolean", "true or false"}, {"object", "a mapping"}, {"array", "a list"},
        {"null", "null"},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(names); i++)
        if (strcmp(names[i][0], t) == 0)
            return names[i][1];
    return t;
}

/* The value as the message shows it: short JSON text, or its kind for lists and mappings. */
static void describe(const struct vctx *c, json_t *d, char *out, size_t cap)
{
    const struct s3l__cfg_redact *r = redacted(c);
    if (r) {
        snprintf(out, cap, "the value of secret %s (not shown)", r->secret);
        return;
    }
    if (json_is_object(d)) {
        snprintf(out, cap, "a mapping");
        return;
    }
    if (json_is_array(d)) {
        snprintf(out, cap, "a list");
        return;
    }
    const char *str = json_string_value(d), *at = str ? strchr(str, '@') : NULL;
    const char *auth = str ? strstr(str, "://") : NULL;
    if (at && auth && at > auth && !memchr(auth + 3, '/', (size_t)(at - auth - 3))) {
        /* a URL's user name or password is a credential: never echoed (as the client) */
        snprintf(out, cap, "\"%.*s[userinfo]%.40s\"", (int)(auth + 3 - str), str, at);
        return;
    }
    char *t = s3l__json_dumps(d, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!t) {
        snprintf(out, cap, "a value");
        return;
    }
    if (strlen(t) > 64)
        snprintf(out, cap, "%.60s...", t);
    else
        snprintf(out, cap, "%s", t);
    s3l_free(t);
}

static int fail(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct vctx *c, const char *fmt, ...)
{
    snprintf(c->v->path, sizeof(c->v->path), "%s", c->path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->v->text, sizeof(c->v->text), fmt, ap);
    va_end(ap);
    return 1;
}

static bool is_type(json_t *d, const char *t)
{
    if (strcmp(t, "string") == 0)
        return json_is_string(d);
    if (strcmp(t, "integer") == 0) /* JavaScript's Number.isInteger: 3.0 is an integer */
        return json_is_integer(d) || (json_is_real(d) && fabs(json_real_value(d)) < 9.0e18 &&
                                      json_real_value(d) == trunc(json_real_value(d)));
    if (strcmp(t, "number") == 0)
        return json_is_number(d);
    if (strcmp(t, "boolean") == 0)
        return json_is_boolean(d);
    if (strcmp(t, "object") == 0)
        return json_is_object(d);
    if (strcmp(t, "array") == 0)
        return json_is_array(d);
    if (strcmp(t, "null") == 0)
        return json_is_null(d);
    return false;
}

static int check(struct vctx *c, json_t *s, json_t *d);

static int check_type(struct vctx *c, json_t *t, json_t *d)
{
    char want[160] = "", got[96];
    if (json_is_string(t)) {
        if (is_type(d, json_string_value(t)))
            return 0;
        snprintf(want, sizeof(want), "%s", type_phrase(json_string_value(t)));
    } else {
        size_t i;
        json_t *e;
        json_array_foreach(t, i, e) {
            if (is_type(d, json_string_value(e)))
                return 0;
            size_t l = strlen(want);
            snprintf(want + l, sizeof(want) - l, "%s%s", i ? " or " : "",
                     type_phrase(json_string_value(e)));
        }
    }
    describe(c, d, got, sizeof(got));
    const char *p = phrase_of(c->def);
    /* A bare YAML number where text is wanted ("interval: 30") reads as its own example unless
     * the message says why (found by a break-it run) */
    bool quote = p && json_is_number(d) && strcmp(want, type_phrase("string")) == 0;
    return fail(c, "expected %s%s%s, got %s%s", p ? p : want,
                c->secret_ok ? " or { secret: NAME }" : "", quote ? ", written as a string" : "",
                quote ? "the number " : "", got);
}

/* why: the enum's schema's description, said after the list (NULL: none). */
static int check_enum(struct vctx *c, json_t *e, json_t *d, const char *why)
{
    size_t i;
    json_t *x;
    json_array_foreach(e, i, x) if (json_equal(x, d)) return 0;
    /* spec.streams[].disposition: the refusal says why (docs/config.md, plain files). */
    if (json_array_size(e) == 1 && json_is_string(d) &&
        strcmp(json_string_value(json_array_get(e, 0)), "append") == 0 &&
        (strcmp(json_string_value(d), "replace") == 0 || strcmp(json_string_value(d), "merge") == 0))
        return fail(c, "%s is refused: plain files cannot be replaced or merged atomically (a table "
                       "format such as Iceberg can); append is the only disposition",
                    json_string_value(d));
    char list[320] = "";
    json_array_foreach(e, i, x) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "",
                 json_is_string(x) ? json_string_value(x) : "?");
    }
    return fail(c, "one of %s%s%s%s", list, why ? " (" : "", why ? why : "", why ? ")" : "");
}

static int check_const(struct vctx *c, json_t *k, json_t *d)
{
    if (json_equal(k, d))
        return 0;
    char got[96];
    describe(c, d, got, sizeof(got));
    if (strcmp(c->path, "kind") == 0) {
        const char *kd = json_is_string(d) ? json_string_value(d) : "";
        if (strcmp(kd, "Destination") && strcmp(kd, "Pipeline") && strcmp(kd, "Sink"))
            return fail(c, "one of Destination, Pipeline, Sink, got %s", got);
    }
    char want[96];
    describe(c, k, want, sizeof(want));
    return fail(c, "expected %s, got %s", want, got);
}

/* Code points in UTF-8 text, as JSON Schema counts length (RFC 8259 characters). */
static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int check_string(struct vctx *c, json_t *s, json_t *d)
{
    const char *str = json_string_value(d);
    char got[96];
    json_t *mx = json_object_get(s, "maxLength"), *mn = json_object_get(s, "minLength");
    json_t *pat = json_object_get(s, "pattern");
    if (mx && utf8_len(str) > (size_t)json_integer_value(mx)) {
        describe(c, d, got, sizeof(got));
        return fail(c, "at most %lld characters, got %s", (long long)json_integer_value(mx), got);
    }
    if (mn && utf8_len(str) < (size_t)json_integer_value(mn))
        return json_integer_value(mn) == 1
                   ? fail(c, "must not be empty")
                   : fail(c, "at least %lld characters", (long long)json_integer_value(mn));
    if (!pat)
        return 0;
    regex_t re;
    int rr = regcomp(&re, json_string_value(pat), REG_EXTENDED | REG_NOSUB);
    if (rr != 0)
        return rr == REG_ESPACE ? S3L_ENOMEM : S3L_EINTERNAL;
    int m = regexec(&re, str, 0, NULL, 0);
    regfree(&re);
    if (m == 0 && strlen(str) == json_string_length(d))
        return 0;
    describe(c, d, got, sizeof(got));
    if (c->def && strcmp(c->def, "destUrl") == 0 && strncmp(str, "file://", 7) == 0 && !redacted(c))
        return fail(c, "a file:// URL needs an absolute path (file:///ABSOLUTE/PATH), got %s", got);
    const char *p = phrase_of(c->def);
    if (p)
        return fail(c, "expected %s, got %s", p, got);
    return fail(c, "expected text matching %s, got %s", json_string_value(pat), got);
}

static int check_number(struct vctx *c, json_t *s, json_t *d)
{
    json_t *mx = json_object_get(s, "maximum"), *mn = json_object_get(s, "minimum");
    double x = json_number_value(d);
    if ((mx && x > json_number_value(mx)) || (mn && x < json_number_value(mn))) {
        char got[96];
        describe(c, d, got, sizeof(got));
        const char *p = phrase_of(c->def);
        if (mx && mn)
            return fail(c, "expected %s%s%.0f to %.0f, got %s", p ? p : "", p ? ": from " : "from ",
                        json_number_value(mn), json_number_value(mx), got);
        return fail(c, "expected %s %.0f, got %s", mx ? "at most" : "at least",
                    json_number_value(mx ? mx : mn), got);
    }
    return 0;
}

static int check_array(struct vctx *c, json_t *s, json_t *d)
{
    json_t *mn = json_object_get(s, "minItems"), *items = json_object_get(s, "items");
    if (mn && json_array_size(d) < (size_t)json_integer_value(mn))
        return json_integer_value(mn) == 1
                   ? fail(c, "must not be empty")
                   : fail(c, "at least %lld items", (long long)json_integer_value(mn));
    if (!items)
        return 0;
    size_t i, saved = c->plen;
    json_t *e;
    json_array_foreach(d, i, e) {
        s3l__cfg_path_index(c->path, sizeof(c->path), &c->plen, i);
        int rc = check(c, items, e);
        c->path[c->plen = saved] = 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Whether a key is an array index as JavaScript orders object keys (ECMA-262 7.1.21,
 * CanonicalNumericIndexString below 2^32 - 1): such keys come first, ascending. */
static bool js_index(const char *k, unsigned long *v)
{
    if (!*k || (k[0] == '0' && k[1]) || strlen(k) > 10)
        return false;
    for (const char *p = k; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    *v = strtoul(k, NULL, 10);
    return *v < 4294967295UL;
}

/* The first key of d (in JavaScript's order) that props does not list, or NULL. */
static const char *first_unknown(json_t *d, json_t *props)
{
    const char *key, *best = NULL;
    unsigned long best_i = 0, i;
    json_t *x;
    json_object_foreach(d, key, x) {
        if (props && json_object_get(props, key))
            continue;
        if (js_index(key, &i)) {
            if (!best || !js_index(best, &best_i) || i < best_i)
                best = key;
        } else if (!best) {
            best = key;
        }
    }
    return best;
}

static int check_object(struct vctx *c, json_t *s, json_t *d)
{
    json_t *req = json_object_get(s, "required"), *props = json_object_get(s, "properties");
    json_t *addl = json_object_get(s, "additionalProperties");
    size_t i, saved = c->plen;
    json_t *e;
    json_array_foreach(req, i, e) {
        if (!json_object_get(d, json_string_value(e))) {
            s3l__cfg_path_key(c->path, sizeof(c->path), &c->plen, json_string_value(e));
            if (c->def && strcmp(c->def, "secretRef") == 0)
                return fail(c, "missing (required): a secret is written { secret: NAME }");
            return fail(c, "missing (required)");
        }
    }
    if (json_is_false(addl)) {
        const char *k = first_unknown(d, props);
        if (k) {
            char known[256] = "";
            const char *pk;
            json_t *ps;
            json_object_foreach(props, pk, ps) {
                size_t l = strlen(known);
                snprintf(known + l, sizeof(known) - l, "%s%s", l ? ", " : "", pk);
            }
            s3l__cfg_path_key(c->path, sizeof(c->path), &c->plen, k);
            return fail(c, "unknown field (known here: %s)", known);
        }
    }
    const char *pk;
    json_t *ps;
    json_object_foreach(props, pk, ps) {
        json_t *x = json_object_get(d, pk);
        if (!x)
            continue;
        s3l__cfg_path_key(c->path, sizeof(c->path), &c->plen, pk);
        int rc = check(c, ps, x);
        c->path[c->plen = saved] = 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Whether d passes s, without recording a failure (the `if` of if/then/else). */
static int passes(struct vctx *c, json_t *s, json_t *d, bool *ok)
{
    struct s3l__cfg_verdict scratch;
    struct vctx sub = *c;
    sub.v = &scratch;
    int rc = check(&sub, s, d);
    if (rc < 0)
        return rc;
    *ok = rc == 0;
    return 0;
}

static int check_ref(struct vctx *c, json_t *ref, json_t *d)
{
    const char *r = json_string_value(ref);
    static const char prefix[] = "#/$defs/";
    if (!r || strncmp(r, prefix, sizeof(prefix) - 1) != 0)
        return S3L_EINTERNAL;
    const char *name = r + sizeof(prefix) - 1;
    json_t *target = json_object_get(json_object_get(c->root, "$defs"), name);
    if (!target)
        return S3L_EINTERNAL;
    const char *saved = c->def;
    bool saved_ok = c->secret_ok;
    c->def = name;
    c->secret_ok = false;
    int rc = check(c, target, d);
    c->def = saved;
    c->secret_ok = saved_ok;
    return rc;
}

static bool known_keyword(const char *k)
{
    static const char *const kw[] = {
        "$schema", "$id", "title", "description", "$defs", "$ref", "type", "const", "enum",
        "if", "then", "else", "minLength", "maxLength", "pattern", "minimum", "maximum",
        "minItems", "items", "required", "additionalProperties", "properties", NULL,
    };
    for (const char *const *p = kw; *p; p++)
        if (strcmp(*p, k) == 0)
            return true;
    return false;
}

static int check_if(struct vctx *c, json_t *s, json_t *d)
{
    json_t *cond = json_object_get(s, "if");
    if (!cond)
        return 0;
    bool ok = false;
    int rc = passes(c, cond, d, &ok);
    if (rc < 0)
        return rc;
    json_t *branch = json_object_get(s, ok ? "then" : "else");
    if (!branch)
        return 0;
    /* The shipped schemas use if/then/else for one thing: { secret: NAME } or a plain value. */
    bool saved = c->secret_ok;
    c->secret_ok = !ok && json_is_object(cond);
    rc = check(c, branch, d);
    c->secret_ok = saved;
    return rc;
}

static int check(struct vctx *c, json_t *s, json_t *d)
{
    if (!json_is_object(s))
        return S3L_EINTERNAL;
    const char *k;
    json_t *x;
    json_object_foreach(s, k, x) if (!known_keyword(k)) return S3L_EINTERNAL;
    json_t *t = json_object_get(s, "type");
    int rc;
    if (t && (rc = check_type(c, t, d)) != 0)
        return rc;
    if ((x = json_object_get(s, "$ref")) && (rc = check_ref(c, x, d)) != 0)
        return rc;
    if ((x = json_object_get(s, "const")) && (rc = check_const(c, x, d)) != 0)
        return rc;
    if ((x = json_object_get(s, "enum")) &&
        (rc = check_enum(c, x, d, json_string_value(json_object_get(s, "description")))) != 0)
        return rc;
    if ((rc = check_if(c, s, d)) != 0)
        return rc;
    if (json_is_number(d))
        return check_number(c, s, d);
    if (json_is_string(d))
        return check_string(c, s, d);
    if (json_is_array(d))
        return check_array(c, s, d);
    if (json_is_object(d))
        return check_object(c, s, d);
    return 0;
}

int s3l__cfg_validate(json_t *schema, json_t *doc, const struct s3l__cfg_redact *redact,
                      size_t n_redact, struct s3l__cfg_verdict *v)
{
    struct vctx c = {0};
    c.root = schema;
    c.redact = redact;
    c.n_redact = n_redact;
    c.v = v;
    v->path[0] = v->text[0] = 0;
    return check(&c, schema, doc);
}
