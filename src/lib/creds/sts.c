/*
 * creds: the STS client of the role providers (role.c, web_identity.c, role_on_top.c). Two
 * actions of the STS Query API (AWS STS API Reference, "AssumeRole" and
 * "AssumeRoleWithWebIdentity"; "Making Query requests"): a POST of
 * application/x-www-form-urlencoded parameters Action, Version=2011-06-15, RoleArn,
 * RoleSessionName, ExternalId, DurationSeconds (AssumeRole) or WebIdentityToken
 * (AssumeRoleWithWebIdentity), signed with SigV4 for service "sts" (util/sigv4.c; the web
 * identity call is unsigned, as botocore sends it). The answer is XML (util/xml.c):
 * ...Result/Credentials/{AccessKeyId, SecretAccessKey, SessionToken, Expiration} and
 * AssumedRoleUser/Arn; an error is ErrorResponse/Error/{Code, Message} (AWS) or the S3 <Error>
 * shape (Ceph RGW). The body may hold the web identity token and the answer holds secrets: both
 * are wiped, and neither is ever quoted in a message.
 *
 * Endpoint: AWS_ENDPOINT_URL_STS, then AWS_ENDPOINT_URL, then the profile's services section
 * (`sts =` then `endpoint_url =` under it), then the profile's endpoint_url (the precedence of
 * the AWS SDKs and Tools Reference Guide, "Service-specific endpoints"), else the regional https://sts.REGION.amazonaws.com (the SDKs' default from 2024;
 * botocore 1.29 still defaults to the global endpoint). Region: the caller's (the profile's),
 * else AWS_REGION, AWS_DEFAULT_REGION, the profile's region, us-east-1. Retries: THROTTLED and TRANSIENT, 3 attempts
 * with backoff 200 ms, 400 ms; anything else fails at once.
 */
#include "creds/creds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "os/os.h"
#include "util/util.h"

#define STS_VERSION "2011-06-15"
#define STS_TIMEOUT_MS 10000L
#define STS_MAX_ANSWER (256 * 1024)
#define ATTEMPTS 3

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Where to send: endpoint URL (no trailing '/'), host[:port] for the Host header. */
struct where {
    char url[512];
    char host[256];
    char path[256]; /* the endpoint's path, "/" when it has none: the signed canonical URI */
    char region[64];
};

static int resolve_where(const struct s3l__sts_request *rq, struct where *w,
                         struct s3l_error *err)
{
    const char *region = rq->region;
    if (!region)
        region = var("AWS_REGION");
    if (!region)
        region = var("AWS_DEFAULT_REGION");
    if (!region && rq->profile_region && *rq->profile_region)
        region = rq->profile_region;
    if (!region)
        region = "us-east-1";
    if (strlen(region) >= sizeof(w->region) || strpbrk(region, "/ \t\r\n"))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "STS: region \"%.64s\" is not valid",
                             region);
    snprintf(w->region, sizeof(w->region), "%s", region);
    const char *ep = rq->endpoint ? rq->endpoint : var("AWS_ENDPOINT_URL_STS");
    if (!ep)
        ep = var("AWS_ENDPOINT_URL");
    if (!ep && rq->profile_endpoint && *rq->profile_endpoint)
        ep = rq->profile_endpoint;
    if (!ep)
        ep = rq->endpoint_fallback;
    char built[128];
    if (!ep) {
        snprintf(built, sizeof(built), "https://sts.%s.amazonaws.com", region);
        ep = built;
    }
    const char *h = strstr(ep, "://");
    if (!h || (strncmp(ep, "https://", 8) != 0 && strncmp(ep, "http://", 7) != 0) ||
        strlen(ep) >= sizeof(w->url) - 2)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "STS endpoint \"%.200s\" is not http(s)://host[:port]", ep);
    h += 3;
    size_t hn = strcspn(h, "/?#");
    if (hn == 0 || hn >= sizeof(w->host) || h[hn] == '?' || h[hn] == '#')
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "STS endpoint \"%.200s\" is not http(s)://host[:port]", ep);
    memcpy(w->host, h, hn);
    w->host[hn] = '\0';
    size_t n = strlen(ep);
    while (n > 0 && ep[n - 1] == '/')
        n--;
    snprintf(w->url, sizeof(w->url), "%.*s/", (int)n, ep);
    snprintf(w->path, sizeof(w->path), "%s", w->url + (size_t)(h - ep) + hn);
    if (strcspn(w->path, " %") != strlen(w->path))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "STS endpoint \"%.200s\": its path may hold no space or '%%'", ep);
    return 0;
}

