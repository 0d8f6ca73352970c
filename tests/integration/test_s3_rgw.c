/*
 * Integration tests of the S3 client against a real S3 server: Ceph's RADOS Gateway, started by
 * tests/stores/start-rgw.sh for this program (or the one named by S3L_RGW_ENV, an env file of a
 * running store, to iterate quickly). Every operation is exercised, with the multipart edge
 * cases of issue 4: an empty object, exactly 5 MiB, 1,001 tiny parts listed with ListParts
 * paging then aborted, listing uploads, UploadPartCopy; errors with their codes; virtual-hosted
 * addressing through a resolve override; HTTPS with a throw-away CA. Expected values come from
 * what was sent (bytes compared after a round trip) and from S3's rules (a single PUT's ETag is
 * the MD5 of the body, computed here with OpenSSL's MD5, not by the client).
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
#include <jansson.h>
#include <openssl/evp.h>

#include "s3/s3_int.h"
#include "s3l/destination.h"
#include "s3l/schema.h"
#include "s3l/store.h"
#include "s3l/sys/store.h"
#include "model_runner.h"
#include "crash_store.h"
#include "rgw_store.h"
#include "s3_env.h"
#include <signal.h>
#include <sys/wait.h>

static char bucket[64];
static char endpoint[128];

static int setup(void **state)
{
    (void)state;
    if (s3l_test_rgw_start("it", "RGW_TLS_PORT=auto") != 0)
        return -1;
    snprintf(endpoint, sizeof(endpoint), "%s", getenv("RGW_ENDPOINT"));
    /* the client takes endpoint and region from its config (the library reads no environment):
     * client_with fills them as the CLI would */
    return s3l_test_rgw_use(bucket, sizeof(bucket));
}

static int teardown(void **state)
{
    (void)state;
    return s3l_test_rgw_stop();
}

static struct s3l_s3_client *client_with(struct s3l_s3_config *cfg)
{
    struct s3l_s3_client *c = NULL;
    struct s3l_error err = {0};
    cfg->version = S3L_S3_CONFIG_VERSION;
    if (s3l_test_s3_env(cfg) != 0)
        fail_msg("S3LAND_TRACE cannot be opened");
    if (s3l_s3_client_new(cfg, &c, &err) != 0)
        fail_msg("client: %s", err.message);
    return c;
}

static struct s3l_s3_client *client(void)
{
    struct s3l_s3_config cfg = {0};
    return client_with(&cfg);
}

static void md5_hex(const void *p, size_t n, char out[33])
{
    uint8_t md[16];
    unsigned len = 0;
    EVP_Digest(p, n, md, &len, EVP_md5(), NULL);
    s3l_hex_encode(md, 16, out);
}

static uint8_t *pattern(size_t n, unsigned seed)
{
    uint8_t *p = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
    return p;
}

static void roundtrip(struct s3l_s3_client *c, const char *key, size_t n)
{
    uint8_t *data = pattern(n, (unsigned)strlen(key));
    struct s3l_s3_object put, head;
    OK(s3l_s3_put_object(c, bucket, key, data, n, NULL, &put, err));
    char md5[33];
    md5_hex(data, n, md5);
    assert_string_equal(put.etag, md5);
    OK(s3l_s3_head_object(c, bucket, key, &head, err));
    assert_true(head.size == n);
    assert_string_equal(head.etag, md5);
    assert_true(head.mtime_ns > 0);
    uint8_t *got = NULL;
    size_t got_n = 0;
    OK(s3l_s3_get_object(c, bucket, key, 0, 0, n + 10, &got, &got_n, NULL, err));
    assert_true(got_n == n);
    assert_memory_equal(got, data, n);
    s3l_free(got);
    if (n > 10) { /* a range in the middle */
        struct s3l_s3_object o;
        OK(s3l_s3_get_object(c, bucket, key, 3, 5, 5, &got, &got_n, &o, err));
        assert_int_equal(got_n, 5);
        assert_memory_equal(got, data + 3, 5);
        assert_true(o.size == n);
        s3l_free(got);
    }
    free(data);
}

static void hard_keys(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    char long_key[1025];
    memset(long_key, 'k', 1024);
    memcpy(long_key, "long/", 5);
    long_key[1024] = 0;
    const char *keys[] = {"plain.txt", "dir with space/file name.txt", "a+b=c&d.txt",
                          "user@host/(copy) [1].txt", "d\xc3\xa9j\xc3\xa0/\xe6\x97\xa5.txt",
                          "literal%2Fslash", "folder/", "a//b///c", "~tilde.-_", long_key,
                          "ctl\x01key\x7f+%2B"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(keys); i++)
        roundtrip(c, keys[i], 1000 + i);
    /* the listing gives back every key byte for byte */
    struct s3l_s3_list_page p;
    OK(s3l_s3_list_objects(c, bucket, "literal%2F", NULL, NULL, 0, &p, err));
    assert_int_equal(p.n_objects, 1);
    assert_string_equal(p.objects[0].key, "literal%2Fslash");
    s3l_s3_list_page_free(&p);
    /* a control character cannot be in XML 1.0: the listing asks for url encoding (RGW echoes
     * the request's Prefix raw even then, so the prefix here holds none) */
    OK(s3l_s3_list_objects(c, bucket, "ctl", NULL, NULL, 0, &p, err));
    bool seen = false;
    for (size_t i = 0; i < p.n_objects; i++)
        seen = seen || strcmp(p.objects[i].key, "ctl\x01key\x7f+%2B") == 0;
    assert_true(seen);
    s3l_s3_list_page_free(&p);
    for (size_t i = 0; i < S3L_ARRAY_LEN(keys); i++)
        OK(s3l_s3_delete_object(c, bucket, keys[i], err));
    struct s3l_s3_object o;
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_head_object(c, bucket, keys[1], &o, &e), S3L_ENOT_FOUND);
    assert_int_equal(e.http_status, 404);
    /* over 1,024 bytes: refused before sending */
    char too_long[1026];
    memset(too_long, 'x', 1025);
    too_long[1025] = 0;
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_put_object(c, bucket, too_long, "x", 1, NULL, NULL, &e),
                     S3L_EINVALID_ARGUMENT);
    s3l_s3_client_free(c);
}

static void trace_to_file(void *ctx, const char *line, size_t len)
{
    assert_int_equal(strlen(line), len); /* NUL-terminated, one line */
    assert_true(len > 0 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1));
    fwrite(line, 1, len, (FILE *)ctx);
}

