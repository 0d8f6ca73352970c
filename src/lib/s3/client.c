/*
 * The S3 client: configuration (from the options, else the environment as the AWS tools read
 * it), checks of bucket names and keys before anything is sent, and the single-object
 * operations (PutObject, GetObject, HeadObject, HeadBucket, ListObjectsV2, DeleteObject,
 * CopyObject). Multipart operations and DeleteObjects are in multipart.c. Each operation builds
 * one struct s3l__http_req and hands it to the transport (http.c), which signs, sends, retries
 * and classifies; the operation then reads the answer it expects.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <strings.h>

#include "os/os.h"
#include "s3/s3_int.h"

/* ------------------------------------------------------------------ small helpers */

void s3l__base64(const uint8_t *in, size_t n, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1; /* reflected Castagnoli polynomial */
        crc_table[i] = c;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The SSE4.2 crc32 instruction computes exactly CRC-32C, 8 bytes at a time (~8 GB/s here). */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t c, const uint8_t *p,
                                                             size_t len)
{
    uint64_t c64 = c;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
    }
    c = (uint32_t)c64;
    for (; len > 0; p++, len--)
        c = __builtin_ia32_crc32qi(c, *p);
    return c;
}
#endif

uint32_t s3l__crc32c_update(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t c = crc ^ 0xFFFFFFFFu;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_hw(c, p, len) ^ 0xFFFFFFFFu;
#endif
    pthread_once(&crc_once, crc_init);
    for (size_t i = 0; i < len; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t s3l__crc32c(const void *data, size_t len)
{
    return s3l__crc32c_update(0, data, len);
}

int s3l__digest_begin(struct s3l__digest *d, enum s3l_s3_integrity kind)
{
    d->kind = kind;
    d->crc = 0;
    if (kind != S3L_S3_INTEGRITY_MD5)
        return 0;
    return s3l__md_init(&d->md, S3L__MD_MD5, NULL);
}

int s3l__digest_update(struct s3l__digest *d, const void *data, size_t len)
{
    if (d->kind == S3L_S3_INTEGRITY_MD5)
        return s3l__md_update(&d->md, data, len, NULL);
    if (d->kind == S3L_S3_INTEGRITY_CRC32C)
        d->crc = s3l__crc32c_update(d->crc, data, len);
    return 0;
}

int s3l__digest_end(struct s3l__digest *d, const char **name, char *b64)
{
    *name = NULL;
    b64[0] = 0;
    if (d->kind == S3L_S3_INTEGRITY_MD5) {
        uint8_t md[S3L__MD_MAX];
        if (s3l__md_final(&d->md, md, NULL) != 0)
            return S3L_EINTERNAL;
        s3l__base64(md, 16, b64);
        *name = "Content-MD5";
    } else if (d->kind == S3L_S3_INTEGRITY_CRC32C) {
        uint32_t v = d->crc; /* big-endian bytes, as x-amz-checksum-crc32c wants them */
        uint8_t be[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
        s3l__base64(be, 4, b64);
        *name = "x-amz-checksum-crc32c";
    }
    return 0;
}

void s3l__digest_free(struct s3l__digest *d)
{
    s3l__md_free(&d->md);
}

int s3l__check_bucket(const char *b, struct s3l_error *err)
{
    size_t n = b ? strlen(b) : 0;
    const char *why = NULL;
    if (n < 3 || n > 63)
        why = "must be 3 to 63 characters long";
    for (size_t i = 0; !why && i < n; i++) {
        char ch = b[i];
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (!alnum && ch != '.' && ch != '-')
            why = "may hold only lowercase letters, digits, '.' and '-'";
        else if ((i == 0 || i == n - 1) && !alnum)
            why = "must begin and end with a letter or digit";
        else if (ch == '.' && i + 1 < n && (b[i + 1] == '.' || b[i + 1] == '-' || b[i - 1] == '-'))
            why = "may not hold '..', '.-' or '-.'";
    }
    unsigned a, bb, cc, d;
    char tail;
    if (!why && sscanf(b, "%u.%u.%u.%u%c", &a, &bb, &cc, &d, &tail) == 4)
        why = "may not look like an IP address";
    if (why)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "bucket name \"%.80s\" %s", b ? b : "",
                             why);
    return 0;
}

/* Valid UTF-8 (RFC 3629): no overlongs, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const uint8_t *s, size_t n, size_t *bad)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        if (len == 0 || i + len > n)
            return *bad = i, false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return *bad = i, false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return *bad = i, false;
        i += len;
    }
    return true;
}

int s3l__check_key(const char *key, struct s3l_error *err)
{
    size_t n = key ? strlen(key) : 0, bad = 0;
    if (n == 0)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "object key is empty");
    if (n > S3L_S3_KEY_MAX)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "object key \"%.60s...\" is %zu bytes; S3 takes at most %d", key, n,
                             S3L_S3_KEY_MAX);
    if (!valid_utf8((const uint8_t *)key, n, &bad))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "object key is not valid UTF-8 at byte %zu", bad);
    return 0;
}

/* ------------------------------------------------------------------ configuration */

/* Splits an endpoint URL into scheme and host[:port]; only "/" may follow the authority. */
static int parse_endpoint(struct s3l_s3_client *c, const char *ep, struct s3l_error *err)
{
    /* Userinfo (http://USER:PASSWORD@host) is refused before the endpoint enters any message:
     * the password would be in every error that names the endpoint. S3 does not use it anyway
     * (requests are signed with the access keys). The message shows the host only. */
    const char *auth = strstr(ep, "://");
    auth = auth ? auth + 3 : ep;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', alen);
    if (at) {
        const char *host = at + 1;
        while (memchr(host, '@', alen - (size_t)(host - auth)))
            host = (const char *)memchr(host, '@', alen - (size_t)(host - auth)) + 1;
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "endpoint %.*s[userinfo]@%.*s: a user name or password in the "
                             "endpoint URL is refused (it would show in messages and logs; S3 "
                             "requests are signed with AWS_ACCESS_KEY_ID and "
                             "AWS_SECRET_ACCESS_KEY instead)",
                             (int)(auth - ep), ep, (int)(alen - (size_t)(host - auth)), host);
    }
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
    int rc = u ? 0 : S3L_ENOMEM;
    if (rc == 0 && curl_url_set(u, CURLUPART_URL, ep, 0) != CURLUE_OK)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "endpoint \"%.200s\" is not a URL (expected http(s)://host[:port])", ep);
    if (rc == 0 && (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
                    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK))
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "endpoint \"%.200s\" has no host", ep);
    if (rc == 0 && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "endpoint \"%.200s\": scheme must be http or https", ep);
    if (rc == 0 && curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK && path &&
        strcmp(path, "/") != 0 && path[0])
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "endpoint \"%.200s\" has a path; give only scheme, host and port", ep);
    if (rc == 0) {
        curl_url_get(u, CURLUPART_PORT, &port, 0);
        struct s3l_buf h;
        s3l_buf_init(&h, 512);
        rc = s3l_buf_printf(&h, "%s%s%s", host, port ? ":" : "", port ? port : "");
        uint8_t *p = NULL;
        size_t n;
        if (rc == 0)
            rc = s3l_buf_detach(&h, &p, &n);
        s3l_buf_free(&h);
        c->host = (char *)p;
        c->scheme = s3l_strdup(scheme);
        if (rc == 0 && (!c->host || !c->scheme))
            rc = S3L_ENOMEM;
    }
    curl_free(scheme), curl_free(host), curl_free(port), curl_free(path);
    curl_url_cleanup(u);
    return s3l__oom(err, rc, "parsing the endpoint");
}