/* GetCallerIdentity (AWS STS API Reference): no parameters, no permission needed, answers
 * GetCallerIdentityResult/{Arn, UserId, Account}. */
static bool identity(const struct s3l__sts_request *rq)
{
    return strcmp(rq->action, "GetCallerIdentity") == 0;
}

/* The form body: name=value pairs, RFC 3986-encoded (util/uri.c), joined by '&'. */
static int form(struct s3l_buf *b, const struct s3l__kv *kv, size_t n)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (i)
            rc = s3l_buf_append_byte(b, '&');
        if (rc == 0)
            rc = s3l__uri_encode(b, kv[i].name, strlen(kv[i].name), false);
        if (rc == 0)
            rc = s3l_buf_append_byte(b, '=');
        if (rc == 0)
            rc = s3l__uri_encode(b, kv[i].value, strlen(kv[i].value), false);
    }
    return rc;
}

/* The request's parameters in kv (at most 7); strings in num and session are the caller's. */
static size_t params(const struct s3l__sts_request *rq, struct s3l__kv *kv, char num[16],
                     char session[64])
{
    size_t n = 0;
    kv[n++] = (struct s3l__kv){"Action", rq->action};
    kv[n++] = (struct s3l__kv){"Version", STS_VERSION};
    if (identity(rq))
        return n;
    kv[n++] = (struct s3l__kv){"RoleArn", rq->role_arn};
    const char *sn = rq->session_name;
    if (!sn || !*sn) {
        /* botocore's default (credentials.py, AssumeRoleCredentialFetcher) */
        snprintf(session, 64, "botocore-session-%lld",
                 (long long)(s3l__os_now_ns() / 1000000000));
        sn = session;
    }
    kv[n++] = (struct s3l__kv){"RoleSessionName", sn};
    if (rq->duration_seconds > 0) {
        snprintf(num, 16, "%d", rq->duration_seconds);
        kv[n++] = (struct s3l__kv){"DurationSeconds", num};
    }
    if (rq->external_id && *rq->external_id)
        kv[n++] = (struct s3l__kv){"ExternalId", rq->external_id};
    if (rq->web_identity_token)
        kv[n++] = (struct s3l__kv){"WebIdentityToken", rq->web_identity_token};
    return n;
}

/* The signed (or, without a signer, unsigned) request's headers into hdr (NULL-terminated),
 * their strings in hb. */
static int headers(const struct s3l__sts_request *rq, const struct where *w,
                   const struct s3l_buf *body, struct s3l_buf *hb, const char *hdr[8])
{
    static const char ctype[] = "application/x-www-form-urlencoded; charset=utf-8";
    size_t n = 0;
    int rc = s3l_buf_printf(hb, "Host: %s", w->host);
    size_t at[6];
    at[n++] = 0;
    if (rc == 0) {
        rc = s3l_buf_append_byte(hb, '\0');
        at[n++] = hb->len;
        rc = rc ? rc : s3l_buf_printf(hb, "Content-Type: %s", ctype);
    }
    if (rc == 0 && rq->signer) {
        char hash[65], date[17];
        const char *tok = rq->signer->session_token;
        time_t now = (time_t)(s3l__os_now_ns() / 1000000000);
        s3l__amz_date(now, date);
        rc = s3l__sha256_hex(body->ptr, body->len, hash);
        struct s3l__kv sh[4] = {{"host", w->host}, {"content-type", ctype}, {"x-amz-date", date},
                                {"x-amz-security-token", tok}};
        struct s3l__sigv4_request sr = {"POST", w->path, NULL, 0, sh, tok && *tok ? 4 : 3, hash,
                                        false};
        struct s3l__creds sc = {rq->signer->access_key_id, rq->signer->secret_access_key, tok};
        struct s3l__sigv4_result r;
        s3l__sigv4_result_init(&r);
        rc = rc ? rc : s3l__sigv4_sign(&sr, &sc, w->region, "sts", now, NULL, &r);
        if (rc == 0) {
            rc = s3l_buf_append_byte(hb, '\0');
            at[n++] = hb->len;
            rc = rc ? rc : s3l_buf_printf(hb, "X-Amz-Date: %s", date);
        }
        if (rc == 0) {
            rc = s3l_buf_append_byte(hb, '\0');
            at[n++] = hb->len;
            rc = rc ? rc : s3l_buf_printf(hb, "Authorization: %s", (char *)r.authorization.ptr);
        }
        if (rc == 0 && tok && *tok) {
            rc = s3l_buf_append_byte(hb, '\0');
            at[n++] = hb->len;
            rc = rc ? rc : s3l_buf_printf(hb, "X-Amz-Security-Token: %s", tok);
        }
        s3l__sigv4_result_free(&r);
    }
    if (rc == 0)
        rc = s3l_buf_append_byte(hb, '\0');
    for (size_t i = 0; rc == 0 && i < n; i++)
        hdr[i] = (const char *)hb->ptr + at[i];
    hdr[rc == 0 ? n : 0] = NULL;
    return rc;
}