static void empty_object_and_trace(void **state)
{
    (void)state;
    char trace[256];
    snprintf(trace, sizeof(trace), "/tmp/s3land-trace.%d", (int)getpid());
    unlink(trace);
    FILE *tf = fopen(trace, "a"); /* the trace is a callback: the lines go where its owner says */
    assert_non_null(tf);
    struct s3l_s3_config cfg = {.trace = trace_to_file, .trace_ctx = tf};
    struct s3l_s3_client *c = client_with(&cfg);
    struct s3l_s3_object o;
    OK(s3l_s3_put_object(c, bucket, "empty", NULL, 0, NULL, &o, err));
    assert_string_equal(o.etag, "d41d8cd98f00b204e9800998ecf8427e"); /* MD5 of nothing */
    OK(s3l_s3_head_object(c, bucket, "empty", &o, err));
    assert_true(o.size == 0);
    uint8_t *d;
    size_t n = 99;
    OK(s3l_s3_get_object(c, bucket, "empty", 0, 0, 16, &d, &n, NULL, err));
    assert_int_equal(n, 0);
    s3l_free(d);
    s3l_s3_client_free(c);
    fclose(tf);
    /* one PutObject line with 0 bytes out, and no multipart call at all; no secret anywhere */
    FILE *f = fopen(trace, "r");
    assert_non_null(f);
    char line[2048];
    int puts = 0, lines = 0;
    while (fgets(line, sizeof(line), f)) {
        lines++;
        assert_null(strstr(line, "Multipart"));
        assert_null(strstr(line, getenv("AWS_SECRET_ACCESS_KEY")));
        assert_null(strstr(line, "Signature"));
        if (strstr(line, "\"op\":\"PutObject\"")) {
            puts++;
            assert_non_null(strstr(line, "\"bytes_out\":0,"));
            assert_non_null(strstr(line, "\"status\":200"));
            assert_non_null(strstr(line, "\"attempt\":1"));
        }
    }
    fclose(f);
    unlink(trace);
    assert_int_equal(puts, 1);
    assert_int_equal(lines, 3);
}

static int count_cb(void *ctx, const struct s3l_s3_object *o)
{
    (void)o;
    (*(int *)ctx)++;
    return 0;
}

static void listing_copy_and_batch_delete(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    enum { N = 1001 };
    char *keys[N];
    for (int i = 0; i < N; i++) {
        keys[i] = malloc(32);
        snprintf(keys[i], 32, "many/%05d", i);
    }
    /* PUTs in parallel would need the batch API; 1,001 small sequential PUTs take ~2 s */
    for (int i = 0; i < N; i++)
        OK(s3l_s3_put_object(c, bucket, keys[i], keys[i], strlen(keys[i]), NULL, NULL, err));
    struct s3l_s3_list_page p;
    OK(s3l_s3_list_objects(c, bucket, "many/", NULL, NULL, 400, &p, err));
    assert_int_equal(p.n_objects, 400);
    assert_true(p.truncated);
    assert_string_equal(p.objects[0].key, "many/00000");
    char *tok = s3l_strdup(p.next_token);
    s3l_s3_list_page_free(&p);
    OK(s3l_s3_list_objects(c, bucket, "many/", NULL, tok, 400, &p, err));
    assert_string_equal(p.objects[0].key, "many/00400");
    s3l_s3_list_page_free(&p);
    s3l_free(tok);
    int count = 0;
    OK(s3l_s3_list_all(c, bucket, "many/", count_cb, &count, err));
    assert_int_equal(count, N);
    OK(s3l_s3_list_objects(c, bucket, NULL, "/", NULL, 0, &p, err));
    bool found = false;
    for (size_t i = 0; i < p.n_prefixes; i++)
        found = found || strcmp(p.prefixes[i], "many/") == 0;
    assert_true(found);
    s3l_s3_list_page_free(&p);

    struct s3l_s3_object o;
    OK(s3l_s3_copy_object(c, bucket, "many/00007", bucket, "copied/seven", &o, err));
    uint8_t *d;
    size_t n;
    OK(s3l_s3_get_object(c, bucket, "copied/seven", 0, 0, 100, &d, &n, NULL, err));
    assert_int_equal(n, strlen("many/00007"));
    assert_memory_equal(d, "many/00007", n);
    s3l_free(d);
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_copy_object(c, bucket, "missing", bucket, "x", NULL, &e),
                     S3L_ENOT_FOUND);

    OK(s3l_s3_delete_objects(c, bucket, (const char *const *)keys, N, err)); /* 2 batches */
    count = 0;
    OK(s3l_s3_list_all(c, bucket, "many/", count_cb, &count, err));
    assert_int_equal(count, 0);
    OK(s3l_s3_delete_object(c, bucket, "copied/seven", err));
    for (int i = 0; i < N; i++)
        free(keys[i]);
    s3l_s3_client_free(c);
}

static void multipart_five_mib_and_copy(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    size_t n = 5u << 20;
    uint8_t *data = pattern(n + 3, 5);
    char *id = NULL;
    struct s3l_s3_put_options po = {.upload_meta = "u-5mib", .content_type = "application/x"};
    OK(s3l_s3_create_multipart(c, bucket, "mp/five", &po, &id, err));
    struct s3l_s3_part parts[2] = {{.number = 1}, {.number = 2}};
    const void *d[2] = {data, data + n};
    size_t len[2] = {n, 3};
    OK(s3l_s3_upload_parts(c, bucket, "mp/five", id, d, len, parts, 2, err));
    char md5[33];
    md5_hex(data, n, md5);
    assert_string_equal(parts[0].etag, md5);
    struct s3l_s3_object o;
    OK(s3l_s3_complete_multipart(c, bucket, "mp/five", id, parts, 2, &o, err));
    s3l_free(id);
    OK(s3l_s3_head_object(c, bucket, "mp/five", &o, err));
    assert_true(o.size == n + 3);
    assert_string_equal(o.upload_meta, "u-5mib");
    assert_non_null(strchr(o.etag, '-')); /* a multipart ETag: "<md5 of md5s>-2" */
    uint8_t *got;
    size_t got_n;
    OK(s3l_s3_get_object(c, bucket, "mp/five", 0, 0, n + 3, &got, &got_n, NULL, err));
    assert_true(got_n == n + 3);
    assert_memory_equal(got, data, n + 3);
    s3l_free(got);

    /* exactly 5 MiB in one part */
    OK(s3l_s3_create_multipart(c, bucket, "mp/exact", NULL, &id, err));
    struct s3l_s3_part one = {.number = 1};
    OK(s3l_s3_upload_part(c, bucket, "mp/exact", id, data, n, &one, err));
    OK(s3l_s3_complete_multipart(c, bucket, "mp/exact", id, &one, 1, NULL, err));
    s3l_free(id);
    OK(s3l_s3_head_object(c, bucket, "mp/exact", &o, err));
    assert_true(o.size == n);

    /* UploadPartCopy: the 5 MiB + 3 object copied as two ranges */
    OK(s3l_s3_create_multipart(c, bucket, "mp/copy", NULL, &id, err));
    struct s3l_s3_part cp[2] = {{.number = 1}, {.number = 2}};
    OK(s3l_s3_upload_part_copy(c, bucket, "mp/copy", id, bucket, "mp/five", 0, n - 1, &cp[0],
                               err));
    OK(s3l_s3_upload_part_copy(c, bucket, "mp/copy", id, bucket, "mp/five", n, n + 2, &cp[1],
                               err));
    OK(s3l_s3_complete_multipart(c, bucket, "mp/copy", id, cp, 2, NULL, err));
    s3l_free(id);
    OK(s3l_s3_get_object(c, bucket, "mp/copy", 0, 0, n + 3, &got, &got_n, NULL, err));
    assert_true(got_n == n + 3);
    assert_memory_equal(got, data, n + 3);
    s3l_free(got);

    /* Complete with a wrong ETag: InvalidPart, a permanent error with the request id */
    OK(s3l_s3_create_multipart(c, bucket, "mp/bad", NULL, &id, err));
    OK(s3l_s3_upload_part(c, bucket, "mp/bad", id, data, 10, &one, err));
    snprintf(one.etag, sizeof(one.etag), "00000000000000000000000000000000");
    struct s3l_error e = {0};
    int rc = s3l_s3_complete_multipart(c, bucket, "mp/bad", id, &one, 1, NULL, &e);
    assert_int_equal(rc, S3L_EINVALID_ARGUMENT);
    assert_string_equal(e.s3_code, "InvalidPart");
    assert_int_equal(e.http_status, 400);
    assert_true(e.request_id[0] != 0);
    OK(s3l_s3_abort_multipart(c, bucket, "mp/bad", id, err));
    s3l_free(id);
    /* zero parts is refused: an empty object is a PUT */
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_complete_multipart(c, bucket, "mp/none", "x", NULL, 0, NULL, &e),
                     S3L_EINVALID_ARGUMENT);
    const char *del[] = {"mp/five", "mp/exact", "mp/copy"};
    OK(s3l_s3_delete_objects(c, bucket, del, 3, err));
    free(data);
    s3l_s3_client_free(c);
}

