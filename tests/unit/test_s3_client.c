/*
 * Unit tests of the S3 client's pieces that need no server: URI encoding, bucket and key rules,
 * the error taxonomy, integrity checksums (published check values), configuration from the
 * environment, and the signing-key cache. The transport is tested against RGW and through the
 * fault proxy (tests/integration, tests/fault).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "s3/s3_int.h"

static void uri_encoding(void **state)
{
    (void)state;
    struct s3l_buf b;
    s3l_buf_init(&b, 1024);
    const char *in = "a b/c~d+e=f%2F\xc3\xa9";
    assert_int_equal(s3l__uri_encode(&b, in, strlen(in), true), 0);
    assert_string_equal((char *)b.ptr, "a%20b/c~d%2Be%3Df%252F%C3%A9");
    s3l_buf_reset(&b);
    assert_int_equal(s3l__uri_encode(&b, "x/y", 3, false), 0);
    assert_string_equal((char *)b.ptr, "x%2Fy");
    s3l_buf_free(&b);
}

static void bucket_and_key_rules(void **state)
{
    (void)state;
    /* S3 User Guide, "Bucket naming rules" */
    const char *good[] = {"abc", "my-bucket.data", "a1-2", "s3land-test"};
    const char *bad[] = {"ab", "Abc", "a_b", "-ab", "ab-", "a..b", "a.-b", "a-.b", "10.0.0.1",
                         "a234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(good); i++)
        assert_int_equal(s3l__check_bucket(good[i], NULL), 0);
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        struct s3l_error e = {0};
        assert_int_equal(s3l__check_bucket(bad[i], &e), S3L_EINVALID_ARGUMENT);
        assert_non_null(strstr(e.message, "bucket name"));
    }
    char k[1026];
    memset(k, 'a', sizeof(k));
    k[1024] = 0;
    assert_int_equal(s3l__check_key(k, NULL), 0);
    k[1024] = 'a';
    k[1025] = 0;
    assert_int_equal(s3l__check_key(k, NULL), S3L_EINVALID_ARGUMENT);
    assert_int_equal(s3l__check_key("", NULL), S3L_EINVALID_ARGUMENT);
    struct s3l_error e = {0};
    assert_int_equal(s3l__check_key("ok/\xff", &e), S3L_EINVALID_ARGUMENT);
    assert_non_null(strstr(e.message, "byte 3"));
    assert_int_equal(s3l__check_key("\xc0\xaf", NULL), S3L_EINVALID_ARGUMENT);     /* overlong */
    assert_int_equal(s3l__check_key("\xed\xa0\x80", NULL), S3L_EINVALID_ARGUMENT); /* surrogate */
    assert_int_equal(s3l__check_key("\xf0\x9f\x98\x80 ok", NULL), 0);
}

static void taxonomy(void **state)
{
    (void)state;
    /* docs/design.md section 5 and the S3 API Reference's error code list */
    static const struct {
        long status;
        const char *code;
        int want;
    } cases[] = {
        {503, "SlowDown", S3L_ETHROTTLED},
        {429, NULL, S3L_ETHROTTLED},
        {500, "InternalError", S3L_ETRANSIENT},
        {502, NULL, S3L_ETRANSIENT},
        {200, "InternalError", S3L_ETRANSIENT},
        {400, "ExpiredToken", S3L_EAUTH_EXPIRED},
        {403, "InvalidAccessKeyId", S3L_EAUTH_INVALID},
        {403, "SignatureDoesNotMatch", S3L_EAUTH_INVALID},
        {403, "AccessDenied", S3L_EPERMISSION_DENIED},
        {403, "Forbidden", S3L_EPERMISSION_DENIED},
        {404, "NoSuchUpload", S3L_ENOT_FOUND},
        {404, "NotFound", S3L_ENOT_FOUND},
        {412, "PreconditionFailed", S3L_EPRECONDITION_FAILED},
        {409, "ConditionalRequestConflict", S3L_ECONFLICT},
        {301, "PermanentRedirect", S3L_EINVALID_CONFIG},
        {400, "AuthorizationHeaderMalformed", S3L_EINVALID_CONFIG},
        {400, "InvalidPart", S3L_EINVALID_ARGUMENT},
        {400, "EntityTooSmall", S3L_EINVALID_ARGUMENT},
        {400, "RequestTimeTooSkewed", S3L_ETRANSIENT},
        {403, "RequestTimeTooSkewed", S3L_ETRANSIENT},
        {400, "BadDigest", S3L_ETRANSIENT},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(cases); i++) {
        int got = s3l__s3_code_to_error(cases[i].status, cases[i].code);
        if (got != cases[i].want)
            fail_msg("%ld %s: got %s", cases[i].status, cases[i].code ? cases[i].code : "-",
                     s3l_error_name(got));
    }
}