static int dup_opt(char **dst, const char *src)
{
    if (!src)
        return 0;
    *dst = s3l_strdup(src);
    return *dst ? 0 : S3L_ENOMEM;
}

static int set_numbers(struct s3l_s3_client *c, const struct s3l_s3_config *cfg)
{
    c->connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 10000;
    c->low_speed_time_s = cfg->low_speed_time_s > 0 ? cfg->low_speed_time_s : 30;
    c->max_attempts = cfg->max_attempts > 0 ? cfg->max_attempts : 6;
    c->backoff_base_ms = cfg->backoff_base_ms > 0 ? cfg->backoff_base_ms : 100;
    c->backoff_max_ms = cfg->backoff_max_ms > 0 ? cfg->backoff_max_ms : 10000;
    c->max_response = cfg->max_response_bytes ? cfg->max_response_bytes : 16u << 20;
    c->max_request = cfg->max_request_bytes ? cfg->max_request_bytes : (size_t)5 << 30;
    c->max_in_flight = cfg->max_in_flight > 0 ? S3L_MIN(cfg->max_in_flight, 64) : 4;
    c->in_flight_limit = c->max_in_flight;
    c->integrity = cfg->integrity;
    c->sign_payload = cfg->sign_payload;
    /* a Content-MD5 upload holds one more: a full part waits to be hashed with the next one */
    c->max_bufs = cfg->max_part_buffers > 0
                      ? cfg->max_part_buffers
                      : c->max_in_flight + 1 + (c->integrity == S3L_S3_INTEGRITY_MD5);
    c->rng = (uint64_t)s3l__os_now_ns() * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)c;
    if (!c->rng)
        c->rng = 1;
    return 0;
}