static void thousand_and_one_parts(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    enum { N = 1001 };
    char *id = NULL;
    OK(s3l_s3_create_multipart(c, bucket, "mp/many", NULL, &id, err));
    static struct s3l_s3_part parts[N];
    const void *d[N];
    size_t len[N];
    static char bodies[N][8];
    for (int i = 0; i < N; i++) {
        parts[i].number = i + 1;
        snprintf(bodies[i], sizeof(bodies[i]), "p%05d", i + 1);
        d[i] = bodies[i];
        len[i] = strlen(bodies[i]);
    }
    OK(s3l_s3_upload_parts(c, bucket, "mp/many", id, d, len, parts, N, err));
    /* ListParts pages: 1,000 then 1 */
    struct s3l_s3_parts_page pg;
    OK(s3l_s3_list_parts(c, bucket, "mp/many", id, 0, 0, &pg, err));
    assert_int_equal(pg.n, 1000);
    assert_true(pg.truncated);
    assert_int_equal(pg.parts[999].number, 1000);
    assert_string_equal(pg.parts[999].etag, parts[999].etag);
    assert_true(pg.parts[0].size == 6);
    int marker = pg.next_marker;
    s3l_s3_parts_page_free(&pg);
    OK(s3l_s3_list_parts(c, bucket, "mp/many", id, marker, 0, &pg, err));
    assert_int_equal(pg.n, 1);
    assert_int_equal(pg.parts[0].number, 1001);
    assert_false(pg.truncated);
    s3l_s3_parts_page_free(&pg);
    /* the upload is listed, then gone after abort */
    struct s3l_s3_uploads_page up;
    OK(s3l_s3_list_uploads(c, bucket, "mp/", NULL, NULL, 0, &up, err));
    bool seen = false;
    for (size_t i = 0; i < up.n; i++)
        seen = seen || (strcmp(up.uploads[i].upload_id, id) == 0 &&
                        strcmp(up.uploads[i].key, "mp/many") == 0);
    assert_true(seen);
    s3l_s3_uploads_page_free(&up);
    OK(s3l_s3_abort_multipart(c, bucket, "mp/many", id, err));
    OK(s3l_s3_list_uploads(c, bucket, "mp/many", NULL, NULL, 0, &up, err));
    for (size_t i = 0; i < up.n; i++)
        assert_string_not_equal(up.uploads[i].upload_id, id);
    s3l_s3_uploads_page_free(&up);
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_list_parts(c, bucket, "mp/many", id, 0, 0, &pg, &e), S3L_ENOT_FOUND);
    /* AWS says NoSuchUpload; RGW 16 answers NoSuchKey: either is NOT_FOUND */
    assert_true(strcmp(e.s3_code, "NoSuchUpload") == 0 || strcmp(e.s3_code, "NoSuchKey") == 0);
    struct s3l_s3_object o;
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "mp/many", &o, &e), S3L_ENOT_FOUND);
    s3l_free(id);
    s3l_s3_client_free(c);
}