static void checksums(void **state)
{
    (void)state;
    /* CRC-32C check value of "123456789" (RFC 3720 appendix B.4 / the CRC catalogue) */
    assert_true(s3l__crc32c("123456789", 9) == 0xE3069283u);
    assert_true(s3l__crc32c("", 0) == 0);
    char b64[32];
    /* Content-MD5 of an empty body, as S3's documentation shows it */
    static const uint8_t md5_empty[16] = {0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
                                          0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e};
    s3l__base64(md5_empty, 16, b64);
    assert_string_equal(b64, "1B2M2Y8AsgTpgAmY7PhCfg==");
}

/* Digests fed piece by piece, as a streaming upload feeds them, give the published values. */
static void piecewise_digests(void **state)
{
    (void)state;
    const char *fox = "The quick brown fox jumps over the lazy dog";
    size_t n = strlen(fox);
    struct s3l__digest d = {0};
    const char *name = NULL;
    char b64[32];
    /* RFC 1321's MD5 of this sentence is 9e107d9d372bb6826bd81d3542a419d6 (well known; its
     * base64, by hand from those bytes: nhB9nTcrtoJr2B01QqQZ1g==) */
    for (size_t cut = 0; cut <= n; cut += 7) {
        assert_int_equal(s3l__digest_begin(&d, S3L_S3_INTEGRITY_MD5), 0);
        assert_int_equal(s3l__digest_update(&d, fox, cut), 0);
        assert_int_equal(s3l__digest_update(&d, fox + cut, n - cut), 0);
        assert_int_equal(s3l__digest_end(&d, &name, b64), 0);
        assert_string_equal(name, "Content-MD5");
        assert_string_equal(b64, "nhB9nTcrtoJr2B01QqQZ1g==");
    }
    /* the context is reused for the next part: an empty one is the empty body's MD5 */
    assert_int_equal(s3l__digest_begin(&d, S3L_S3_INTEGRITY_MD5), 0);
    assert_int_equal(s3l__digest_end(&d, &name, b64), 0);
    assert_string_equal(b64, "1B2M2Y8AsgTpgAmY7PhCfg==");
    /* CRC-32C check value 0xE3069283 of "123456789", split anywhere; base64 of its big-endian
     * bytes e3 06 92 83 is "4waSgw==" */
    for (size_t cut = 0; cut <= 9; cut++) {
        assert_true(s3l__crc32c_update(s3l__crc32c("123456789", cut), "123456789" + cut,
                                       9 - cut) == 0xE3069283u);
        assert_int_equal(s3l__digest_begin(&d, S3L_S3_INTEGRITY_CRC32C), 0);
        assert_int_equal(s3l__digest_update(&d, "123456789", cut), 0);
        assert_int_equal(s3l__digest_update(&d, "123456789" + cut, 9 - cut), 0);
        assert_int_equal(s3l__digest_end(&d, &name, b64), 0);
        assert_string_equal(name, "x-amz-checksum-crc32c");
        assert_string_equal(b64, "4waSgw==");
    }
    assert_int_equal(s3l__digest_begin(&d, S3L_S3_INTEGRITY_NONE), 0);
    assert_int_equal(s3l__digest_end(&d, &name, b64), 0);
    assert_null(name);
    s3l__digest_free(&d);
}