/* The class of an STS error code (AWS STS API Reference, each action's "Errors" and "Common
 * Errors"), else of the HTTP status. */
static int classify(const char *code, long status)
{
    static const struct {
        const char *code;
        int cls;
    } t[] = {
        {"AccessDenied", S3L_EPERMISSION_DENIED},
        {"InvalidClientTokenId", S3L_EAUTH_INVALID},
        {"SignatureDoesNotMatch", S3L_EAUTH_INVALID},
        {"IncompleteSignature", S3L_EAUTH_INVALID},
        {"MissingAuthenticationToken", S3L_EAUTH_INVALID},
        {"InvalidAccessKeyId", S3L_EAUTH_INVALID},
        {"InvalidIdentityToken", S3L_EAUTH_INVALID},
        {"IDPRejectedClaim", S3L_EAUTH_INVALID},
        {"ExpiredToken", S3L_EAUTH_EXPIRED},
        {"ExpiredTokenException", S3L_EAUTH_EXPIRED},
        {"Throttling", S3L_ETHROTTLED},
        {"ThrottlingException", S3L_ETHROTTLED},
        {"RequestLimitExceeded", S3L_ETHROTTLED},
        {"IDPCommunicationError", S3L_ETRANSIENT},
        {"ServiceUnavailable", S3L_ETRANSIENT},
        {"InternalFailure", S3L_ETRANSIENT},
        {"ValidationError", S3L_EINVALID_CONFIG},
        {"MalformedPolicyDocument", S3L_EINVALID_CONFIG},
        {"RegionDisabledException", S3L_EPERMISSION_DENIED},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(t); i++)
        if (strcmp(code, t[i].code) == 0)
            return t[i].cls;
    if (status >= 500)
        return S3L_ETRANSIENT;
    if (status == 401)
        return S3L_EAUTH_INVALID;
    if (status == 403)
        return S3L_EPERMISSION_DENIED;
    return S3L_EINVALID_CONFIG;
}

/* "the source's credentials (SOURCE, AKIA...WXYZ)" or the signer's principal, for messages. */
static void who(const struct s3l__sts_request *rq, char *out, size_t max)
{
    if (!rq->signer) {
        snprintf(out, max, "a web identity token (unsigned)");
        return;
    }
    char key[16];
    s3l__creds_abbrev(rq->signer->access_key_id, key, sizeof(key));
    if (rq->signer->principal)
        snprintf(out, max, "%.300s (source %s)", rq->signer->principal, rq->signer->source);
    else
        snprintf(out, max, "key %s (source %s)", key, rq->signer->source);
}