static void conditions_and_errors(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    struct s3l_s3_object o;
    struct s3l_s3_put_options first = {.if_none_match = true};
    OK(s3l_s3_delete_object(c, bucket, "cond/ckpt", err));
    OK(s3l_s3_put_object(c, bucket, "cond/ckpt", "v1", 2, &first, &o, err));
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_put_object(c, bucket, "cond/ckpt", "v2", 2, &first, NULL, &e),
                     S3L_EPRECONDITION_FAILED);
    assert_int_equal(e.http_status, 412);
    struct s3l_s3_put_options wrong = {.if_match = "0123456789abcdef0123456789abcdef"};
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_put_object(c, bucket, "cond/ckpt", "v2", 2, &wrong, NULL, &e),
                     S3L_EPRECONDITION_FAILED);
    struct s3l_s3_put_options right = {.if_match = o.etag};
    OK(s3l_s3_put_object(c, bucket, "cond/ckpt", "v2", 2, &right, NULL, err));
    OK(s3l_s3_delete_object(c, bucket, "cond/ckpt", err));

    /* response cap */
    OK(s3l_s3_put_object(c, bucket, "cap", "0123456789", 10, NULL, NULL, err));
    uint8_t *d = NULL;
    size_t n;
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_get_object(c, bucket, "cap", 0, 0, 5, &d, &n, NULL, &e),
                     S3L_ETOO_LARGE);
    assert_null(d);
    OK(s3l_s3_delete_object(c, bucket, "cap", err));

    /* bad bucket names never reach the wire */
    const char *bad[] = {"ab", "Upper", "a..b", "-dash", "192.168.1.1", "under_score"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        s3l_error_clear(&e);
        assert_int_equal(s3l_s3_head_bucket(c, bad[i], &e), S3L_EINVALID_ARGUMENT);
        assert_non_null(strstr(e.message, "bucket name"));
    }
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_bucket(c, "no-such-bucket-here", &e), S3L_ENOT_FOUND);
    OK(s3l_s3_head_bucket(c, bucket, err));
    s3l_s3_client_free(c);

    /* wrong secret: AUTH_INVALID, not retried, with the store's request id */
    struct s3l_s3_config cfg = {.access_key = getenv("AWS_ACCESS_KEY_ID"),
                                .secret_key = "wrong-secret"};
    c = client_with(&cfg);
    s3l_error_clear(&e);
    /* a HEAD answer has no body, so a 403 cannot say why; the ListObjectsV2 of that key that
     * settles a 403 (s3/settle.c, the minimal policy) can: SignatureDoesNotMatch, AUTH_INVALID */
    assert_int_equal(s3l_s3_head_object(c, bucket, "x", &o, &e), S3L_EAUTH_INVALID);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_put_object(c, bucket, "x", "x", 1, NULL, NULL, &e),
                     S3L_EAUTH_INVALID);
    assert_string_equal(e.s3_code, "SignatureDoesNotMatch");
    assert_int_equal(e.http_status, 403);
    assert_true(e.request_id[0] != 0);
    assert_non_null(strstr(e.message, e.request_id));
    assert_null(strstr(e.message, "wrong-secret"));
    assert_int_equal(c->n_requests, 3); /* one attempt each, and the HEAD's settling list */
    s3l_s3_client_free(c);

    /* an endpoint that is not a URL, and one that nobody listens on */
    struct s3l_s3_config bad_ep = {.endpoint = "not a url"};
    struct s3l_s3_client *c2 = NULL;
    s3l_error_clear(&e);
    bad_ep.version = S3L_S3_CONFIG_VERSION;
    assert_int_equal(s3l_s3_client_new(&bad_ep, &c2, &e), S3L_EINVALID_CONFIG);
    assert_null(c2);
    struct s3l_s3_config closed = {.endpoint = "http://127.0.0.1:1", .max_attempts = 3,
                                   .backoff_base_ms = 10};
    c = client_with(&closed);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "x", &o, &e), S3L_ETRANSIENT);
    assert_non_null(strstr(e.message, "HeadObject x"));
    assert_int_equal(c->n_requests, 3);
    s3l_s3_client_free(c);
}

static void virtual_hosted_and_tls(void **state)
{
    (void)state;
    /* virtual-hosted: BUCKET.s3.localhost.test resolved to 127.0.0.1 by the client itself */
    char ep[256], resolve[256];
    const char *dns = getenv("RGW_DNS_NAME"), *port = getenv("RGW_PORT");
    snprintf(ep, sizeof(ep), "http://%s:%s", dns, port);
    snprintf(resolve, sizeof(resolve), "%s.%s:%s:127.0.0.1", bucket, dns, port);
    struct s3l_s3_config cfg = {.endpoint = ep, .path_style = -1, .resolve = resolve};
    struct s3l_s3_client *c = client_with(&cfg);
    roundtrip(c, "vhost/key with space", 100);
    OK(s3l_s3_delete_object(c, bucket, "vhost/key with space", err));
    s3l_s3_client_free(c);

    const char *tls = getenv("RGW_TLS_ENDPOINT"), *ca = getenv("RGW_CA_FILE");
    if (!tls || !ca) {
        print_message("no TLS frontend in this store (S3L_RGW_ENV without RGW_TLS_PORT)\n");
        return;
    }
    struct s3l_s3_config tcfg = {.endpoint = tls, .ca_file = ca};
    c = client_with(&tcfg);
    roundtrip(c, "tls/object", 5000);
    OK(s3l_s3_delete_object(c, bucket, "tls/object", err));
    s3l_s3_client_free(c);
    /* the system store does not know the throw-away CA: a clear, unretried refusal */
    struct s3l_s3_config nocfg = {.endpoint = tls};
    c = client_with(&nocfg);
    struct s3l_error e = {0};
    struct s3l_s3_object o;
    assert_int_equal(s3l_s3_head_object(c, bucket, "tls/object", &o, &e), S3L_EINVALID_CONFIG);
    assert_int_equal(c->n_requests, 1);
    s3l_s3_client_free(c);
}

static void streaming_uploads_and_large_copy(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    size_t n = (23u << 20) + 11;
    uint8_t *data = pattern(n, 23);
    struct s3l_s3_upload *u = NULL;
    struct s3l_s3_put_options po = {.content_type = "application/vnd.apache.parquet"};
    OK(s3l_s3_upload_begin(c, bucket, "stream/big", &po, 5u << 20, &u, err));
    for (size_t off = 0; off < n;) { /* odd pieces, crossing part boundaries */
        size_t k = S3L_MIN(n - off, (size_t)(1u << 20) + 7);
        OK(s3l_s3_upload_write(u, data + off, k, err));
        off += k;
    }
    assert_true(s3l_s3_upload_size(u) == n);
    /* nothing visible before publish */
    struct s3l_s3_object o;
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_head_object(c, bucket, "stream/big", &o, &e), S3L_ENOT_FOUND);
    OK(s3l_s3_upload_publish(u, &o, err));
    assert_true(o.size == n);
    assert_true(o.etag[0] != 0); /* RGW's empty Complete ETag was filled by a HEAD */
    OK(s3l_s3_head_object(c, bucket, "stream/big", &o, err));
    assert_true(o.size == n);
    assert_int_equal(strlen(o.upload_meta), 32);
    uint8_t *got;
    size_t got_n;
    OK(s3l_s3_get_object(c, bucket, "stream/big", 0, 0, n, &got, &got_n, NULL, err));
    assert_true(got_n == n);
    assert_memory_equal(got, data, n);
    s3l_free(got);

    /* a copy above a (small) threshold goes by UploadPartCopy: 5 parts of 5 MiB */
    uint64_t req0 = 0, req1 = 0;
    s3l_s3_client_counters(c, &req0, NULL, NULL);
    OK(s3l_s3_copy(c, bucket, "stream/big", bucket, "stream/copy", 1u << 20, 5u << 20, &o, err));
    s3l_s3_client_counters(c, &req1, NULL, NULL);
    assert_true(req1 - req0 == 1 + 1 + 5 + 1 + 1); /* HEAD, Create, 5 copies, Complete, HEAD */
    OK(s3l_s3_get_object(c, bucket, "stream/copy", 0, 0, n, &got, &got_n, NULL, err));
    assert_true(got_n == n);
    assert_memory_equal(got, data, n);
    s3l_free(got);

    /* small and empty objects are single PUTs whose ETag is the MD5 of the bytes */
    OK(s3l_s3_upload_begin(c, bucket, "stream/small", NULL, 0, &u, err));
    OK(s3l_s3_upload_write(u, "hello", 5, err));
    OK(s3l_s3_upload_publish(u, &o, err));
    assert_string_equal(o.etag, "5d41402abc4b2a76b9719d911017c592"); /* md5("hello") */
    OK(s3l_s3_upload_begin(c, bucket, "stream/empty", NULL, 0, &u, err));
    OK(s3l_s3_upload_publish(u, &o, err));
    OK(s3l_s3_head_object(c, bucket, "stream/empty", &o, err));
    assert_true(o.size == 0);

    /* abort after parts were sent: no object, no upload left behind */
    OK(s3l_s3_upload_begin(c, bucket, "stream/aborted", NULL, 5u << 20, &u, err));
    OK(s3l_s3_upload_write(u, data, (21u << 20), err)); /* 4 full parts sent, 1 MiB kept */
    struct s3l_s3_uploads_page up;
    OK(s3l_s3_list_uploads(c, bucket, "stream/aborted", NULL, NULL, 0, &up, err));
    assert_int_equal(up.n, 1);
    s3l_s3_uploads_page_free(&up);
    s3l_s3_upload_abort(u);
    OK(s3l_s3_list_uploads(c, bucket, "stream/aborted", NULL, NULL, 0, &up, err));
    assert_int_equal(up.n, 0);
    s3l_s3_uploads_page_free(&up);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "stream/aborted", &o, &e), S3L_ENOT_FOUND);

    const char *del[] = {"stream/big", "stream/copy", "stream/small", "stream/empty"};
    OK(s3l_s3_delete_objects(c, bucket, del, 4, err));
    free(data);
    s3l_s3_client_free(c);
}