/* Two MD5s at once (md5x2.c) against RFC 1321's test suite (appendix A.5) and OpenSSL. */
static void md5_two_at_once(void **state)
{
    (void)state;
    static const struct {
        const char *in, *hex;
    } rfc[] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "d174ab98d277d9f5a5611c2c9f419d9f"},
        {"1234567890" "1234567890" "1234567890" "1234567890" "1234567890" "1234567890"
         "1234567890" "1234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(rfc); i++) {
        uint8_t d0[16], d1[16];
        char hex0[33], hex1[33];
        size_t n = strlen(rfc[i].in);
        char *other = malloc(n + 1); /* the second lane holds other bytes of the same length */
        for (size_t k = 0; k < n; k++)
            other[k] = (char)(rfc[i].in[n - 1 - k] ^ 0x5a);
        s3l__md5x2(rfc[i].in, other, n, d0, d1);
        s3l_hex_encode(d0, 16, hex0);
        assert_string_equal(hex0, rfc[i].hex);
        s3l__md5x2(other, rfc[i].in, n, d1, d0);
        s3l_hex_encode(d0, 16, hex1);
        assert_string_equal(hex1, rfc[i].hex);
        free(other);
    }
    /* every padding case (lengths 0..200) and a part-sized message, against OpenSSL's MD5 */
    size_t big = (5u << 20) + 77;
    uint8_t *a = malloc(big), *b = malloc(big);
    uint64_t x = 88172645463325252ull;
    for (size_t k = 0; k < big; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        a[k] = (uint8_t)x;
        b[k] = (uint8_t)(x >> 32);
    }
    for (size_t n = 0; n <= big; n = n < 200 ? n + 1 : big + (n == big)) {
        uint8_t d0[16], d1[16], e0[16], e1[16];
        unsigned int len = 0;
        s3l__md5x2(a, b, n, d0, d1);
        assert_int_equal(EVP_Digest(a, n, e0, &len, EVP_md5(), NULL), 1);
        assert_int_equal(EVP_Digest(b, n, e1, &len, EVP_md5(), NULL), 1);
        assert_memory_equal(d0, e0, 16);
        assert_memory_equal(d1, e1, 16);
        if (n == big)
            break;
    }
    free(a);
    free(b);
}

/* The client's part buffers: recycled, capped, and never refused to an upload holding none. */
static void part_buffer_pool(void **state)
{
    (void)state;
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION, .access_key = "AKID",
                                .secret_key = "SECRET", .region = "us-east-1",
                                .max_in_flight = 2};
    struct s3l_s3_client *c = NULL;
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &e), 0);
    assert_int_equal(c->max_bufs, 4); /* default: in flight + 2 with Content-MD5 (pairs) */
    s3l_s3_client_free(c);
    cfg.integrity = S3L_S3_INTEGRITY_CRC32C;
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &e), 0);
    assert_int_equal(c->max_bufs, 3); /* in flight + 1 otherwise */
    uint8_t *b[5];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s3l__buf_take(c, 4096, i, &b[i]), 0);
        assert_non_null(b[i]);
    }
    assert_int_equal(s3l__buf_take(c, 4096, 3, &b[3]), 0);
    assert_null(b[3]); /* at the cap: wait for one of your own */
    assert_int_equal(s3l__buf_take(c, 4096, 0, &b[3]), 0);
    assert_non_null(b[3]); /* a second upload, holding none, still moves */
    assert_int_equal(c->n_bufs, 4);
    s3l__buf_give(c, b[3], 4096); /* over the cap: freed, not kept */
    assert_int_equal(c->n_bufs, 3);
    assert_int_equal(c->n_pool, 0);
    s3l__buf_give(c, b[0], 4096);
    assert_int_equal(c->n_pool, 1);
    assert_int_equal(s3l__buf_take(c, 4096, 2, &b[4]), 0);
    assert_ptr_equal(b[4], b[0]); /* recycled, not allocated again */
    s3l__buf_give(c, b[4], 4096);
    s3l__buf_give(c, b[1], 4096);
    assert_int_equal(s3l__buf_take(c, 8192, 1, &b[4]), 0); /* another size: old ones dropped */
    assert_non_null(b[4]);
    assert_int_equal(c->n_pool, 0);
    assert_int_equal(c->n_bufs, 2);
    s3l__buf_give(c, b[4], 8192);
    s3l__buf_give(c, b[2], 4096); /* not the pool's size: freed */
    assert_int_equal(c->n_bufs, 1);
    s3l_s3_client_free(c); /* frees the pooled one: ASan would see a leak otherwise */
}

/* The trace callback of config_from_env: counts lines and keeps the last. */
struct trace_seen {
    int lines;
    char last[2048];
};

static void on_trace(void *ctx, const char *line, size_t len)
{
    struct trace_seen *t = ctx;
    assert_int_equal(strlen(line), len);
    t->lines++;
    snprintf(t->last, sizeof(t->last), "%s", line);
}

