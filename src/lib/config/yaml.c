/*
 * Config text to values: YAML through libfyaml (several documents per stream), JSON through
 * jansson. YAML becomes the same jansson values JSON would, by the YAML 1.2.2 core schema
 * (section 10.3.2): a plain scalar is null, a boolean, an integer or a float when it matches that
 * schema's patterns, else a string; quoted and block scalars are strings. Aliases are refused (an
 * alias can expand a small file into a huge document) and so is any tag but !!str; keys must be
 * scalars. libfyaml reports into a diagnostic object of ours, never on stderr.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "config/config_int.h"

static bool word_in(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(s, *words, n) == 0)
            return true;
    return false;
}

static bool all_of(const char *s, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]) || s[i] == 0)
            return false;
    return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool core_float(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    size_t int_digits = 0, frac_digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, int_digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, frac_digits++;
    }
    if (int_digits == 0 && frac_digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t e = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, e++;
        if (e == 0)
            return false;
    }
    return i == n;
}

/* An integer of the core schema, or NULL (not one, or past int64: then a float, as JSON has). */
static json_t *core_int(const char *s, size_t n)
{
    char buf[72];
    if (n >= sizeof(buf))
        return NULL;
    memcpy(buf, s, n);
    buf[n] = 0;
    int base = 10;
    const char *digits = buf;
    if (n > 2 && buf[0] == '0' && buf[1] == 'o' && all_of(buf + 2, n - 2, "01234567"))
        base = 8, digits = buf + 2;
    else if (n > 2 && buf[0] == '0' && buf[1] == 'x' &&
             all_of(buf + 2, n - 2, "0123456789abcdefABCDEF"))
        base = 16, digits = buf + 2;
    else if (!(all_of(buf, n, "0123456789") ||
               (n > 1 && (buf[0] == '-' || buf[0] == '+') && all_of(buf + 1, n - 1, "0123456789"))))
        return NULL;
    errno = 0;
    char *end;
    long long v = strtoll(digits, &end, base);
    if (errno == ERANGE)
        return json_real(strtod(buf, NULL));
    return json_integer(v);
}