static int collect_keys(void *ctx, const struct s3l_object_info *info)
{
    struct s3l_buf *b = ctx;
    s3l_buf_printf(b, "%s:%llu,", info->key, (unsigned long long)info->size);
    return 0;
}

/* The s3:// store backend through the storage vtable's dispatch functions, as the destination
 * uses it: the same calls the local backend's tests make. */
static void store_backend(void **state)
{
    (void)state;
    char url[128];
    snprintf(url, sizeof(url), "s3://%s/store-test/", bucket);
    struct s3l_s3_store_options so = {.version = S3L_S3_STORE_OPTIONS_VERSION,
                                      .part_size = 5u << 20, .copy_threshold = 1u << 20,
                                      .copy_part_size = 5u << 20};
    struct s3l_store_options opts = {.version = S3L_STORE_OPTIONS_VERSION, .endpoint = endpoint,
                                     .s3 = &so};
    struct s3l_store *st = NULL;
    OK(s3l_store_open(url, &opts, &st, err));
    assert_true((st->ops->caps & S3L_STORE_CAP_MULTIPART) != 0);
    char canon[128];
    snprintf(canon, sizeof(canon), "s3://%s/store-test", bucket);
    assert_string_equal(st->url, canon);

    /* put-if-absent, conditional replace with the ETag read, stale ETag refused */
    struct s3l_put_options first = {.if_none_match = true};
    struct s3l_object_info info;
    OK(s3l_store_put(st, "_openetl/checkpoints/p.json", "{\"g\":1}", 7, &first, &info, err));
    char etag[132];
    snprintf(etag, sizeof(etag), "%s", info.etag);
    struct s3l_error e = {0};
    assert_int_equal(s3l_store_put(st, "_openetl/checkpoints/p.json", "{}", 2, &first, NULL, &e),
                     S3L_EPRECONDITION_FAILED);
    struct s3l_put_options cond = {.if_match = etag};
    OK(s3l_store_put(st, "_openetl/checkpoints/p.json", "{\"g\":2}", 7, &cond, &info, err));
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_put(st, "_openetl/checkpoints/p.json", "{\"g\":3}", 7, &cond,
                                   NULL, &e), S3L_EPRECONDITION_FAILED); /* a zombie's write */
    uint8_t *d = NULL;
    size_t n = 0;
    OK(s3l_store_get(st, "_openetl/checkpoints/p.json", 0, UINT64_MAX, 100, &d, &n, &info, err));
    assert_int_equal(n, 7);
    assert_memory_equal(d, "{\"g\":2}", 7);
    s3l_free(d);
    OK(s3l_store_get(st, "_openetl/checkpoints/p.json", 5, 2, 100, &d, &n, NULL, err));
    assert_int_equal(n, 2);
    assert_memory_equal(d, "2}", 2);
    s3l_free(d);
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_get(st, "_openetl/checkpoints/p.json", 0, UINT64_MAX, 3, &d, &n,
                                   NULL, &e), S3L_ETOO_LARGE);
    /* past the end, and zero bytes: no bytes, like the local backend; a missing key: NOT_FOUND */
    OK(s3l_store_get(st, "_openetl/checkpoints/p.json", 100, UINT64_MAX, 100, &d, &n, &info, err));
    assert_int_equal(n, 0);
    assert_true(info.size == 7);
    s3l_free(d);
    OK(s3l_store_get(st, "_openetl/checkpoints/p.json", 0, 0, 100, &d, &n, NULL, err));
    assert_int_equal(n, 0);
    s3l_free(d);
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_get(st, "nope", 0, UINT64_MAX, 100, &d, &n, NULL, &e),
                     S3L_ENOT_FOUND);
    /* a header injection through an option is refused before sending */
    struct s3l_put_options evil = {.content_type = "text/plain\r\nx-amz-acl: public-read"};
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_put(st, "evil", "x", 1, &evil, NULL, &e), S3L_EINVALID_ARGUMENT);

    /* a streamed upload of 12 MiB + 1: invisible until published, then whole */
    size_t big = (12u << 20) + 1;
    uint8_t *data = pattern(big, 77);
    struct s3l_upload *u = NULL;
    OK(s3l_store_upload_begin(st, "t/a.parquet", NULL, &u, err));
    for (size_t off = 0; off < big; off += 300000)
        OK(s3l_store_upload_write(u, data + off, S3L_MIN((size_t)300000, big - off), err));
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_stat(st, "t/a.parquet", &info, &e), S3L_ENOT_FOUND);
    OK(s3l_store_upload_publish(u, &info, err));
    assert_true(info.size == big);
    OK(s3l_store_copy(st, "t/a.parquet", "t/b.parquet", err)); /* over the threshold: parts */
    OK(s3l_store_get(st, "t/b.parquet", 0, UINT64_MAX, big, &d, &n, NULL, err));
    assert_true(n == big);
    assert_memory_equal(d, data, big);
    s3l_free(d);
    /* an aborted upload leaves nothing */
    OK(s3l_store_upload_begin(st, "t/c.parquet", NULL, &u, err));
    OK(s3l_store_upload_write(u, data, big, err));
    s3l_store_upload_abort(u);
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_stat(st, "t/c.parquet", &info, &e), S3L_ENOT_FOUND);
    free(data);

    /* listing is relative to the store's prefix, in byte order */
    struct s3l_buf keys;
    s3l_buf_init(&keys, 1 << 16);
    OK(s3l_store_list(st, "", collect_keys, &keys, err));
    char want[256];
    snprintf(want, sizeof(want), "_openetl/checkpoints/p.json:7,t/a.parquet:%zu,t/b.parquet:%zu,",
             big, big);
    assert_string_equal((char *)keys.ptr, want);
    s3l_buf_reset(&keys);
    OK(s3l_store_list(st, "t/", collect_keys, &keys, err));
    assert_non_null(strstr((char *)keys.ptr, "t/a.parquet"));
    s3l_buf_free(&keys);
    OK(s3l_store_remove(st, "t/a.parquet", err));
    OK(s3l_store_remove(st, "t/b.parquet", err));
    OK(s3l_store_remove(st, "t/missing", err)); /* a missing key is success */
    OK(s3l_store_remove(st, "_openetl/checkpoints/p.json", err));
    s3l_store_free(st);
}