static int fail(const struct s3l__sts_request *rq, long status, const char *code,
                const char *msg, const char *request_id, struct s3l_error *err)
{
    int cls = classify(code, status);
    char by[400];
    who(rq, by, sizeof(by));
    if (identity(rq)) /* asked of any S3-compatible endpoint, which may echo what it was
                          * sent (a session token): its Message is left out, and a Code
                          * that is not a plain word too */
        s3l_error_set(err, cls, "STS GetCallerIdentity as %s: %s (HTTP %ld)", by,
                      code[0] && strlen(code) < 64 && strspn(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                   "abcdefghijklmnopqrstuvwxyz"
                                                                   "0123456789.") == strlen(code)
                          ? code
                          : "an error",
                      status);
    else if (cls == S3L_EPERMISSION_DENIED && strcmp(code, "AccessDenied") == 0)
        s3l_error_set(err, cls,
                      "STS %s of role %.200s as %s refused (AccessDenied, HTTP %ld): check the "
                      "role's trust policy first (its Principal must name the caller%s), then "
                      "the permissions policy",
                      rq->action, rq->role_arn, by, status,
                      rq->web_identity_token ? " and the token's issuer and audience"
                      : rq->external_id      ? ", its sts:ExternalId condition the external id "
                                               "given"
                                             : "; an sts:ExternalId condition needs an external "
                                               "id, and none was given");
    else if (strcmp(code, "NoSuchEntity") == 0) /* Ceph RGW; AWS answers AccessDenied */
        s3l_error_set(err, cls, "STS %s: role %.200s does not exist (NoSuchEntity, HTTP %ld)",
                      rq->action, rq->role_arn, status);
    else
        s3l_error_set(err, cls, "STS %s of role %.200s as %s: %s (HTTP %ld)%s%.150s", rq->action,
                      rq->role_arn, by, code[0] ? code : "error", status, msg[0] ? ": " : "",
                      msg);
    if (err) {
        err->http_status = (int)status;
        snprintf(err->s3_code, sizeof(err->s3_code), "%s", code);
        snprintf(err->request_id, sizeof(err->request_id), "%s",
                 identity(rq) ? "" : request_id);
        err->retryable = cls == S3L_ETHROTTLED || cls == S3L_ETRANSIENT;
    }
    return cls;
}

/* Reads the answer of a 200 into out, or an error answer into err. */
static int answer(const struct s3l__sts_request *rq, long status, const struct s3l_buf *body,
                  struct s3l_credentials *out, struct s3l_error *err)
{
    struct s3l__xml_doc doc;
    struct s3l_error perr = {0};
    int rc = s3l__xml_parse(&doc, body->ptr, body->len, &perr);
    if (rc != 0 || status != 200) {
        const struct s3l__xml_node *e = rc == 0 ? doc.root : NULL;
        if (e && strcmp(e->name, "ErrorResponse") == 0)
            e = s3l__xml_child(e, "Error");
        const char *code = e ? s3l__xml_text(e, "Code") : NULL;
        const char *msg = e ? s3l__xml_text(e, "Message") : NULL;
        const char *rid = rc == 0 ? s3l__xml_text(doc.root, "RequestId") : NULL;
        if (status == 200)
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "STS %s: the answer is not XML (%s)",
                               rq->action, perr.message);
        else
            rc = fail(rq, status, code ? code : "", msg ? msg : "", rid ? rid : "", err);
        s3l__xml_doc_wipe(&doc);
        s3l__xml_doc_free(&doc);
        return rc;
    }
    char result[64];
    snprintf(result, sizeof(result), "%sResult", rq->action);
    const struct s3l__xml_node *r = s3l__xml_child(doc.root, result);
    if (identity(rq)) {
        const char *who_arn = s3l__xml_text(r, "Arn");
        s3l_credentials_cleanup(out);
        if (!who_arn || !*who_arn)
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                               "STS GetCallerIdentity: the answer has no %s/Arn", result);
        else if (!(out->principal = s3l_strdup(who_arn)))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory for the caller's ARN");
        s3l__xml_doc_free(&doc);
        return rc;
    }
    const struct s3l__xml_node *c = s3l__xml_child(r, "Credentials");
    const char *ak = s3l__xml_text(c, "AccessKeyId"), *sk = s3l__xml_text(c, "SecretAccessKey");
    const char *tok = s3l__xml_text(c, "SessionToken"), *exp = s3l__xml_text(c, "Expiration");
    const char *arn = s3l__xml_text(s3l__xml_child(r, "AssumedRoleUser"), "Arn");
    int64_t exp_ns = 0;
    if (!ak || !*ak || !sk || !*sk || !exp || s3l__creds_parse_time(exp, &exp_ns) != 0)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "STS %s of role %.200s: the answer has no %s/Credentials with "
                           "AccessKeyId, SecretAccessKey and Expiration",
                           rq->action, rq->role_arn, result);
    else if ((rc = s3l__creds_fill(out, ak, sk, tok, exp_ns, rq->source)) != 0 ||
             (arn && *arn && !(out->principal = s3l_strdup(arn)))) {
        s3l_credentials_cleanup(out);
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory for STS credentials");
    }
    s3l__xml_doc_wipe(&doc);
    s3l__xml_doc_free(&doc);
    return rc;
}

