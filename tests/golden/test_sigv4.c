/*
 * Golden tests of the SigV4 signer, step by step: for every vector in tests/golden/sigv4/ (the
 * AWS SigV4 test suite's requests and S3 requests with hard keys, both signed by botocore; see
 * gen_vectors.py there) the canonical request, the string to sign, the signature and the
 * Authorization header must match byte for byte. For S3 vectors the wire path is also rebuilt
 * from the bucket and the raw key with our encoder, and the payload hash from the body.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include <jansson.h>

#include "s3/s3_int.h"

static json_t *load(const char *name)
{
    const char *src = getenv("S3L_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/golden/sigv4/%s", src ? src : ".", name);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        fail_msg("cannot load %s: %s (line %d)", path, jerr.text, jerr.line);
    assert_true(json_is_array(root));
    return root;
}

static const char *str(json_t *v, const char *k)
{
    const char *s = json_string_value(json_object_get(v, k));
    if (!s)
        fail_msg("vector lacks %s", k);
    return s;
}

static time_t parse_amz_date(const char *s)
{
    struct tm tm = {0};
    assert_int_equal(sscanf(s, "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec),
                     6);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return timegm(&tm);
}

static void check_wire_path(json_t *v)
{
    const char *key = json_string_value(json_object_get(v, "key"));
    if (!key || !*key)
        return;
    struct s3l_buf p;
    s3l_buf_init(&p, 1 << 16);
    if (strcmp(str(v, "style"), "path") == 0)
        assert_int_equal(s3l_buf_printf(&p, "/%s/", str(v, "bucket")), 0);
    else
        assert_int_equal(s3l_buf_append_str(&p, "/"), 0);
    assert_int_equal(s3l__uri_encode(&p, key, strlen(key), true), 0);
    assert_string_equal((char *)p.ptr, str(v, "path"));
    s3l_buf_free(&p);
}

static void check_payload_hash(json_t *v)
{
    const char *ph = str(v, "payload_hash");
    if (strcmp(ph, S3L_SIGV4_UNSIGNED) == 0)
        return;
    const char *hex = str(v, "body_hex");
    size_t n = strlen(hex) / 2;
    uint8_t *body = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned x;
        sscanf(hex + 2 * i, "%2x", &x);
        body[i] = (uint8_t)x;
    }
    char h[65];
    assert_int_equal(s3l__sha256_hex(body, n, h), 0);
    assert_string_equal(h, ph);
    free(body);
}

static void check_vector(json_t *v, struct s3l__sigv4_cache *cache)
{
    json_t *jq = json_object_get(v, "query"), *jh = json_object_get(v, "headers");
    size_t nq = json_array_size(jq), nh = json_array_size(jh);
    struct s3l__kv q[16], h[16];
    assert_true(nq <= 16 && nh <= 16);
    for (size_t i = 0; i < nq; i++) {
        q[i].name = json_string_value(json_array_get(json_array_get(jq, i), 0));
        q[i].value = json_string_value(json_array_get(json_array_get(jq, i), 1));
    }
    for (size_t i = 0; i < nh; i++) {
        h[i].name = json_string_value(json_array_get(json_array_get(jh, i), 0));
        h[i].value = json_string_value(json_array_get(json_array_get(jh, i), 1));
    }
    struct s3l__sigv4_request req = {
        .method = str(v, "method"),
        .path = str(v, "path"),
        .query = q,
        .n_query = nq,
        .headers = h,
        .n_headers = nh,
        .payload_hash = str(v, "payload_hash"),
        .s3 = json_is_true(json_object_get(v, "s3")),
    };
    struct s3l__creds creds = {str(v, "access_key"), str(v, "secret_key"),
                               str(v, "session_token")};
    struct s3l__sigv4_result r;
    s3l__sigv4_result_init(&r);
    int rc = s3l__sigv4_sign(&req, &creds, str(v, "region"), str(v, "service"),
                             parse_amz_date(str(v, "time")), cache, &r);
    assert_int_equal(rc, 0);
    assert_string_equal(r.amz_date, str(v, "time"));
    assert_string_equal((char *)r.canonical_request.ptr, str(v, "canonical_request"));
    assert_string_equal((char *)r.string_to_sign.ptr, str(v, "string_to_sign"));
    assert_string_equal(r.signature, str(v, "signature"));
    assert_string_equal((char *)r.authorization.ptr, str(v, "authorization"));
    s3l__sigv4_result_free(&r);
    check_wire_path(v);
    check_payload_hash(v);
}

static void run_file(const char *file, bool use_cache)
{
    json_t *root = load(file);
    struct s3l__sigv4_cache cache = {0};
    size_t i;
    json_t *v;
    json_array_foreach(root, i, v)
    {
        print_message("%s %s\n", file, str(v, "name"));
        check_vector(v, use_cache ? &cache : NULL);
    }
    assert_true(json_array_size(root) >= 20);
    json_decref(root);
}

static void aws_suite(void **state)
{
    (void)state;
    run_file("aws-suite.json", false);
    run_file("aws-suite.json", true);
}

static void s3_botocore(void **state)
{
    (void)state;
    run_file("s3-botocore.json", false);
    /* with one cache across vectors whose secrets, regions and days differ: a stale key fails */
    run_file("s3-botocore.json", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aws_suite),
        cmocka_unit_test(s3_botocore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
