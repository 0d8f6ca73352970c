/*
 * creds: the provider dispatch and what the providers share: the credentials struct (copied,
 * wiped), ISO 8601 times, the JSON answers of credential_process and the endpoints, and the
 * shell-like split of a credential_process command.
 */
#include "creds/creds.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "util/util.h"

static void wipe_free(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        s3l_free(s);
    }
}

void s3l_credentials_cleanup(struct s3l_credentials *c)
{
    if (!c)
        return;
    s3l_free(c->access_key_id);
    s3l_free(c->principal);
    wipe_free(c->secret_access_key);
    wipe_free(c->session_token);
    memset(c, 0, sizeof(*c));
}

int s3l__creds_fill(struct s3l_credentials *out, const char *ak, const char *sk, const char *tok,
                    int64_t expiration_ns, const char *source)
{
    s3l_credentials_cleanup(out);
    out->access_key_id = s3l_strdup(ak);
    out->secret_access_key = s3l_strdup(sk);
    out->session_token = tok && *tok ? s3l_strdup(tok) : NULL;
    if (!out->access_key_id || !out->secret_access_key || (tok && *tok && !out->session_token)) {
        s3l_credentials_cleanup(out);
        return S3L_ENOMEM;
    }
    out->expiration_ns = expiration_ns;
    snprintf(out->source, sizeof(out->source), "%s", source ? source : "");
    return 0;
}

int s3l_credentials_copy(struct s3l_credentials *dst, const struct s3l_credentials *src)
{
    if (dst == src)
        return 0;
    int rc = s3l__creds_fill(dst, src->access_key_id, src->secret_access_key,
                             src->session_token, src->expiration_ns, src->source);
    if (rc == 0 && src->principal && !(dst->principal = s3l_strdup(src->principal))) {
        s3l_credentials_cleanup(dst);
        rc = S3L_ENOMEM;
    }
    return rc;
}

void s3l__creds_abbrev(const char *key_id, char *out, size_t max)
{
    size_t n = key_id ? strlen(key_id) : 0;
    if (n <= 8)
        snprintf(out, max, "%s", key_id ? key_id : "");
    else
        snprintf(out, max, "%.4s...%s", key_id, key_id + n - 4);
}

int s3l_creds_provider_new(const struct s3l_creds_provider_ops *ops, void *impl,
                           struct s3l_creds_provider **out, struct s3l_error *err)
{
    *out = NULL;
    if (!ops || !ops->get || ops->version != S3L_CREDS_PROVIDER_OPS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "credentials provider ops: NULL, no get, or version not %d",
                             S3L_CREDS_PROVIDER_OPS_VERSION);
    struct s3l_creds_provider *p = s3l_calloc(1, sizeof(*p));
    if (!p)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a credentials provider");
    p->ops = ops, p->impl = impl;
    *out = p;
    return 0;
}

int s3l_creds_provider_get(struct s3l_creds_provider *p, struct s3l_credentials *out,
                           struct s3l_error *err)
{
    s3l_credentials_cleanup(out);
    if (!p)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "no credentials provider");
    int rc = p->ops->get(p->impl, out, err);
    if (rc != 0)
        s3l_credentials_cleanup(out);
    return rc;
}

void s3l_creds_provider_free(struct s3l_creds_provider *p)
{
    if (!p)
        return;
    if (p->ops->destroy)
        p->ops->destroy(p->impl);
    s3l_free(p);
}

/* ---------------------------------------------------------------- times */

static int digits(const char **s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*s)++) {
        if (!isdigit((unsigned char)**s))
            return -1;
        *v = *v * 10 + (**s - '0');
    }
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int s3l__creds_parse_time(const char *s, int64_t *ns)
{
    int y, mo, d, h, mi, se;
    if (!s || digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
        digits(&s, 2, &d) || (*s != 'T' && *s != 't' && *s != ' ') || !*s++ ||
        digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' ||
        digits(&s, 2, &se))
        return S3L_EINVALID_CONFIG;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return S3L_EINVALID_CONFIG;
    int64_t frac = 0;
    if (*s == '.') {
        s++;
        int64_t scale = 100000000;
        if (!isdigit((unsigned char)*s))
            return S3L_EINVALID_CONFIG;
        for (; isdigit((unsigned char)*s); s++, scale /= 10)
            frac += scale > 0 ? (*s - '0') * scale : 0;
    }
    int64_t off = 0;
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        int sign = *s++ == '-' ? -1 : 1, oh, om;
        if (digits(&s, 2, &oh) || (*s == ':' && !*s++) || digits(&s, 2, &om))
            return S3L_EINVALID_CONFIG;
        off = sign * (int64_t)(oh * 3600 + om * 60);
    } else {
        return S3L_EINVALID_CONFIG; /* a time without zone is ambiguous: refuse it */
    }
    if (*s)
        return S3L_EINVALID_CONFIG;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    *ns = secs * 1000000000 + frac;
    return 0;
}