/* Parts of p's upload of key (under the store prefix) that the store holds now, read by a client
 * of its own (ListMultipartUploads, then ListParts); *sizes_ok: each of them is part bytes. */
static size_t parts_at_store(struct s3l_s3_client *c, const char *key, size_t part, bool *sizes_ok)
{
    struct s3l_s3_uploads_page up;
    OK(s3l_s3_list_uploads(c, bucket, key, NULL, NULL, 0, &up, err));
    assert_int_equal(up.n, 1);
    struct s3l_s3_parts_page pp;
    OK(s3l_s3_list_parts(c, bucket, up.uploads[0].key, up.uploads[0].upload_id, 0, 0, &pp, err));
    *sizes_ok = true;
    for (size_t i = 0; i < pp.n; i++)
        *sizes_ok = *sizes_ok && pp.parts[i].size == part;
    size_t n = pp.n;
    s3l_s3_parts_page_free(&pp);
    s3l_s3_uploads_page_free(&up);
    return n;
}

/*
 * Issue 14 item 3: the parts of an upload travel while its writer writes nothing (a Parquet
 * writer encodes its next row group between two writes), as long as it calls
 * s3l_store_upload_progress now and then, as the destination's lanes do every 64 rows. Three
 * full parts are written at once and then only progress is called: the store itself (ListParts,
 * asked by another client) must come to hold all three before any further write. Without the
 * progress calls libcurl moves no body and the parts stay cut short in the sockets' buffers.
 */
static int count_keys(void *ctx, const struct s3l_object_info *info)
{
    (void)info;
    ++*(unsigned *)ctx;
    return 0;
}

static uint64_t requests(struct s3l_store *st)
{
    struct s3l_store_counts c;
    s3l_store_counts(st, &c);
    return c.total;
}

/* issue 14 item 2: put_many sends the puts together and answers each on its own; read_ahead
 * keeps its answers for the calls that follow (no request of their own), until this store writes
 * to what they are for. Another store (another writer) changing an object meanwhile is not seen
 * until then: what was kept is what a read at the batch's moment would have returned. */
static void store_batches(void **state)
{
    (void)state;
    char url[128];
    snprintf(url, sizeof(url), "s3://%s/batch-test-%d/", bucket, (int)getpid());
    struct s3l_store_options opts = {.version = S3L_STORE_OPTIONS_VERSION, .endpoint = endpoint};
    struct s3l_store *st = NULL, *other = NULL;
    OK(s3l_store_open(url, &opts, &st, err));
    OK(s3l_store_open(url, &opts, &other, err));
    OK(s3l_store_put(st, "m/b.json", "old", 3, NULL, NULL, err));
    struct s3l_put_options pia = {.if_none_match = true, .content_type = "application/json"};
    struct s3l_put_item items[3] = {{"m/a.json", "{\"a\":1}", 7, &pia, 0, {0}},
                                    {"m/b.json", "{\"b\":1}", 7, &pia, 0, {0}},
                                    {"m/c.json", "{\"c\":1}", 7, &pia, 0, {0}}};
    uint64_t r0 = requests(st);
    struct s3l_error e = {0};
    assert_int_equal(s3l_store_put_many(st, items, 3, &e), S3L_EPRECONDITION_FAILED);
    assert_int_equal(requests(st) - r0, 3);
    assert_int_equal(items[0].rc, 0);
    assert_int_equal(items[1].rc, S3L_EPRECONDITION_FAILED); /* it exists: the others still went */
    assert_non_null(strstr(items[1].err.message, "m/b.json"));
    assert_int_equal(items[2].rc, 0);
    uint8_t *d = NULL;
    size_t n = 0;
    OK(s3l_store_get(other, "m/c.json", 0, UINT64_MAX, 100, &d, &n, NULL, err));
    assert_int_equal(n, 7);
    assert_memory_equal(d, "{\"c\":1}", 7);
    s3l_free(d);

    /* Three reads ahead, one round trip; the calls after them send nothing. */
    struct s3l_read_item ra[] = {{S3L_READ_GET, "m/a.json", 100},
                                 {S3L_READ_LIST, "m/", 0},
                                 {S3L_READ_STAT, "m/none.json", 0}};
    r0 = requests(st);
    s3l_store_read_ahead(st, ra, 3);
    assert_int_equal(requests(st) - r0, 3);
    /* Asked again (a stream's open after the start's batch): what is kept is not sent again. */
    s3l_store_read_ahead(st, ra, 3);
    assert_int_equal(requests(st) - r0, 3);
    OK(s3l_store_put(other, "m/a.json", "{\"a\":2}", 7, NULL, NULL, err)); /* another writer */
    r0 = requests(st);
    struct s3l_object_info info;
    OK(s3l_store_get(st, "m/a.json", 0, UINT64_MAX, 100, &d, &n, &info, err));
    assert_int_equal(n, 7);
    assert_memory_equal(d, "{\"a\":1}", 7); /* as it was at the batch */
    assert_int_equal(d[7], 0);                 /* NUL-terminated, as the op promises */
    s3l_free(d);
    unsigned listed = 0;
    OK(s3l_store_list(st, "m/", count_keys, &listed, err));
    assert_int_equal(listed, 3);
    s3l_error_clear(&e);
    assert_int_equal(s3l_store_stat(st, "m/none.json", &info, &e), S3L_ENOT_FOUND);
    assert_int_equal(e.code, S3L_ENOT_FOUND);
    assert_int_equal(requests(st) - r0, 0);
    /* A get with another cap, or of a range, is not the read kept: it goes to the store. */
    OK(s3l_store_get(st, "m/a.json", 0, UINT64_MAX, 50, &d, &n, NULL, err));
    assert_memory_equal(d, "{\"a\":2}", 7);
    s3l_free(d);
    assert_int_equal(requests(st) - r0, 1);
    /* This store's own writes drop what was kept for the key, and the listings holding it. */
    OK(s3l_store_put(st, "m/a.json", "{\"a\":3}", 7, NULL, NULL, err));
    OK(s3l_store_put(st, "m/none.json", "{}", 2, NULL, NULL, err));
    r0 = requests(st);
    OK(s3l_store_get(st, "m/a.json", 0, UINT64_MAX, 100, &d, &n, NULL, err));
    assert_memory_equal(d, "{\"a\":3}", 7);
    s3l_free(d);
    OK(s3l_store_stat(st, "m/none.json", &info, err));
    assert_true(info.size == 2);
    listed = 0;
    OK(s3l_store_list(st, "m/", count_keys, &listed, err));
    assert_int_equal(listed, 4);
    assert_int_equal(requests(st) - r0, 3);
    const char *keys[] = {"m/a.json", "m/b.json", "m/c.json", "m/none.json"};
    OK(s3l_store_remove_many(st, keys, 4, err));
    s3l_store_free(other);
    s3l_store_free(st);
}

