/*
 * Our own AWS Signature Version 4 signer (AWS General Reference, "Create a signed AWS API
 * request"): canonical request, string to sign, signing key, signature, and the Authorization
 * header. It signs header-authenticated requests only (no presigned URLs, no chunked payloads).
 * The steps are exposed in the result so that golden tests check each one against vectors
 * produced independently (the AWS SigV4 test suite and botocore).
 */
#include <stdio.h>
#include <time.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "util/util.h"

#define PART_MAX (64 * 1024)

void s3l__sigv4_result_init(struct s3l__sigv4_result *r)
{
    memset(r, 0, sizeof(*r));
    s3l_buf_init(&r->canonical_request, PART_MAX);
    s3l_buf_init(&r->string_to_sign, PART_MAX);
    s3l_buf_init(&r->canonical_query, PART_MAX);
    s3l_buf_init(&r->authorization, PART_MAX);
}

void s3l__sigv4_result_free(struct s3l__sigv4_result *r)
{
    s3l_buf_free(&r->canonical_request);
    s3l_buf_free(&r->string_to_sign);
    s3l_buf_free(&r->canonical_query);
    s3l_buf_free(&r->authorization);
}

static int hmac(const uint8_t *key, size_t key_len, const char *msg, size_t msg_len,
                uint8_t out[32])
{
    unsigned int n = 0;
    if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, msg_len, out, &n) ||
        n != 32)
        return S3L_EINTERNAL;
    return 0;
}

void s3l__amz_date(time_t t, char out[17])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
        memcpy(out, "19700101T000000Z", 17);
}

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request"). */
static int signing_key(const struct s3l__creds *creds, const char *day, const char *region,
                       const char *service, struct s3l__sigv4_cache *cache, uint8_t key[32])
{
    uint8_t secret_sha[32];
    unsigned int n = 0;
    size_t slen = strlen(creds->secret_key);
    if (!EVP_Digest(creds->secret_key, slen, secret_sha, &n, EVP_sha256(), NULL))
        return S3L_EINTERNAL;
    if (cache && cache->valid && strcmp(cache->day, day) == 0 &&
        strcmp(cache->region, region) == 0 && strcmp(cache->service, service) == 0 &&
        memcmp(cache->secret_sha, secret_sha, 32) == 0) {
        memcpy(key, cache->key, 32);
        return 0;
    }
    struct s3l_buf k0;
    s3l_buf_init(&k0, slen + 8);
    int rc = s3l_buf_printf(&k0, "AWS4%s", creds->secret_key);
    uint8_t a[32], b[32];
    if (rc == 0)
        rc = hmac(k0.ptr, k0.len, day, strlen(day), a);
    if (k0.ptr)
        OPENSSL_cleanse(k0.ptr, k0.len);
    s3l_buf_free(&k0);
    if (rc == 0)
        rc = hmac(a, 32, region, strlen(region), b);
    if (rc == 0)
        rc = hmac(b, 32, service, strlen(service), a);
    if (rc == 0)
        rc = hmac(a, 32, "aws4_request", 12, key);
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(b, sizeof(b));
    if (rc == 0 && cache && strlen(region) < sizeof(cache->region) &&
        strlen(service) < sizeof(cache->service)) {
        memcpy(cache->day, day, 9);
        strcpy(cache->region, region);
        strcpy(cache->service, service);
        memcpy(cache->secret_sha, secret_sha, 32);
        memcpy(cache->key, key, 32);
        cache->valid = true;
    }
    return rc;
}

/* The generic rules' path normalisation (RFC 3986 section 5.2.4, and '//' collapsed). */
static int normalise_path(struct s3l_buf *out, const char *path)
{
    size_t len = strlen(path);
    int rc = 0;
    if (len == 0)
        return s3l_buf_append_byte(out, '/');
    if (path[0] == '/')
        rc = s3l_buf_append_byte(out, '/');
    size_t root = out->len, nseg = 0;
    const char *p = path, *end = path + len;
    while (rc == 0 && p < end) {
        const char *q = memchr(p, '/', (size_t)(end - p));
        size_t n = q ? (size_t)(q - p) : (size_t)(end - p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (nseg > 0) {
                size_t i = out->len;
                while (i > root && out->ptr[i - 1] != '/')
                    i--;
                s3l_buf_truncate(out, i > root ? i - 1 : root);
                nseg--;
            }
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (nseg > 0)
                rc = s3l_buf_append_byte(out, '/');
            if (rc == 0)
                rc = s3l_buf_append(out, p, n);
            nseg++;
        }
        p += n + 1;
    }
    if (rc == 0 && nseg > 0 && path[len - 1] == '/')
        rc = s3l_buf_append_byte(out, '/');
    return rc;
}