/* Keys in cfg (static), else cfg's provider, else the default chain behind a cache
 * (include/s3l/creds.h); then the first answer, so that a client without credentials is not
 * created. */
static int set_credentials(struct s3l_s3_client *c, const struct s3l_s3_config *cfg,
                           struct s3l_error *err)
{
    int rc = 0;
    if ((cfg->access_key || cfg->secret_key) && !(cfg->access_key && cfg->secret_key))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "S3 credentials: an access key needs its secret key");
    if (cfg->access_key) {
        c->own_creds = true;
        rc = s3l_creds_static_new(cfg->access_key, cfg->secret_key, cfg->session_token,
                                  &c->creds, err);
    } else if (cfg->credentials) {
        c->creds = cfg->credentials;
    } else {
        struct s3l_creds_provider *chain = NULL;
        c->own_creds = true;
        rc = s3l_creds_default_chain_new(NULL, &chain, err);
        if (rc == 0)
            rc = s3l_creds_cache_new(chain, &c->creds, err);
    }
    return rc ? rc : s3l__s3_refresh_creds(c, err);
}

static int set_where(struct s3l_s3_client *c, const struct s3l_s3_config *cfg,
                     struct s3l_error *err)
{
    /* From cfg only: the library reads no environment (the CLI passes AWS_REGION and
     * AWS_ENDPOINT_URL_S3 in cfg). */
    const char *region = cfg->region ? cfg->region : "us-east-1";
    if (!*region || strlen(region) >= 64 || strpbrk(region, "/ \t\r\n"))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "region \"%.64s\" is not valid", region);
    int rc = dup_opt(&c->region, region);
    const char *ep = cfg->endpoint;
    if (rc == 0 && ep) {
        rc = parse_endpoint(c, ep, err);
        c->path_style = cfg->path_style >= 0;
    } else if (rc == 0) {
        c->aws = true;
        c->scheme = s3l_strdup("https");
        struct s3l_buf h;
        s3l_buf_init(&h, 256);
        uint8_t *p = NULL;
        size_t n;
        rc = s3l_buf_printf(&h, "s3.%s.amazonaws.com", region);
        if (rc == 0)
            rc = s3l_buf_detach(&h, &p, &n);
        s3l_buf_free(&h);
        c->host = (char *)p;
        c->path_style = cfg->path_style > 0;
        if (rc == 0 && (!c->scheme || !c->host))
            rc = S3L_ENOMEM;
    }
    return s3l__oom(err, rc, "setting the endpoint");
}

/* The lock and condition variable that let several threads share the client (s3_int.h). */
static int init_sync(struct s3l_s3_client *c)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return S3L_ENOMEM;
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 ? 0 : S3L_EINTERNAL;
    if (rc == 0 && pthread_mutex_init(&c->mu, NULL) != 0)
        rc = S3L_ENOMEM;
    if (rc == 0 && pthread_cond_init(&c->cv, &ca) != 0) {
        pthread_mutex_destroy(&c->mu);
        rc = S3L_ENOMEM;
    }
    pthread_condattr_destroy(&ca);
    c->sync_ok = rc == 0;
    c->pool = rc == 0 ? s3l_calloc((size_t)c->max_bufs, sizeof(*c->pool)) : NULL;
    return rc == 0 && !c->pool ? S3L_ENOMEM : rc;
}

int s3l__buf_take(struct s3l_s3_client *c, size_t size, int holding, uint8_t **buf)
{
    *buf = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->n_pool > 0 && c->pool_size != size) { /* another part size: drop the old ones */
        for (int i = 0; i < c->n_pool; i++)
            s3l_free(c->pool[i]);
        c->n_bufs -= c->n_pool;
        c->n_pool = 0;
    }
    bool fresh = false;
    if (c->n_pool > 0)
        *buf = c->pool[--c->n_pool];
    else if (holding == 0 || c->n_bufs < c->max_bufs)
        fresh = true, c->n_bufs++;
    pthread_mutex_unlock(&c->mu);
    if (fresh && !(*buf = s3l_malloc(size))) {
        pthread_mutex_lock(&c->mu);
        c->n_bufs--;
        pthread_mutex_unlock(&c->mu);
        return S3L_ENOMEM;
    }
    return 0;
}