static void parts_travel_between_writes(void **state)
{
    (void)state;
    char url[128];
    snprintf(url, sizeof(url), "s3://%s/progress-%d/", bucket, (int)getpid());
    const size_t part = 5u << 20;
    struct s3l_s3_store_options so = {.version = S3L_S3_STORE_OPTIONS_VERSION, .part_size = part};
    struct s3l_store_options opts = {.version = S3L_STORE_OPTIONS_VERSION, .endpoint = endpoint,
                                     .s3 = &so};
    struct s3l_store *st = NULL;
    OK(s3l_store_open(url, &opts, &st, err));
    struct s3l_s3_client *other = client();
    char key[96];
    snprintf(key, sizeof(key), "progress-%d/t/big.parquet", (int)getpid());

    size_t n = 3 * part + 1; /* 3 full parts go out; 1 byte stays in the part being filled */
    uint8_t *data = pattern(n + 1000, 41);
    struct s3l_upload *u = NULL;
    OK(s3l_store_upload_begin(st, "t/big.parquet", NULL, &u, err));
    OK(s3l_store_upload_write(u, data, n, err));
    /* "encoding": no write, only progress, for up to 120 s (a loaded machine is slow) */
    size_t at_store = 0;
    bool sizes_ok = false;
    for (int i = 0; i < 60000 && at_store < 3; i++) {
        s3l_store_upload_progress(u);
        usleep(2000);
        if (i % 100 == 99)
            at_store = parts_at_store(other, key, part, &sizes_ok);
    }
    if (at_store < 3) {
        struct s3l_error e = {0};
        int rc = s3l_store_upload_write(u, data + n, 1, &e); /* the upload's own word on it */
        fail_msg("the store holds %zu of the 3 parts written before the writer went quiet "
                 "(the upload: %s %s)", at_store, s3l_error_name(rc), e.message);
    }
    assert_true(sizes_ok);
    OK(s3l_store_upload_write(u, data + n, 1000, err));
    struct s3l_object_info info;
    OK(s3l_store_upload_publish(u, &info, err));
    assert_true(info.size == n + 1000);
    uint8_t *got = NULL;
    size_t got_n = 0;
    OK(s3l_store_get(st, "t/big.parquet", 0, UINT64_MAX, n + 1000, &got, &got_n, NULL, err));
    assert_true(got_n == n + 1000);
    assert_memory_equal(got, data, n + 1000);
    s3l_free(got);
    OK(s3l_store_remove(st, "t/big.parquet", err));
    free(data);
    s3l_s3_client_free(other);
    s3l_store_free(st);
}

/* The main job's destination, unchanged, on s3://: the model pipeline (tests/support) runs to
 * the end, is checked against its model (every row exactly once, markers whole), and a rerun of
 * the finished run changes nothing. Endpoint and keys come from the environment. */
static void destination_on_s3(void **state)
{
    (void)state;
    char url[128];
    snprintf(url, sizeof(url), "s3://%s/model-lake-%d", bucket, (int)getpid());
    struct s3l_test_run run = {.url = url, .pipeline = "model-s3", .lanes = 2, .tables = 2,
                               .file_size = 64 << 10, .total_rows = 20000, .epoch_rows = 5000,
                               .gc = true, .reject_every = 97};
    OK(s3l_test_run(&run, err));
    char why[512] = {0};
    if (s3l_test_verify(&run, true, why, sizeof(why)) != 0)
        fail_msg("verify: %s", why);
    struct s3l_test_census a, b;
    assert_int_equal(s3l_test_census(&run, &a), 0);
    assert_true(a.markers > 0 && a.data_files > 0);
    assert_false(a.pending);
    OK(s3l_test_run(&run, err)); /* finished: a rerun must change nothing */
    assert_int_equal(s3l_test_census(&run, &b), 0);
    assert_int_equal(a.markers, b.markers);
    assert_int_equal(a.data_files, b.data_files);
    assert_true(a.committed_epoch == b.committed_epoch);
    if (s3l_test_verify(&run, true, why, sizeof(why)) != 0)
        fail_msg("verify after rerun: %s", why);
    print_message("on s3://: %u markers, %u data files, epoch %llu\n", a.markers, a.data_files,
                  (unsigned long long)a.committed_epoch);
}

/* The exactly-once protocol on s3://, killed for real: a child runs the model pipeline with the
 * crash store (tests/support) armed and is SIGKILLed at each named protocol point, then at a few
 * store operations; a rerun recovers, and every row must be visible exactly once. */