static int canonical_uri(struct s3l_buf *out, const struct s3l__sigv4_request *req)
{
    if (req->s3)
        return s3l_buf_append_str(out, req->path[0] ? req->path : "/");
    struct s3l_buf norm;
    s3l_buf_init(&norm, PART_MAX);
    int rc = normalise_path(&norm, req->path);
    if (rc == 0)
        rc = s3l__uri_encode(out, (const char *)norm.ptr, norm.len, true);
    s3l_buf_free(&norm);
    return rc;
}

struct encoded_pair {
    char *name;
    char *value;
};

static int pair_cmp(const void *a, const void *b)
{
    const struct encoded_pair *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static char *encode_dup(const char *s)
{
    struct s3l_buf b;
    s3l_buf_init(&b, PART_MAX);
    uint8_t *p = NULL;
    size_t n = 0;
    if (s3l__uri_encode(&b, s, strlen(s), false) != 0 || s3l_buf_detach(&b, &p, &n) != 0) {
        s3l_buf_free(&b);
        return NULL;
    }
    if (n == 0) { /* an empty buffer's detached bytes carry no NUL */
        s3l_free(p);
        return s3l_strdup("");
    }
    return (char *)p;
}

/* CanonicalQueryString: each name and value encoded, sorted by name then value, '&'-joined. */
static int canonical_query(struct s3l_buf *out, const struct s3l__sigv4_request *req)
{
    if (req->n_query == 0)
        return 0;
    struct encoded_pair *pairs = s3l_calloc(req->n_query, sizeof(*pairs));
    if (!pairs)
        return S3L_ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < req->n_query; i++) {
        pairs[i].name = encode_dup(req->query[i].name);
        pairs[i].value = encode_dup(req->query[i].value ? req->query[i].value : "");
        if (!pairs[i].name || !pairs[i].value)
            rc = S3L_ENOMEM;
    }
    if (rc == 0)
        qsort(pairs, req->n_query, sizeof(*pairs), pair_cmp);
    for (size_t i = 0; rc == 0 && i < req->n_query; i++)
        rc = s3l_buf_printf(out, "%s%s=%s", i ? "&" : "", pairs[i].name, pairs[i].value);
    for (size_t i = 0; i < req->n_query; i++) {
        s3l_free(pairs[i].name);
        s3l_free(pairs[i].value);
    }
    s3l_free(pairs);
    return rc;
}

/* Header value as canonicalised: leading/trailing spaces trimmed, runs of spaces made one. */
static int append_trimmed(struct s3l_buf *out, const char *v)
{
    int rc = 0;
    bool space = false, any = false;
    for (; rc == 0 && *v; v++) {
        if (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') {
            space = any;
            continue;
        }
        if (space)
            rc = s3l_buf_append_byte(out, ' ');
        space = false;
        any = true;
        if (rc == 0)
            rc = s3l_buf_append_byte(out, (uint8_t)*v);
    }
    return rc;
}

static int name_cmp_ci(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a;
        int y = (*b >= 'A' && *b <= 'Z') ? *b + 32 : *b;
        if (x != y || !x)
            return x - y;
    }
}