void s3l__buf_give(struct s3l_s3_client *c, uint8_t *buf, size_t size)
{
    if (!buf)
        return;
    pthread_mutex_lock(&c->mu);
    bool keep = c->n_pool < c->max_bufs && (c->n_pool == 0 || c->pool_size == size) &&
                c->n_bufs <= c->max_bufs;
    if (keep) {
        c->pool[c->n_pool++] = buf;
        c->pool_size = size;
    } else {
        c->n_bufs--;
    }
    pthread_mutex_unlock(&c->mu);
    if (!keep)
        s3l_free(buf);
}

int s3l_s3_client_new(const struct s3l_s3_config *cfg, struct s3l_s3_client **out,
                      struct s3l_error *err)
{
    *out = NULL;
    if (!cfg || cfg->version != S3L_S3_CONFIG_VERSION)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "s3 config: version must be %d",
                             S3L_S3_CONFIG_VERSION);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return s3l_error_set(err, S3L_EINTERNAL, "libcurl failed to initialise");
    struct s3l_s3_client *c = s3l_calloc(1, sizeof(*c));
    if (!c) {
        curl_global_cleanup();
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    int rc = set_numbers(c, cfg);
    if (rc == 0)
        rc = init_sync(c);
    if (rc == 0)
        rc = set_where(c, cfg, err);
    if (rc == 0)
        rc = set_credentials(c, cfg, err);
    if (rc == 0)
        rc = dup_opt(&c->ca_file, cfg->ca_file);
    if (rc == 0 && cfg->resolve && !(c->resolve = curl_slist_append(NULL, cfg->resolve)))
        rc = S3L_ENOMEM;
    if (rc == 0 && !(c->multi = curl_multi_init()))
        rc = S3L_ENOMEM;
    c->trace = cfg->trace;
    c->trace_ctx = cfg->trace_ctx;
    if (rc != 0) {
        if (rc == S3L_ENOMEM)
            s3l_error_set(err, rc, "out of memory creating the S3 client");
        s3l_s3_client_free(c);
        return s3l__oom(err, rc, "making the S3 client");
    }
    *out = c;
    return 0;
}

void s3l_s3_client_free(struct s3l_s3_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_pool; i++)
        s3l_free(c->pool[i]);
    s3l_free(c->pool);
    if (c->sync_ok) {
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
    }
    if (c->multi)
        curl_multi_cleanup(c->multi);
    curl_slist_free_all(c->resolve);
    if (c->secret_key)
        OPENSSL_cleanse(c->secret_key, strlen(c->secret_key));
    if (c->session_token)
        OPENSSL_cleanse(c->session_token, strlen(c->session_token));
    if (c->own_creds)
        s3l_creds_provider_free(c->creds);
    s3l_free(c->region), s3l_free(c->scheme), s3l_free(c->host), s3l_free(c->ca_file);
    s3l_free(c->access_key), s3l_free(c->secret_key), s3l_free(c->session_token);
    s3l_free(c->principal);
    OPENSSL_cleanse(&c->key_cache, sizeof(c->key_cache));
    s3l_free(c);
    curl_global_cleanup();
}

/* ------------------------------------------------------------------ shared by the operations */

int s3l__run1(struct s3l_s3_client *c, struct s3l__http_req *r, struct s3l_error *err)
{
    struct s3l__http_req *one[1] = {r};
    return s3l__http_run(c, one, 1, err);
}

void s3l__object_from_head(const struct s3l__http_req *r, struct s3l_s3_object *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->size = r->content_length;
    memcpy(o->etag, r->etag, sizeof(o->etag));
    o->mtime_ns = s3l__parse_time_ns(r->last_modified);
    snprintf(o->upload_meta, sizeof(o->upload_meta), "%s", r->upload_meta);
}

int s3l__integrity_header(struct s3l_s3_client *c, struct s3l__http_req *r, const void *data,
                          size_t len, char *buf64)
{
    return s3l__integrity_header_as(c->integrity, r, data, len, buf64);
}