/* ---------------------------------------------------------------- JSON answers */

static const char *json_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int s3l__creds_from_json(const char *text, size_t len, const char *what, const char *token_key,
                         bool version_required, const char *source, struct s3l_credentials *out,
                         struct s3l_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    int rc = 0;
    if (!json_is_object(doc)) {
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "%s is not a JSON object (line %d)", what,
                           je.line);
        goto done;
    }
    json_t *ver = json_object_get(doc, "Version");
    if (version_required && !(json_is_integer(ver) && json_integer_value(ver) == 1)) {
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "%s: Version is %s; only Version 1 is defined", what,
                           ver ? "not 1" : "missing");
        goto done;
    }
    const char *ak = json_str(doc, "AccessKeyId"), *sk = json_str(doc, "SecretAccessKey");
    const char *tok = json_str(doc, token_key), *exp = json_str(doc, "Expiration");
    if (!ak || !*ak || !sk || !*sk) {
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "%s has no %s", what,
                           !ak || !*ak ? "AccessKeyId" : "SecretAccessKey");
        goto done;
    }
    int64_t exp_ns = 0;
    if (exp && s3l__creds_parse_time(exp, &exp_ns) != 0) {
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "%s: Expiration \"%.40s\" is not an ISO 8601 time", what, exp);
        goto done;
    }
    if (s3l__creds_fill(out, ak, sk, tok, exp_ns, source) != 0)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
done:
    if (doc) {
        /* jansson keeps its own copies of the secrets: wipe them before it frees them. */
        const char *keys[] = {"SecretAccessKey", "SessionToken", "Token"};
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            json_t *v = json_object_get(doc, keys[i]);
            if (json_is_string(v))
                OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
        }
        json_decref(doc);
    }
    return rc;
}

/* ---------------------------------------------------------------- command words */

/* One pass of the split: counts words and bytes (out NULL) or writes them. */
static int split(const char *s, char **argv, char *out, size_t *n_words, size_t *n_bytes)
{
    size_t w = 0, b = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s)
            break;
        if (argv)
            argv[w] = out + b;
        for (; *s && *s != ' ' && *s != '\t' && *s != '\n'; s++) {
            char c = *s;
            if (c == '\'') {
                for (s++; *s && *s != '\''; s++)
                    out ? (void)(out[b++] = *s) : (void)b++;
                if (!*s)
                    return -1;
            } else if (c == '"') {
                for (s++; *s && *s != '"'; s++) {
                    if (*s == '\\' && s[1] && strchr("\\\"", s[1]))
                        s++;
                    out ? (void)(out[b++] = *s) : (void)b++;
                }
                if (!*s)
                    return -1;
            } else {
                if (c == '\\' && s[1])
                    c = *++s;
                else if (c == '\\')
                    return -1;
                out ? (void)(out[b++] = c) : (void)b++;
            }
        }
        out ? (void)(out[b++] = '\0') : (void)b++;
        w++;
    }
    *n_words = w, *n_bytes = b;
    return 0;
}

int s3l__creds_split_words(const char *cmd, char ***argv, struct s3l_error *err)
{
    size_t w = 0, b = 0;
    *argv = NULL;
    if (split(cmd, NULL, NULL, &w, &b) != 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "credential_process has an unterminated quote or escape");
    if (w == 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "credential_process is empty");
    char **v = s3l_malloc((w + 1) * sizeof(char *) + b);
    if (!v)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credential_process");
    split(cmd, v, (char *)(v + w + 1), &w, &b);
    v[w] = NULL;
    *argv = v;
    return 0;
}

void s3l__creds_first_line(const char *s, size_t n, char *out, size_t max)
{
    size_t i = 0;
    while (n > 0 && (*s == '\n' || *s == '\r' || *s == ' '))
        s++, n--;
    for (; i < n && i + 1 < max && s[i] != '\n' && s[i] != '\r'; i++)
        out[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
    if (max)
        out[i] = '\0';
}