/* The value of a plain scalar by the core schema. */
static json_t *plain_scalar(const char *s, size_t n)
{
    static const char *const nulls[] = {"null", "Null", "NULL", "~", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    if (n == 0 || word_in(s, n, nulls))
        return json_null();
    if (word_in(s, n, trues))
        return json_true();
    if (word_in(s, n, falses))
        return json_false();
    json_t *i = core_int(s, n);
    if (i)
        return i;
    if (core_float(s, n)) {
        char buf[128];
        if (n >= sizeof(buf))
            return json_stringn_nocheck(s, n);
        memcpy(buf, s, n);
        buf[n] = 0;
        return json_real(strtod(buf, NULL));
    }
    /* JSON has no infinities or NaN: such a value stays a string (no setting takes a float). */
    if (word_in(s, n, infs) || word_in(s, n, ninfs) || word_in(s, n, nans))
        return json_stringn_nocheck(s, n);
    return json_stringn(s, n);
}

struct conv {
    struct s3l_error *err;
};

static int node_fail(struct conv *cv, struct fy_node *fyn, const char *what)
{
    struct fy_token *t = fy_node_get_type(fyn) == FYNT_SCALAR ? fy_node_get_scalar_token(fyn) : NULL;
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    if (m)
        return s3l_error_set(cv->err, S3L_EINVALID_CONFIG, "line %d, column %d: %s",
                             m->line + 1, m->column + 1, what);
    return s3l_error_set(cv->err, S3L_EINVALID_CONFIG, "%s", what);
}

static int convert(struct conv *cv, struct fy_node *fyn, json_t **out);

static int convert_scalar(struct conv *cv, struct fy_node *fyn, json_t **out)
{
    size_t n = 0, tn = 0;
    const char *s = fy_node_get_scalar(fyn, &n);
    const char *tag = fy_node_get_tag(fyn, &tn);
    enum fy_node_style st = fy_node_get_style(fyn);
    if (st == FYNS_ALIAS)
        return node_fail(cv, fyn, "aliases (*name) are not supported in config documents");
    if (!s)
        s = "", n = 0;
    if (tag) {
        static const char str_tag[] = "tag:yaml.org,2002:str";
        if (!(tn == sizeof(str_tag) - 1 && memcmp(tag, str_tag, tn) == 0))
            return node_fail(cv, fyn, "tags other than !!str are not supported");
        *out = json_stringn(s, n);
    } else if (st == FYNS_PLAIN) {
        *out = plain_scalar(s, n);
    } else {
        *out = json_stringn(s, n);
    }
    /* jansson returns NULL both for text that is not UTF-8 and when allocating fails. */
    if (!*out && s3l__utf8_valid((const uint8_t *)s, n, NULL))
        return s3l_error_set(cv->err, S3L_ENOMEM, "out of memory reading a config document");
    if (!*out)
        return node_fail(cv, fyn, "a string that is not valid UTF-8");
    return 0;
}

static int convert_mapping(struct conv *cv, struct fy_node *fyn, json_t **out)
{
    json_t *obj = json_object();
    if (!obj)
        return s3l_error_set(cv->err, S3L_ENOMEM, "out of memory");
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(fyn, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
        size_t kn = 0;
        const char *ks = k && fy_node_get_type(k) == FYNT_SCALAR ? fy_node_get_scalar(k, &kn) : NULL;
        if (!k || fy_node_get_type(k) != FYNT_SCALAR || fy_node_get_style(k) == FYNS_ALIAS) {
            json_decref(obj);
            return node_fail(cv, k ? k : fyn, "a key must be a plain string");
        }
        char *key = s3l_malloc(kn + 1);
        if (!key) {
            json_decref(obj);
            return s3l_error_set(cv->err, S3L_ENOMEM, "out of memory");
        }
        memcpy(key, ks ? ks : "", kn);
        key[kn] = 0;
        json_t *v = NULL;
        int rc = strlen(key) != kn ? node_fail(cv, k, "a key with a NUL character")
                 : !val            ? (v = json_null(), 0)
                                   : convert(cv, val, &v);
        if (rc == 0 && json_object_set_new(obj, key, v) != 0)
            rc = s3l__utf8_valid((const uint8_t *)key, kn, NULL)
                     ? s3l_error_set(cv->err, S3L_ENOMEM, "out of memory reading a config document")
                     : node_fail(cv, k, "a key that is not valid UTF-8");
        s3l_free(key);
        if (rc != 0) {
            json_decref(obj);
            return rc;
        }
    }
    *out = obj;
    return 0;
}

static int convert(struct conv *cv, struct fy_node *fyn, json_t **out)
{
    switch (fy_node_get_type(fyn)) {
    case FYNT_SCALAR:
        return convert_scalar(cv, fyn, out);
    case FYNT_MAPPING:
        return convert_mapping(cv, fyn, out);
    case FYNT_SEQUENCE: {
        json_t *arr = json_array();
        if (!arr)
            return s3l_error_set(cv->err, S3L_ENOMEM, "out of memory");
        void *it = NULL;
        struct fy_node *item;
        while ((item = fy_node_sequence_iterate(fyn, &it)) != NULL) {
            json_t *v = NULL;
            int rc = convert(cv, item, &v);
            if (rc == 0 && json_array_append_new(arr, v) != 0)
                rc = s3l_error_set(cv->err, S3L_ENOMEM, "out of memory");
            if (rc != 0) {
                json_decref(arr);
                return rc;
            }
        }
        *out = arr;
        return 0;
    }
    }
    return node_fail(cv, fyn, "an unknown YAML node");
}

static int push_doc(json_t ***docs, size_t *n, size_t *cap, json_t *v)
{
    if (s3l__array_reserve(docs, cap, *n + 1, sizeof(**docs), 4))
        return S3L_ENOMEM;
    (*docs)[(*n)++] = v;
    return 0;
}

/* The first error libfyaml collected, as "line L, column C: WHAT". */
static int diag_fail(struct fy_diag *diag, struct s3l_error *err)
{
    void *it = NULL;
    struct fy_diag_error *e;
    while (diag && (e = fy_diag_errors_iterate(diag, &it)) != NULL) {
        if (e->type >= FYET_ERROR)
            /* fy_diag_error's line and column count from 1 already (a fy_mark's from 0) */
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "line %d, column %d: %s", e->line,
                                 e->column, e->msg ? e->msg : "syntax error");
    }
    return s3l_error_set(err, S3L_EINVALID_CONFIG, "not a valid YAML document");
}