int s3l__integrity_header_as(enum s3l_s3_integrity mode, struct s3l__http_req *r,
                             const void *data, size_t len, char *buf64)
{
    struct s3l__digest d = {0};
    const char *name = NULL;
    int rc = s3l__digest_begin(&d, mode);
    if (rc == 0)
        rc = s3l__digest_update(&d, data, len);
    if (rc == 0)
        rc = s3l__digest_end(&d, &name, buf64);
    s3l__digest_free(&d);
    if (rc == 0 && name)
        rc = s3l__http_add_header(r, name, buf64);
    return rc;
}

/* A header value with CR or LF would let a caller's string add headers of its own. */
static bool header_safe(const char *v)
{
    return !v || !strpbrk(v, "\r\n");
}

int s3l__put_headers(struct s3l__http_req *r, const struct s3l_s3_put_options *o, bool create)
{
    int rc = 0;
    if (!o)
        return 0;
    if (!header_safe(o->content_type) || !header_safe(o->sse) ||
        !header_safe(o->sse_kms_key_id) || !header_safe(o->storage_class) ||
        !header_safe(o->upload_meta) || !header_safe(o->if_match) ||
        (o->if_match && !o->if_match[0])) /* curl drops an empty header SigV4 signed */
        return S3L_EINVALID_ARGUMENT;
    if (o->content_type)
        rc = s3l__http_add_header(r, "Content-Type", o->content_type);
    if (rc == 0 && o->sse)
        rc = s3l__http_add_header(r, "x-amz-server-side-encryption", o->sse);
    if (rc == 0 && o->sse_kms_key_id)
        rc = s3l__http_add_header(r, "x-amz-server-side-encryption-aws-kms-key-id",
                                  o->sse_kms_key_id);
    if (rc == 0 && o->storage_class)
        rc = s3l__http_add_header(r, "x-amz-storage-class", o->storage_class);
    if (rc == 0 && o->upload_meta)
        rc = s3l__http_add_header(r, "x-amz-meta-s3land-upload", o->upload_meta);
    if (rc == 0 && !create && o->if_none_match)
        rc = s3l__http_add_header(r, "If-None-Match", "*");
    if (rc == 0 && !create && o->if_match)
        rc = s3l__http_add_header(r, "If-Match", o->if_match);
    return rc;
}

/* ------------------------------------------------------------------ object operations */

int s3l_s3_put_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                      const void *data, size_t len, const struct s3l_s3_put_options *opts,
                      struct s3l_s3_object *out, struct s3l_error *err)
{
    return s3l__put_object(c, bucket, key, data, len, opts, NULL, NULL, out, err);
}

int s3l__put_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                    const void *data, size_t len, const struct s3l_s3_put_options *opts,
                    const char *digest, const char *digest_b64, struct s3l_s3_object *out,
                    struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc == 0 && len > c->max_request)
        rc = s3l_error_set(err, S3L_ETOO_LARGE, "PutObject %s: %zu bytes is over the cap of %zu",
                           key, len, c->max_request);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "PutObject", .method = "PUT", .bucket = bucket, .key = key,
                              .error_in_200 = true, .needs_etag = true};
    r.body = data;
    r.body_len = len;
    r.has_body = true;
    char b64[32];
    if (digest)
        rc = s3l__http_add_header(&r, digest, digest_b64);
    else
        rc = s3l__integrity_header(c, &r, len ? data : "", len, b64);
    if (rc == 0 && (rc = s3l__put_headers(&r, opts, false)) != 0)
        s3l_error_set(err, rc, "PutObject %s: an option holds CR or LF, an empty If-Match, or too many headers",
                      key);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    if (rc == 0 && out) {
        memset(out, 0, sizeof(*out));
        out->size = len;
        memcpy(out->etag, r.etag, sizeof(out->etag));
    }
    s3l__http_req_cleanup(&r);
    return rc;
}

/* Content-Range: bytes FIRST-LAST/TOTAL gives the whole object's size. */
static uint64_t total_size(const struct s3l__http_req *r)
{
    const char *slash = strchr(r->content_range, '/');
    if (slash && slash[1] != '*')
        return strtoull(slash + 1, NULL, 10);
    return r->content_length;
}