static void crash_points_on_s3(void **state)
{
    (void)state;
    static const char *points[] = {"after-stage",    "after-prepare", "after-checkpoint",
                                   "between-copies", "before-marker", "after-marker",
                                   "after-commit"};
    static const uint64_t ops[] = {3, 17, 29, 41}; /* a run makes about 50 store calls */
    size_t n_cases = S3L_ARRAY_LEN(points) + S3L_ARRAY_LEN(ops);
    for (size_t i = 0; i < n_cases; i++) {
        char url[128], pipeline[32];
        snprintf(url, sizeof(url), "s3://%s/crash-lake-%d-%zu", bucket, (int)getpid(), i);
        snprintf(pipeline, sizeof(pipeline), "pc%zu", i);
        struct s3l_test_run r = {.url = url, .pipeline = pipeline, .lanes = 1, .tables = 1,
                                 .file_size = 30, .total_rows = 24, .epoch_rows = 12};
        const char *point = i < S3L_ARRAY_LEN(points) ? points[i] : NULL;
        uint64_t at = point ? 0 : ops[i - S3L_ARRAY_LEN(points)];
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            s3l_test_crash_arm(at, point, 1);
            struct s3l_error e = {0};
            _exit(s3l_test_run(&r, &e) ? 3 : 0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("%s %llu: the child was not killed (status %d)", point ? point : "op",
                     (unsigned long long)at, status);
        char why[512] = {0};
        if (s3l_test_verify(&r, false, why, sizeof(why)) != 0)
            fail_msg("%s: inconsistent after the kill: %s", point ? point : "op", why);
        r.gc = true;
        OK(s3l_test_run(&r, err));
        if (s3l_test_verify(&r, true, why, sizeof(why)) != 0)
            fail_msg("%s: after recovery: %s", point ? point : "op", why);
    }
}

/* A destination of pipeline `pipeline` on st (the production Parquet format, one lane) with
 * streams a and b of the schema in JSON `cols`. */
static struct s3l_dest *records_dest(struct s3l_store *st, const char *pipeline, const char *cols,
                                     bool with_b, struct s3l_dest_stream **a,
                                     struct s3l_dest_stream **b, struct s3l_schema **sc)
{
    struct s3l_dest_options o = {.version = S3L_DEST_OPTIONS_VERSION, .pipeline_id = pipeline,
                                 .lanes = 1};
    struct s3l_dest *d = NULL;
    OK(s3l_schema_from_json(cols, strlen(cols), sc, err));
    OK(s3l_dest_open(st, &o, &d, err));
    OK(s3l_dest_stream(d, NULL, "a", *sc, a, err));
    if (with_b)
        OK(s3l_dest_stream(d, NULL, "b", *sc, b, err));
    return d;
}

/* One row into stream st: an id, then 1.5 for every further column. */
static void records_row(struct s3l_dest_stream *st, size_t n_cols)
{
    struct s3l_row_sink k;
    struct s3l_error e = {0};
    assert_int_equal(s3l_dest_lane_sink(st, 0, &k), 0);
    assert_int_equal(k.ops->row_begin(k.ctx), 0);
    assert_int_equal(k.ops->put_int(k.ctx, 7), 0);
    for (size_t i = 1; i < n_cols; i++)
        assert_int_equal(k.ops->put_double(k.ctx, 1.5), 0);
    if (k.ops->row_end(k.ctx, &e) != 0)
        fail_msg("row: %s", e.message);
}

/* The column names of table t's schema record under url, in order, comma-separated: the object's
 * bytes (through a store of its own: a writer's store answers from its read-ahead for 10 s) read
 * as JSON by jansson, not by our schema parser. */
static void record_columns(const char *url, const char *t, char *out, size_t cap)
{
    char key[128];
    snprintf(key, sizeof(key), "_openetl/schemas/%s.json", t);
    uint8_t *rec = NULL;
    size_t len = 0;
    struct s3l_store_options opts = {.version = S3L_STORE_OPTIONS_VERSION, .endpoint = endpoint};
    struct s3l_store *st = NULL;
    OK(s3l_store_open(url, &opts, &st, err));
    OK(s3l_store_get(st, key, 0, UINT64_MAX, 1 << 20, &rec, &len, NULL, err));
    s3l_store_free(st);
    json_error_t je;
    json_t *cols = json_loadb((const char *)rec, len, 0, &je);
    if (!json_is_array(cols))
        fail_msg("%s: not a JSON list of columns: %.*s", key, (int)len, (const char *)rec);
    out[0] = 0;
    for (size_t i = 0; i < json_array_size(cols); i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "," : "",
                 json_string_value(json_object_get(json_array_get(cols, i), "name")));
    json_decref(cols);
    s3l_free(rec);
}

/*
 * An epoch's schema records go out in one batch on S3 (issue 14 item 2), and one that fails its
 * condition there is settled as before: writer A opens tables a and b (no records yet: each to be
 * put if absent) with columns id, x; writer B (another pipeline) then records a with id, y; A's
 * first epoch reads both records again before its commit point (a changed, but only by a column
 * A lacks: no drift), puts both records at once, a's fails (412), is re-read and united (id, y,
 * x: B's columns kept, A's appended), b's is written as A declared it. The requests A's epoch
 * made are counted: 2 staged files, 2 records read again, the commit point, 2 records, 2 copies,
 * 2 markers, the committed checkpoint, the delete, and for a's settling one GetObject and one
 * more PutObject.
 */
static void schema_records_in_one_batch(void **state)
{
    (void)state;
    char url[128], cols[128];
    snprintf(url, sizeof(url), "s3://%s/records-%d/", bucket, (int)getpid());
    struct s3l_store_options opts = {.version = S3L_STORE_OPTIONS_VERSION, .endpoint = endpoint};
    struct s3l_store *st = NULL, *other = NULL; /* B's own: A's epoch counts only A's */
    OK(s3l_store_open(url, &opts, &st, err));
    OK(s3l_store_open(url, &opts, &other, err));
    struct s3l_dest_stream *a, *b, *ba;
    struct s3l_schema *sa = NULL, *sb = NULL;
    struct s3l_dest *da = records_dest(st, "ra",
        "[{\"name\": \"id\", \"type\": \"int64\"}, {\"name\": \"x\", \"type\": \"double\"}]",
        true, &a, &b, &sa);
    struct s3l_dest *db = records_dest(other, "rb",
        "[{\"name\": \"id\", \"type\": \"int64\"}, {\"name\": \"y\", \"type\": \"double\"}]",
        false, &ba, NULL, &sb);
    struct s3l_dest_commit_info ci;
    records_row(ba, 2);
    OK(s3l_dest_commit(db, "{}", NULL, err));
    OK(s3l_dest_sync(db, &ci, err));
    s3l_dest_free(db);
    record_columns(url, "a", cols, sizeof(cols));
    assert_string_equal(cols, "id,y");
    records_row(a, 2);
    records_row(b, 2);
    OK(s3l_dest_commit(da, "{}", NULL, err));
    OK(s3l_dest_sync(da, &ci, err));
    s3l_dest_free(da);
    record_columns(url, "a", cols, sizeof(cols));
    assert_string_equal(cols, "id,y,x");
    record_columns(url, "b", cols, sizeof(cols));
    assert_string_equal(cols, "id,x");
    if (ci.requests.total != 16)
        fail_msg("epoch 1 of A: %llu requests, expected 16",
                 (unsigned long long)ci.requests.total);
    s3l_schema_free(sa);
    s3l_schema_free(sb);
    s3l_store_free(other);
    s3l_store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hard_keys),
        cmocka_unit_test(empty_object_and_trace),
        cmocka_unit_test(listing_copy_and_batch_delete),
        cmocka_unit_test(multipart_five_mib_and_copy),
        cmocka_unit_test(thousand_and_one_parts),
        cmocka_unit_test(conditions_and_errors),
        cmocka_unit_test(virtual_hosted_and_tls),
        cmocka_unit_test(streaming_uploads_and_large_copy),
        cmocka_unit_test(store_backend),
        cmocka_unit_test(store_batches),
        cmocka_unit_test(parts_travel_between_writes),
        cmocka_unit_test(destination_on_s3),
        cmocka_unit_test(schema_records_in_one_batch),
        cmocka_unit_test(crash_points_on_s3),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