static void config_from_env(void **state)
{
    (void)state;
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION};
    struct s3l_s3_client *c = NULL;
    struct s3l_error e = {0};
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("S3LAND_TRACE");
    /* no credentials anywhere: the default chain lists what it tried (include/s3l/creds.h) */
    const char *home = getenv("HOME");
    char *saved_home = home ? strdup(home) : NULL;
    setenv("HOME", "/nonexistent-s3land-home", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &e), S3L_EAUTH_INVALID);
    assert_non_null(strstr(e.message, "env: AWS_ACCESS_KEY_ID not set"));
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_home);
    unsetenv("AWS_EC2_METADATA_DISABLED");
    setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
    /* The library reads no environment for region, endpoint or trace (issue 9 item 6): the CLI
     * does (src/cli/s3_env.c) and passes them in the config. Each variable is set to a value
     * that would show if it were read: a region, endpoints on a dead port, a trace file. */
    setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
    setenv("AWS_REGION", "eu-central-1", 1);
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9", 1);
    setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9/", 1);
    char trace_path[64];
    snprintf(trace_path, sizeof(trace_path), "/tmp/s3l-trace-env-%d", (int)getpid());
    unlink(trace_path);
    setenv("S3LAND_TRACE", trace_path, 1);
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &e), 0);
    assert_string_equal(c->region, "us-east-1"); /* the default, not AWS_REGION */
    assert_string_equal(c->host, "s3.us-east-1.amazonaws.com"); /* AWS, not AWS_ENDPOINT_URL* */
    assert_true(c->aws && !c->path_style);
    s3l_s3_client_free(c);
    /* Explicit options reach the endpoint they name (nobody listens on port 1 either: the
     * connection's error names the port it tried), and the trace file is never created. */
    struct s3l_s3_config ex = {.version = S3L_S3_CONFIG_VERSION, .region = "eu-north-1",
                               .endpoint = "http://127.0.0.1:1", .max_attempts = 1};
    assert_int_equal(s3l_s3_client_new(&ex, &c, &e), 0);
    assert_string_equal(c->region, "eu-north-1");
    assert_string_equal(c->host, "127.0.0.1:1");
    assert_true(c->path_style && !c->aws);
    struct s3l_s3_object o;
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, "bucket", "k", &o, &e), S3L_ETRANSIENT);
    assert_non_null(strstr(e.message, "port 1 "));
    assert_null(strstr(e.message, "port 9"));
    s3l_s3_client_free(c);
    assert_int_equal(access(trace_path, F_OK), -1); /* S3LAND_TRACE was not opened */
    /* ... while the trace callback hears of that same attempt: one JSON line. */
    struct trace_seen seen = {0};
    ex.trace = on_trace;
    ex.trace_ctx = &seen;
    assert_int_equal(s3l_s3_client_new(&ex, &c, &e), 0);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, "bucket", "k", &o, &e), S3L_ETRANSIENT);
    s3l_s3_client_free(c);
    assert_int_equal(seen.lines, 1);
    assert_non_null(strstr(seen.last, "{\"op\":\"HeadObject\",\"bucket\":\"bucket\",\"key\":\"k\""));
    assert_non_null(strstr(seen.last, "\"error\":\"TRANSIENT\"}\n"));
    assert_null(strstr(seen.last, "SECRET"));
    assert_int_equal(access(trace_path, F_OK), -1);
    unsetenv("S3LAND_TRACE");
    unsetenv("AWS_ENDPOINT_URL_S3");
    unsetenv("AWS_ENDPOINT_URL");
    const char *bad[] = {"not a url", "ftp://host", "http://host/some/path", "http://"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        struct s3l_s3_config b = {.version = S3L_S3_CONFIG_VERSION, .endpoint = bad[i]};
        s3l_error_clear(&e);
        assert_int_equal(s3l_s3_client_new(&b, &c, &e), S3L_EINVALID_CONFIG);
        assert_null(c);
        assert_non_null(strstr(e.message, "endpoint"));
    }
    struct s3l_s3_config badr = {.version = S3L_S3_CONFIG_VERSION, .region = "a b"};
    assert_int_equal(s3l_s3_client_new(&badr, &c, &e), S3L_EINVALID_CONFIG);
}