int s3l_s3_get_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                      uint64_t offset, uint64_t len, size_t max, uint8_t **data, size_t *data_len,
                      struct s3l_s3_object *out, struct s3l_error *err)
{
    *data = NULL;
    *data_len = 0;
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "GetObject", .method = "GET", .bucket = bucket, .key = key};
    r.max_response = max ? max : 1; /* 0 would mean the client default */
    char range[64];
    if (len > 0)
        snprintf(range, sizeof(range), "bytes=%llu-%llu", (unsigned long long)offset,
                 (unsigned long long)(offset + len - 1));
    else
        snprintf(range, sizeof(range), "bytes=%llu-", (unsigned long long)offset);
    if (offset > 0 || len > 0)
        rc = s3l__http_add_header(&r, "Range", range);
    if (rc == 0)
        rc = s3l__run1(c, &r, err);
    if (rc == S3L_EPERMISSION_DENIED)
        rc = s3l__settle_403(c, bucket, key, err);
    if (rc == 0 && max == 0 && r.resp.len > 0)
        rc = s3l_error_set(err, S3L_ETOO_LARGE, "GetObject %s: answer over the cap of 0", key);
    if (rc == 0) {
        s3l__object_from_head(&r, out);
        if (out)
            out->size = total_size(&r);
        rc = s3l_buf_detach(&r.resp, data, data_len);
        if (rc != 0)
            s3l_error_set(err, rc, "out of memory");
    }
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l_s3_head_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                       struct s3l_s3_object *out, struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "HeadObject", .method = "HEAD", .bucket = bucket, .key = key};
    rc = s3l__run1(c, &r, err);
    if (rc == S3L_EPERMISSION_DENIED)
        rc = s3l__settle_403(c, bucket, key, err);
    if (rc == 0)
        s3l__object_from_head(&r, out);
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l_s3_head_bucket(struct s3l_s3_client *c, const char *bucket, struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "HeadBucket", .method = "HEAD", .bucket = bucket};
    rc = s3l__run1(c, &r, err);
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l_s3_list_objects(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                        const char *delimiter, const char *token, int max_keys,
                        struct s3l_s3_list_page *page, struct s3l_error *err)
{
    memset(page, 0, sizeof(*page));
    int rc = s3l__check_bucket(bucket, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "ListObjectsV2", .method = "GET", .bucket = bucket,
                              .prefix = prefix ? prefix : ""};
    char mk[16];
    snprintf(mk, sizeof(mk), "%d", max_keys > 0 && max_keys <= 1000 ? max_keys : 1000);
    s3l__http_add_query(&r, "list-type", "2");
    s3l__http_add_query(&r, "max-keys", mk);
    s3l__http_add_query(&r, "encoding-type", "url"); /* keys XML 1.0 cannot carry */
    if (prefix && *prefix)
        s3l__http_add_query(&r, "prefix", prefix);
    if (delimiter && *delimiter)
        s3l__http_add_query(&r, "delimiter", delimiter);
    if (token && *token)
        s3l__http_add_query(&r, "continuation-token", token);
    rc = s3l__run1(c, &r, err);
    if (rc == 0) {
        rc = s3l__xml_list_objects(r.resp.ptr, r.resp.len, page, err);
        if (rc != 0)
            s3l_error_prefix(err, "ListObjectsV2 %s/%s", bucket, prefix ? prefix : "");
    }
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l_s3_list_all(struct s3l_s3_client *c, const char *bucket, const char *prefix,
                    s3l_s3_list_cb cb, void *ctx, struct s3l_error *err)
{
    char *token = NULL;
    int rc = 0;
    do {
        struct s3l_s3_list_page p;
        rc = s3l_s3_list_objects(c, bucket, prefix, NULL, token, 1000, &p, err);
        s3l_free(token);
        token = NULL;
        for (size_t i = 0; rc == 0 && i < p.n_objects; i++)
            rc = cb(ctx, &p.objects[i]);
        if (rc == 0 && p.truncated) {
            token = p.next_token;
            p.next_token = NULL;
        }
        s3l_s3_list_page_free(&p);
    } while (rc == 0 && token);
    s3l_free(token);
    return rc;
}

int s3l_s3_delete_object(struct s3l_s3_client *c, const char *bucket, const char *key,
                         struct s3l_error *err)
{
    int rc = s3l__check_bucket(bucket, err);
    if (rc == 0)
        rc = s3l__check_key(key, err);
    if (rc != 0)
        return rc;
    struct s3l__http_req r = {.op = "DeleteObject", .method = "DELETE", .bucket = bucket,
                              .key = key, .not_found_ok = true};
    rc = s3l__run1(c, &r, err);
    s3l__http_req_cleanup(&r);
    return rc;
}

int s3l__copy_source(struct s3l_buf *b, const char *src_bucket, const char *src_key)
{
    int rc = s3l_buf_printf(b, "/%s/", src_bucket);
    return rc ? rc : s3l__uri_encode(b, src_key, strlen(src_key), true);
}