static void quiet_output(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag, (void)user, (void)buf, (void)len;
}

/* The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629 section 4: no
 * overlong forms, no surrogates, nothing past U+10FFFF), or len when all of it is. */
static size_t utf8_prefix(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
                                : (c >= 0xF0 && c <= 0xF4)   ? 4
                                                             : 0;
        if (n == 0 || i + n > len)
            return i;
        for (size_t k = 1; k < n; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] > 0x9F) ||
            (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] > 0x8F))
            return i;
        i += n;
    }
    return len;
}

static int parse_yaml(const char *text, size_t len, json_t ***docs, size_t *n, size_t *cap,
                      size_t *bad_index, struct s3l_error *err)
{
    /* YAML 1.2 streams are Unicode; a config file is UTF-8. Checked before libfyaml sees it:
     * libfyaml 0.7.12 loops forever on some malformed bytes in a directive (found by fuzzing). */
    size_t ok = utf8_prefix((const unsigned char *)text, len);
    if (ok < len) {
        int line = 1, col = 1;
        for (size_t i = 0; i < ok; i++) {
            if (text[i] == '\n')
                line++, col = 1;
            else if (((unsigned char)text[i] & 0xC0) != 0x80)
                col++;
        }
        *bad_index = 0; /* the file as a whole: its documents are not delimited yet */
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "line %d, column %d: not valid UTF-8",
                             line, col);
    }
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = quiet_output;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg pcfg = {0};
    pcfg.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_JSON_NONE;
    pcfg.diag = diag;
    struct fy_parser *fyp = fy_parser_create(&pcfg);
    int rc = 0;
    if (!fyp || fy_parser_set_string(fyp, text, len) != 0) {
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        goto out;
    }
    for (;;) {
        struct fy_document *fyd = fy_parse_load_document(fyp);
        if (!fyd) {
            if (fy_parser_get_stream_error(fyp)) {
                *bad_index = *n + 1;
                rc = diag_fail(diag, err);
            }
            break;
        }
        struct fy_node *root = fy_document_root(fyd);
        json_t *v = NULL;
        struct conv cv = {err};
        if (!root)
            v = json_null();
        else
            rc = convert(&cv, root, &v);
        fy_parse_document_destroy(fyp, fyd);
        if (rc == 0 && !v)
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        if (rc == 0 && push_doc(docs, n, cap, v) != 0) {
            json_decref(v);
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        }
        if (rc != 0) {
            *bad_index = *n + 1;
            break;
        }
    }
out:
    if (fyp)
        fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}

int s3l__cfg_parse(const char *text, size_t len, bool json, json_t ***docs, size_t *n,
                   size_t *bad_index, struct s3l_error *err)
{
    *docs = NULL;
    *n = 0;
    *bad_index = 0;
    size_t cap = 0;
    int rc;
    if (json) {
        json_error_t je;
        bool nomem;
        json_t *v =
            s3l__json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je, &nomem);
        if (nomem)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory reading a config document");
        if (!v) {
            *bad_index = 1;
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "line %d, column %d: %s", je.line,
                                 je.column, je.text);
        }
        rc = push_doc(docs, n, &cap, v);
        if (rc != 0) {
            json_decref(v);
            return s3l_error_set(err, rc, "out of memory");
        }
        return 0;
    }
    rc = parse_yaml(text, len, docs, n, &cap, bad_index, err);
    if (rc != 0) {
        for (size_t i = 0; i < *n; i++)
            json_decref((*docs)[i]);
        s3l_free(*docs);
        *docs = NULL;
        *n = 0;
    }
    return rc;
}