static int attempt(const struct s3l__sts_request *rq, const struct where *w,
                   const struct s3l_buf *form_body, struct s3l_credentials *out,
                   struct s3l_error *err)
{
    struct s3l_buf hb, body;
    s3l_buf_init(&hb, 16384);
    s3l_buf_init(&body, STS_MAX_ANSWER);
    const char *hdr[8];
    int rc = headers(rq, w, form_body, &hb, hdr);
    if (rc != 0) {
        s3l_error_set(err, rc, "STS %s: could not sign the request", rq->action);
    } else {
        struct s3l__creds_http_req hr = {"POST",          w->url, hdr, form_body->ptr,
                                         form_body->len, STS_TIMEOUT_MS, false};
        long status = 0;
        char reason[160];
        rc = s3l__creds_http_do(&hr, &status, &body, reason, sizeof(reason), err);
        if (rc == 0 && status == 0) {
            rc = s3l_error_set(err, S3L_ETRANSIENT, "STS %s%s%.200s at %.200s: %s", rq->action,
                               identity(rq) ? "" : " of role ", rq->role_arn, w->url, reason);
            if (err)
                err->retryable = true;
        } else if (rc == 0) {
            rc = answer(rq, status, &body, out, err);
        }
    }
    OPENSSL_cleanse(hb.ptr, hb.cap); /* the session token */
    OPENSSL_cleanse(body.ptr, body.cap);
    s3l_buf_free(&hb);
    s3l_buf_free(&body);
    return rc;
}

int s3l_creds_caller_identity(const struct s3l_credentials *signer, const char *region,
                              const char *endpoint, const char *endpoint_fallback, char **arn,
                              struct s3l_error *err)
{
    *arn = NULL;
    if (!signer || !signer->access_key_id || !signer->secret_access_key)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "GetCallerIdentity: no credentials");
    struct s3l__sts_request rq = {0};
    rq.action = "GetCallerIdentity";
    rq.role_arn = "";
    rq.signer = signer;
    rq.region = region;
    rq.endpoint = endpoint;
    rq.endpoint_fallback = endpoint_fallback;
    rq.source = signer->source;
    struct s3l_credentials got = {0};
    int rc = s3l__sts_assume(&rq, &got, err);
    if (rc == 0) {
        *arn = got.principal;
        got.principal = NULL;
    }
    s3l_credentials_cleanup(&got);
    return rc;
}

int s3l__sts_assume(const struct s3l__sts_request *rq, struct s3l_credentials *out,
                    struct s3l_error *err)
{
    struct where w;
    int rc = resolve_where(rq, &w, err);
    if (rc != 0)
        return rc;
    struct s3l__kv kv[8];
    char num[16], session[64];
    size_t n = params(rq, kv, num, session);
    struct s3l_buf fb;
    s3l_buf_init(&fb, 64 * 1024);
    rc = form(&fb, kv, n);
    if (rc != 0) {
        OPENSSL_cleanse(fb.ptr, fb.cap);
        s3l_buf_free(&fb);
        return s3l_error_set(err, rc, "STS %s: the request is over 64 KiB", rq->action);
    }
    for (int i = 0; i < ATTEMPTS; i++) {
        struct s3l_error e = {0};
        rc = attempt(rq, &w, &fb, out, &e);
        if (rc == 0 || (rc != S3L_ETHROTTLED && rc != S3L_ETRANSIENT) || i + 1 == ATTEMPTS) {
            if (rc != 0 && err && !err->code) {
                *err = e;
                err->code = rc;
            }
            break;
        }
        s3l__os_sleep_ms(200L << i);
    }
    OPENSSL_cleanse(fb.ptr, fb.cap); /* a web identity token */
    s3l_buf_free(&fb);
    return rc;
}