static void signing_key_cache(void **state)
{
    (void)state;
    struct s3l__kv h[] = {{"host", "example.com"}, {"x-amz-date", "20261130T000000Z"}};
    struct s3l__sigv4_request req = {.method = "GET", .path = "/", .headers = h, .n_headers = 2,
                                     .payload_hash = S3L_SIGV4_EMPTY_SHA256, .s3 = true};
    struct s3l__creds a = {"AK", "secret-one", NULL}, b = {"AK", "secret-two", NULL};
    struct s3l__sigv4_cache cache = {0};
    struct s3l__sigv4_result r1, r2, r3;
    s3l__sigv4_result_init(&r1), s3l__sigv4_result_init(&r2), s3l__sigv4_result_init(&r3);
    time_t t = 1796013015;
    assert_int_equal(s3l__sigv4_sign(&req, &a, "us-east-1", "s3", t, &cache, &r1), 0);
    assert_true(cache.valid);
    assert_int_equal(s3l__sigv4_sign(&req, &a, "us-east-1", "s3", t, &cache, &r2), 0);
    assert_string_equal(r1.signature, r2.signature);
    /* another secret, the same day: the cached key must not be used */
    assert_int_equal(s3l__sigv4_sign(&req, &b, "us-east-1", "s3", t, &cache, &r2), 0);
    assert_int_equal(s3l__sigv4_sign(&req, &b, "us-east-1", "s3", t, NULL, &r3), 0);
    assert_string_equal(r2.signature, r3.signature);
    assert_string_not_equal(r1.signature, r2.signature);
    /* the cache holds no secret in clear */
    const uint8_t *raw = (const uint8_t *)&cache;
    for (size_t i = 0; i + 10 <= sizeof(cache); i++)
        assert_false(memcmp(raw + i, "secret-two", 10) == 0);
    /* no host header: refused */
    req.n_headers = 0;
    assert_int_equal(s3l__sigv4_sign(&req, &a, "us-east-1", "s3", t, NULL, &r3),
                     S3L_EINVALID_ARGUMENT);
    s3l__sigv4_result_free(&r1), s3l__sigv4_result_free(&r2), s3l__sigv4_result_free(&r3);
}

/* The part size rule (s3l_s3_part_size) at its boundaries; expected values by hand:
 * 10,000 x 8 MiB = 83,886,080,000 bytes; 100 GiB / 10,000 = 10,737,418.24 bytes = 10.24 MiB;
 * 5 TiB / 10,000 = 549,755,813.888 bytes = 524.288 MiB; 60 GiB / 10,000 = 6,442,450.944. */
static void part_size_rule(void **state)
{
    (void)state;
    const uint64_t MiB = 1u << 20, GiB = 1ull << 30;
    assert_int_equal(s3l_s3_part_size(0, 0), 8 * MiB);
    assert_int_equal(s3l_s3_part_size(256 * MiB, 0), 8 * MiB);
    assert_int_equal(s3l_s3_part_size(83886080000ull, 0), 8 * MiB);
    assert_int_equal(s3l_s3_part_size(83886080001ull, 0), 9 * MiB);
    assert_int_equal(s3l_s3_part_size(100 * GiB, 0), 11 * MiB);
    assert_int_equal(s3l_s3_part_size(100 * GiB, 16 * MiB), 16 * MiB);
    assert_int_equal(s3l_s3_part_size(60 * GiB, 5 * MiB), 7 * MiB);
    assert_int_equal(s3l_s3_part_size(5ull << 40, 0), 525 * MiB);
    assert_int_equal(s3l_s3_part_size((5ull << 40) + 1, 0), 0);
    assert_int_equal(s3l_s3_part_size(60ull << 40, 0), 0);
    /* Around every MiB step from 8 to 600 MiB: 10,000 parts hold the size, and a part of one MiB
     * less would not (the smallest whole MiB), all within S3's 5 GiB part limit. */
    for (uint64_t p = 9 * MiB; p <= 600 * MiB && p * 10000 <= (5ull << 40); p += MiB) {
        for (int64_t d = -1; d <= 1; d++) {
            uint64_t size = (p - MiB) * 10000 + (uint64_t)((int64_t)1 + d);
            uint64_t got = s3l_s3_part_size(size, 0);
            assert_true(got * 10000 >= size);
            assert_true(got == 8 * MiB || (got - MiB) * 10000 < size);
            assert_true(got % MiB == 0 && got <= 5 * GiB);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uri_encoding),    cmocka_unit_test(bucket_and_key_rules),
        cmocka_unit_test(taxonomy),        cmocka_unit_test(checksums),
        cmocka_unit_test(config_from_env), cmocka_unit_test(signing_key_cache),
        cmocka_unit_test(piecewise_digests), cmocka_unit_test(part_buffer_pool),
        cmocka_unit_test(md5_two_at_once), cmocka_unit_test(part_size_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