/* CanonicalHeaders and SignedHeaders. Headers of one name keep their order, joined by ','. */
static int canonical_headers(struct s3l_buf *out, struct s3l__sigv4_result *r,
                             const struct s3l__sigv4_request *req)
{
    size_t n = req->n_headers;
    size_t *idx = s3l_calloc(n ? n : 1, sizeof(*idx));
    if (!idx)
        return S3L_ENOMEM;
    bool host = false;
    for (size_t i = 0; i < n; i++) {
        size_t j = i; /* stable insertion sort by lowercase name */
        while (j > 0 && name_cmp_ci(req->headers[idx[j - 1]].name, req->headers[i].name) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
        host = host || name_cmp_ci(req->headers[i].name, "host") == 0;
    }
    struct s3l_buf sh;
    s3l_buf_init(&sh, sizeof(r->signed_headers) - 1);
    int rc = host ? 0 : S3L_EINVALID_ARGUMENT;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const struct s3l__kv *h = &req->headers[idx[k]];
        bool cont = k > 0 && name_cmp_ci(req->headers[idx[k - 1]].name, h->name) == 0;
        if (cont) {
            rc = s3l_buf_append_byte(out, ',');
        } else {
            if (k > 0)
                rc = s3l_buf_append_byte(out, '\n');
            for (const char *c = h->name; rc == 0 && *c; c++) {
                uint8_t lc = (uint8_t)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
                rc = s3l_buf_append_byte(out, lc);
                if (rc == 0)
                    rc = s3l_buf_append_byte(&sh, lc);
            }
            if (rc == 0 && k + 1 < n)
                rc = s3l_buf_append_byte(&sh, ';');
            if (rc == 0)
                rc = s3l_buf_append_byte(out, ':');
        }
        if (rc == 0)
            rc = append_trimmed(out, h->value ? h->value : "");
    }
    if (rc == 0)
        rc = s3l_buf_append_byte(out, '\n');
    /* a trailing ';' appears when the last names repeat: drop it */
    if (rc == 0 && sh.len > 0 && sh.ptr[sh.len - 1] == ';')
        s3l_buf_truncate(&sh, sh.len - 1);
    if (rc == 0)
        memcpy(r->signed_headers, sh.ptr ? (char *)sh.ptr : "", sh.len + 1);
    s3l_buf_free(&sh);
    s3l_free(idx);
    return rc;
}

static int build_canonical_request(const struct s3l__sigv4_request *req,
                                   struct s3l__sigv4_result *r)
{
    struct s3l_buf *cr = &r->canonical_request;
    int rc = s3l_buf_printf(cr, "%s\n", req->method);
    if (rc == 0)
        rc = canonical_uri(cr, req);
    if (rc == 0)
        rc = canonical_query(&r->canonical_query, req);
    if (rc == 0)
        rc = s3l_buf_printf(cr, "\n%s\n", r->canonical_query.ptr ? (char *)r->canonical_query.ptr
                                                                   : "");
    if (rc == 0)
        rc = canonical_headers(cr, r, req);
    if (rc == 0)
        rc = s3l_buf_printf(cr, "\n%s\n%s", r->signed_headers, req->payload_hash);
    return rc;
}

int s3l__sigv4_sign(const struct s3l__sigv4_request *req, const struct s3l__creds *creds,
                    const char *region, const char *service, time_t now,
                    struct s3l__sigv4_cache *cache, struct s3l__sigv4_result *r)
{
    if (!req || !req->method || !req->path || !req->payload_hash || !creds ||
        !creds->access_key || !creds->secret_key || !region || !service || !r)
        return S3L_EINVALID_ARGUMENT;
    s3l_buf_reset(&r->canonical_request);
    s3l_buf_reset(&r->string_to_sign);
    s3l_buf_reset(&r->canonical_query);
    s3l_buf_reset(&r->authorization);
    s3l__amz_date(now, r->amz_date);
    char day[9];
    memcpy(day, r->amz_date, 8);
    day[8] = 0;

    int rc = build_canonical_request(req, r);
    char cr_hash[65];
    if (rc == 0)
        rc = s3l__sha256_hex(r->canonical_request.ptr, r->canonical_request.len, cr_hash);
    if (rc == 0)
        rc = s3l_buf_printf(&r->string_to_sign, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s",
                            r->amz_date, day, region, service, cr_hash);
    uint8_t key[32], sig[32];
    if (rc == 0)
        rc = signing_key(creds, day, region, service, cache, key);
    if (rc == 0)
        rc = hmac(key, 32, (const char *)r->string_to_sign.ptr, r->string_to_sign.len, sig);
    OPENSSL_cleanse(key, sizeof(key));
    if (rc == 0) {
        s3l_hex_encode(sig, 32, r->signature);
        rc = s3l_buf_printf(&r->authorization,
                            "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, "
                            "SignedHeaders=%s, Signature=%s",
                            creds->access_key, day, region, service, r->signed_headers,
                            r->signature);
    }
    return rc;
}
