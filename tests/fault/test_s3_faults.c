/*
 * Fault tests of the S3 client: the client talks to Ceph RGW through tests/support/
 * fault-proxy.mjs, which injects the faults each test picks and counts, on its own side, every
 * request it sees per operation and key. From those counts (never the client's) the tests show
 * that transient faults are retried and the data arrives once, that SlowDown lowers the number
 * of requests in flight, that permanent faults stop at once with the right code, that a
 * Complete whose outcome is unknown is settled, and that no partial object is ever visible.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "s3/s3_int.h"
#include "s3l/store.h"
#include "s3l/sys/store.h"
#include "rgw_store.h"

static char bucket[64], proxy_url[128];
static pid_t proxy_pid;

static int start_proxy(const char *target)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    const char *src = getenv("S3L_SOURCE_DIR");
    char script[1024];
    snprintf(script, sizeof(script), "%s/tests/support/fault-proxy.mjs", src ? src : ".");
    proxy_pid = fork();
    if (proxy_pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execlp("node", "node", script, "--target", target, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[128] = {0};
    int port = 0;
    if (f && fgets(line, sizeof(line), f))
        sscanf(line, "LISTENING %d", &port);
    if (f)
        fclose(f);
    snprintf(proxy_url, sizeof(proxy_url), "http://127.0.0.1:%d", port);
    return port > 0 ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    if (s3l_test_rgw_start("fault", NULL) != 0)
        return -1;
    snprintf(bucket, sizeof(bucket), "%s", getenv("RGW_BUCKET"));
    unsetenv("AWS_ENDPOINT_URL");
    unsetenv("AWS_ENDPOINT_URL_S3");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return start_proxy(getenv("RGW_ENDPOINT"));
}

static int teardown(void **state)
{
    (void)state;
    if (proxy_pid > 0) {
        kill(proxy_pid, SIGTERM);
        waitpid(proxy_pid, NULL, 0);
    }
    curl_global_cleanup();
    return s3l_test_rgw_stop();
}

/* ------------------------------------------------------------------ proxy control */

static size_t collect(char *p, size_t s, size_t n, void *ud)
{
    s3l_buf_append(ud, p, s * n);
    return s * n;
}

static json_t *proxy(const char *what, const char *body)
{
    CURL *e = curl_easy_init();
    char url[256];
    snprintf(url, sizeof(url), "%s/__proxy/%s", proxy_url, what);
    struct s3l_buf out;
    s3l_buf_init(&out, 64 << 20);
    curl_easy_setopt(e, CURLOPT_URL, url);
    if (body)
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    else if (strcmp(what, "reset") == 0)
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &out);
    assert_int_equal(curl_easy_perform(e), CURLE_OK);
    curl_easy_cleanup(e);
    json_t *j = json_loads((char *)out.ptr, 0, NULL);
    s3l_buf_free(&out);
    assert_non_null(j);
    return j;
}

static void rules(const char *json)
{
    json_decref(proxy("reset", NULL));
    json_decref(proxy("rules", json));
}

/* The proxy's count FIELD of "OP KEY" (0 when never seen). */
static int count(const char *op, const char *key, const char *field)
{
    json_t *j = proxy("counts", NULL);
    char name[512];
    snprintf(name, sizeof(name), "%s %s", op, key);
    int v = (int)json_integer_value(json_object_get(json_object_get(json_object_get(j, "ops"),
                                                                    name), field));
    json_decref(j);
    return v;
}

static struct s3l_s3_client *client(int max_in_flight)
{
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION, .endpoint = proxy_url,
                                .backoff_base_ms = 5, .backoff_max_ms = 50,
                                .max_in_flight = max_in_flight};
    struct s3l_s3_client *c = NULL;
    struct s3l_error e = {0};
    if (s3l_s3_client_new(&cfg, &c, &e) != 0)
        fail_msg("client: %s", e.message);
    return c;
}

static uint8_t *pattern(size_t n)
{
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 131 + (i >> 9));
    return p;
}

static void expect_content(struct s3l_s3_client *c, const char *key, const uint8_t *d, size_t n)
{
    uint8_t *got = NULL;
    size_t got_n = 0;
    OK(s3l_s3_get_object(c, bucket, key, 0, 0, n + 1, &got, &got_n, NULL, err));
    assert_true(got_n == n);
    assert_memory_equal(got, d, n);
    s3l_free(got);
}

/* ------------------------------------------------------------------ tests */

static void transient_faults_are_retried_and_data_arrives_once(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client(4);
    rules("[{\"op\":\"PutObject\",\"key\":\"f/put\",\"times\":2,\"action\":\"error500\"},"
          " {\"op\":\"HeadObject\",\"key\":\"f/put\",\"times\":1,\"action\":\"html\"},"
          " {\"op\":\"GetObject\",\"key\":\"f/put\",\"times\":1,\"action\":\"slowdown\"}]");
    OK(s3l_s3_put_object(c, bucket, "f/put", "payload", 7, NULL, NULL, err));
    assert_int_equal(count("PutObject", "f/put", "seen"), 3);
    assert_int_equal(count("PutObject", "f/put", "forwarded"), 1); /* the store saw it once */
    struct s3l_s3_object o;
    OK(s3l_s3_head_object(c, bucket, "f/put", &o, err));
    assert_int_equal(count("HeadObject", "f/put", "seen"), 2);
    expect_content(c, "f/put", (const uint8_t *)"payload", 7);
    assert_int_equal(count("GetObject", "f/put", "seen"), 2);

    /* a reset in the middle of a part's body: that part is sent again, the object is whole */
    size_t n = (11u << 20) + 5;
    uint8_t *d = pattern(n);
    rules("[{\"op\":\"UploadPart\",\"key\":\"f/stream\",\"skip\":1,\"times\":1,"
          "\"action\":\"reset\"},"
          " {\"op\":\"CompleteMultipartUpload\",\"key\":\"f/stream\",\"times\":1,"
          "\"action\":\"error_in_200\"}]");
    struct s3l_s3_upload *u = NULL;
    OK(s3l_s3_upload_begin(c, bucket, "f/stream", NULL, 5u << 20, &u, err));
    OK(s3l_s3_upload_write(u, d, n, err));
    OK(s3l_s3_upload_publish(u, NULL, err));
    assert_int_equal(count("UploadPart", "f/stream", "seen"), 4);
    assert_int_equal(count("UploadPart", "f/stream", "forwarded"), 3);
    /* the 200 carrying InternalError was retried; RGW accepts the repeated Complete */
    assert_int_equal(count("CompleteMultipartUpload", "f/stream", "seen"), 2);
    expect_content(c, "f/stream", d, n);
    free(d);
    s3l_s3_client_free(c);
}

static void slowdown_lowers_requests_in_flight(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client(4);
    /* the SlowDown answers take 50 ms, so that the first four are in flight together */
    rules("[{\"op\":\"UploadPart\",\"key\":\"f/slow\",\"times\":4,\"action\":\"slowdown\","
          "\"delayMs\":50},"
          " {\"op\":\"UploadPart\",\"key\":\"f/slow\",\"times\":-1,\"action\":\"slow\","
          "\"delayMs\":30}]");
    char *id = NULL;
    OK(s3l_s3_create_multipart(c, bucket, "f/slow", NULL, &id, err));
    enum { N = 24 };
    struct s3l_s3_part parts[N];
    const void *d[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        memset(&parts[i], 0, sizeof(parts[i]));
        parts[i].number = i + 1;
        d[i] = "tiny part";
        len[i] = 9;
    }
    OK(s3l_s3_upload_parts(c, bucket, "f/slow", id, d, len, parts, N, err));
    json_t *j = proxy("counts", NULL);
    json_t *log = json_object_get(j, "log");
    int before = 0, after = 0, slowed = 0;
    size_t i;
    json_t *ent;
    json_array_foreach(log, i, ent)
    {
        if (strcmp(json_string_value(json_object_get(ent, "op")), "UploadPart") != 0)
            continue;
        int inflight = (int)json_integer_value(json_object_get(ent, "inFlight"));
        const char *action = json_string_value(json_object_get(ent, "action"));
        if (strcmp(action, "slowdown") == 0) {
            before = S3L_MAX(before, inflight);
        } else {
            after = S3L_MAX(after, inflight);
            if (slowed++ < 8) /* right after four SlowDowns the client sends one at a time */
                assert_int_equal(inflight, 1);
        }
    }
    json_decref(j);
    print_message("UploadPart in flight: %d before SlowDown, at most %d after\n", before, after);
    assert_int_equal(before, 4);
    assert_true(after < before);
    assert_int_equal(count("UploadPart", "f/slow", "forwarded"), N); /* each part once */
    struct s3l_s3_parts_page pg;
    OK(s3l_s3_list_parts(c, bucket, "f/slow", id, 0, 0, &pg, err));
    assert_int_equal(pg.n, N);
    s3l_s3_parts_page_free(&pg);
    OK(s3l_s3_abort_multipart(c, bucket, "f/slow", id, err));
    s3l_free(id);
    s3l_s3_client_free(c);
}

static void permanent_faults_stop_at_once(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client(4);
    struct s3l_error e = {0};
    rules("[{\"op\":\"PutObject\",\"key\":\"f/denied\",\"times\":-1,\"action\":\"deny\"},"
          " {\"op\":\"GetObject\",\"key\":\"f/html\",\"times\":-1,\"action\":\"html\"}]");
    assert_int_equal(s3l_s3_put_object(c, bucket, "f/denied", "x", 1, NULL, NULL, &e),
                     S3L_EPERMISSION_DENIED);
    assert_string_equal(e.s3_code, "AccessDenied");
    assert_int_equal(e.http_status, 403);
    assert_true(strncmp(e.request_id, "proxy-", 6) == 0);
    assert_int_equal(count("PutObject", "f/denied", "seen"), 1);

    /* garbage (HTML) from a 502 is transient, retried to the limit, then named as such */
    uint8_t *d = NULL;
    size_t n;
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_get_object(c, bucket, "f/html", 0, 0, 100, &d, &n, NULL, &e),
                     S3L_ETRANSIENT);
    assert_non_null(strstr(e.message, "not S3 XML"));
    assert_int_equal(count("GetObject", "f/html", "seen"), 6);
    s3l_s3_client_free(c);
}

static void expired_token_and_clock_skew(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client(4);
    rules("[{\"op\":\"PutObject\",\"key\":\"f/token\",\"times\":1,\"action\":\"expired_token\"},"
          " {\"op\":\"PutObject\",\"key\":\"f/skew\",\"times\":1,\"action\":\"skew\","
          "\"skewSeconds\":600}]");
    OK(s3l_s3_put_object(c, bucket, "f/token", "t", 1, NULL, NULL, err));
    assert_int_equal(count("PutObject", "f/token", "seen"), 2);
    /* RGW's AccessDenied for an expired token is permanent: tried once (research note) */
    OK(s3l_s3_put_object(c, bucket, "f/skew", "s", 1, NULL, NULL, err));
    assert_int_equal(count("PutObject", "f/skew", "seen"), 2);
    /* the retry was signed with the server's clock: 600 s ahead of the first attempt */
    json_t *j = proxy("counts", NULL);
    json_t *log = json_object_get(j, "log");
    const char *d1 = NULL, *d2 = NULL;
    size_t i;
    json_t *ent;
    json_array_foreach(log, i, ent)
    {
        if (strcmp(json_string_value(json_object_get(ent, "key")), "f/skew") != 0)
            continue;
        const char *d = json_string_value(json_object_get(ent, "amzDate"));
        if (!d1)
            d1 = d;
        else
            d2 = d;
    }
    assert_non_null(d1);
    assert_non_null(d2);
    struct tm a = {0}, b = {0};
    sscanf(d1, "%4d%2d%2dT%2d%2d%2dZ", &a.tm_year, &a.tm_mon, &a.tm_mday, &a.tm_hour, &a.tm_min,
           &a.tm_sec);
    sscanf(d2, "%4d%2d%2dT%2d%2d%2dZ", &b.tm_year, &b.tm_mon, &b.tm_mday, &b.tm_hour, &b.tm_min,
           &b.tm_sec);
    a.tm_year -= 1900, b.tm_year -= 1900, a.tm_mon -= 1, b.tm_mon -= 1;
    long delta = (long)(timegm(&b) - timegm(&a));
    print_message("skew corrected by %ld s\n", delta);
    assert_true(delta >= 595 && delta <= 605);
    json_decref(j);
    s3l_s3_client_free(c);
}

/* A provider that hands out the store's keys (from the environment, as the fixture sets them)
 * and counts how often it is asked; expires_in_s > 0 gives them an Expiration that far ahead. */
struct counting_provider {
    int calls;
    long expires_in_s;
};

static int counting_get(void *impl, struct s3l_credentials *out, struct s3l_error *e)
{
    struct counting_provider *p = impl;
    p->calls++;
    out->access_key_id = s3l_strdup(getenv("AWS_ACCESS_KEY_ID"));
    out->secret_access_key = s3l_strdup(getenv("AWS_SECRET_ACCESS_KEY"));
    out->expiration_ns = p->expires_in_s ? ((int64_t)time(NULL) + p->expires_in_s) * 1000000000
                                         : 0;
    snprintf(out->source, sizeof(out->source), "fixture");
    return 0;
}

static const struct s3l_creds_provider_ops counting_ops = {S3L_CREDS_PROVIDER_OPS_VERSION,
                                                           "fixture", counting_get, NULL};

/* The client takes its credentials from the provider in its config: once at creation, again
 * after AUTH_EXPIRED (then the retry passes), and before every request while they expire
 * within 5 minutes. Static keys cannot refresh: a second ExpiredToken ends with AUTH_EXPIRED. */
static void credentials_come_from_the_provider(void **state)
{
    (void)state;
    struct counting_provider fix = {0, 0};
    struct s3l_creds_provider *prov = NULL;
    OK(s3l_creds_provider_new(&counting_ops, &fix, &prov, err));
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION, .endpoint = proxy_url,
                                .backoff_base_ms = 5, .backoff_max_ms = 50,
                                .credentials = prov};
    struct s3l_s3_client *c = NULL;
    OK(s3l_s3_client_new(&cfg, &c, err));
    assert_int_equal(fix.calls, 1);
    OK(s3l_s3_put_object(c, bucket, "creds/a", "a", 1, NULL, NULL, err));
    assert_int_equal(fix.calls, 1); /* no expiration: kept */
    rules("[{\"op\":\"PutObject\",\"key\":\"creds/b\",\"times\":1,"
          "\"action\":\"expired_token\"}]");
    OK(s3l_s3_put_object(c, bucket, "creds/b", "b", 1, NULL, NULL, err));
    assert_int_equal(count("PutObject", "creds/b", "seen"), 2);
    assert_int_equal(fix.calls, 2); /* asked again after AUTH_EXPIRED */
    s3l_s3_client_free(c);

    fix.calls = 0, fix.expires_in_s = 240; /* inside the 5-minute window: asked before each */
    OK(s3l_s3_client_new(&cfg, &c, err));
    OK(s3l_s3_put_object(c, bucket, "creds/c", "c", 1, NULL, NULL, err));
    OK(s3l_s3_put_object(c, bucket, "creds/d", "d", 1, NULL, NULL, err));
    assert_int_equal(fix.calls, 3);
    s3l_s3_client_free(c);
    s3l_creds_provider_free(prov);

    cfg.credentials = NULL;
    cfg.access_key = getenv("AWS_ACCESS_KEY_ID"), cfg.secret_key = getenv("AWS_SECRET_ACCESS_KEY");
    OK(s3l_s3_client_new(&cfg, &c, err));
    rules("[{\"op\":\"PutObject\",\"key\":\"creds/e\",\"times\":-1,"
          "\"action\":\"expired_token\"}]");
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_put_object(c, bucket, "creds/e", "e", 1, NULL, NULL, &e),
                     S3L_EAUTH_EXPIRED);
    assert_int_equal(count("PutObject", "creds/e", "seen"), 2); /* one refresh, one retry */
    rules("[]");
    s3l_s3_client_free(c);
}

static void unknown_complete_is_settled_and_nothing_partial_is_visible(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client(4);
    size_t n = (11u << 20) + 1;
    uint8_t *d = pattern(n);
    /* every Complete reaches the store, then the answer is lost: settled by HEAD + token */
    rules("[{\"op\":\"CompleteMultipartUpload\",\"key\":\"f/lost\",\"times\":-1,"
          "\"action\":\"reset_after\"}]");
    struct s3l_s3_upload *u = NULL;
    struct s3l_s3_object o;
    OK(s3l_s3_upload_begin(c, bucket, "f/lost", NULL, 5u << 20, &u, err));
    OK(s3l_s3_upload_write(u, d, n, err));
    OK(s3l_s3_upload_publish(u, &o, err));
    assert_true(o.size == n);
    assert_int_equal(count("CompleteMultipartUpload", "f/lost", "forwarded"), 6);
    rules("[]");
    expect_content(c, "f/lost", d, n);

    /* a permanent refusal of the Complete: publish fails, nothing visible, upload aborted */
    rules("[{\"op\":\"CompleteMultipartUpload\",\"key\":\"f/never\",\"times\":-1,"
          "\"action\":\"deny\"}]");
    struct s3l_error e = {0};
    OK(s3l_s3_upload_begin(c, bucket, "f/never", NULL, 5u << 20, &u, err));
    OK(s3l_s3_upload_write(u, d, n, err));
    assert_int_equal(s3l_s3_upload_publish(u, NULL, &e), S3L_EPERMISSION_DENIED);
    assert_int_equal(count("CompleteMultipartUpload", "f/never", "seen"), 1);
    assert_int_equal(count("AbortMultipartUpload", "f/never", "ok"), 1);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "f/never", &o, &e), S3L_ENOT_FOUND);

    /* a permanent refusal of a part in the middle of the stream: same */
    rules("[{\"op\":\"UploadPart\",\"key\":\"f/part\",\"skip\":2,\"times\":-1,"
          "\"action\":\"deny\"}]");
    OK(s3l_s3_upload_begin(c, bucket, "f/part", NULL, 5u << 20, &u, err));
    int rc = 0;
    for (int k = 0; k < 8 && rc == 0; k++) {
        s3l_error_clear(&e);
        rc = s3l_s3_upload_write(u, d, 5u << 20, &e);
    }
    /* The refusal comes back from the write that meets it or, when every write was buffered
     * before the refused part's answer came (a slow run: ASan, a loaded machine), from publish;
     * publish fails either way. */
    assert_true(rc == 0 || rc == S3L_EPERMISSION_DENIED);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_upload_publish(u, NULL, &e), S3L_EPERMISSION_DENIED);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "f/part", &o, &e), S3L_ENOT_FOUND);
    struct s3l_s3_uploads_page up;
    OK(s3l_s3_list_uploads(c, bucket, "f/part", NULL, NULL, 0, &up, err));
    assert_int_equal(up.n, 0);
    s3l_s3_uploads_page_free(&up);
    OK(s3l_s3_list_uploads(c, bucket, "f/never", NULL, NULL, 0, &up, err));
    assert_int_equal(up.n, 0);
    s3l_s3_uploads_page_free(&up);
    free(d);
    s3l_s3_client_free(c);
}

static void integrity_headers_are_checked(void **state)
{
    (void)state;
    /* Content-MD5: a byte flipped on the way is refused by RGW (BadDigest) and sent again */
    struct s3l_s3_client *c = client(4);
    size_t n = (6u << 20) + 3;
    uint8_t *d = pattern(n);
    rules("[{\"op\":\"UploadPart\",\"key\":\"f/md5\",\"times\":1,\"action\":\"corrupt\"}]");
    struct s3l_s3_upload *u = NULL;
    OK(s3l_s3_upload_begin(c, bucket, "f/md5", NULL, 5u << 20, &u, err));
    OK(s3l_s3_upload_write(u, d, n, err));
    OK(s3l_s3_upload_publish(u, NULL, err));
    assert_int_equal(count("UploadPart", "f/md5", "forwarded"), 3);
    assert_int_equal(count("UploadPart", "f/md5", "ok"), 2);
    rules("[]");
    expect_content(c, "f/md5", d, n);
    s3l_s3_client_free(c);

    /* CRC32C: RGW ignores it, so the proxy checks every part's x-amz-checksum-crc32c itself */
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION, .endpoint = proxy_url,
                                .integrity = S3L_S3_INTEGRITY_CRC32C};
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &e), 0);
    rules("[]");
    OK(s3l_s3_upload_begin(c, bucket, "f/crc", NULL, 5u << 20, &u, err));
    OK(s3l_s3_upload_write(u, d, n, err));
    OK(s3l_s3_upload_publish(u, NULL, err));
    OK(s3l_s3_put_object(c, bucket, "f/crc-put", d, 1000, NULL, NULL, err));
    assert_int_equal(count("UploadPart", "f/crc", "checksummed"), 2);
    assert_int_equal(count("UploadPart", "f/crc", "checksumBad"), 0);
    assert_int_equal(count("PutObject", "f/crc-put", "checksummed"), 1);
    assert_int_equal(count("PutObject", "f/crc-put", "checksumBad"), 0);
    free(d);
    s3l_s3_client_free(c);
}

/* One lane of two_threads_share_one_client: a streaming upload of d[0..n) to key, written with
 * reserve/commit (zero-copy) or with write, while the other lane does the same. */
struct lane {
    struct s3l_s3_client *c;
    const char *key;
    const uint8_t *d;
    size_t n;
    bool zero_copy;
    int rc;
    struct s3l_error e;
};

static void *lane_main(void *arg)
{
    struct lane *l = arg;
    struct s3l_s3_upload *u = NULL;
    l->rc = s3l_s3_upload_begin(l->c, bucket, l->key, NULL, 5u << 20, &u, &l->e);
    for (size_t off = 0; l->rc == 0 && off < l->n;) {
        size_t want = S3L_MIN(l->n - off, (size_t)300000); /* pieces that straddle parts */
        if (l->zero_copy) {
            void *buf;
            size_t room;
            l->rc = s3l_s3_upload_reserve(u, &buf, &room, &l->e);
            want = S3L_MIN(want, room);
            if (l->rc == 0) {
                memcpy(buf, l->d + off, want);
                l->rc = s3l_s3_upload_commit(u, want, &l->e);
            }
        } else {
            l->rc = s3l_s3_upload_write(u, l->d + off, want, &l->e);
        }
        off += want;
    }
    if (l->rc == 0)
        l->rc = s3l_s3_upload_publish(u, NULL, &l->e);
    else
        s3l_s3_upload_abort(u);
    return NULL;
}

/* Two threads upload through one client at once (as the s3 store's lanes do): both objects land
 * whole, every part reaches the store once, the parts of the two uploads travel together, and
 * the client-wide limit of 4 requests in flight holds -- all from the proxy's counts. */
static void two_threads_share_one_client(void **state)
{
    (void)state;
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION, .endpoint = proxy_url,
                                .max_in_flight = 4, .max_part_buffers = 6};
    struct s3l_s3_client *c = NULL;
    struct s3l_error e = {0};
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &e), 0);
    /* parts answered after 150 ms: long enough that each lane has several in flight at once */
    rules("[{\"op\":\"UploadPart\",\"times\":-1,\"action\":\"slow\",\"delayMs\":150}]");
    size_t n = (5u << 20) * 4 + 12345; /* 5 parts of 5 MiB, the last one short */
    uint8_t *d = pattern(n);
    uint8_t *d2 = pattern(n + 1);
    struct lane lanes[2] = {{.c = c, .key = "f/lane-a", .d = d, .n = n, .zero_copy = true},
                            {.c = c, .key = "f/lane-b", .d = d2 + 1, .n = n}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, lane_main, &lanes[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        if (lanes[i].rc != 0)
            fail_msg("lane %s: %s", lanes[i].key, lanes[i].e.message);
    json_t *j = proxy("counts", NULL);
    json_t *log = json_object_get(j, "log");
    int most = 0, mixed = 0;
    size_t i;
    json_t *ent;
    char last_key[64] = "";
    json_array_foreach(log, i, ent)
    {
        if (strcmp(json_string_value(json_object_get(ent, "op")), "UploadPart") != 0)
            continue;
        most = S3L_MAX(most, (int)json_integer_value(json_object_get(ent, "inFlight")));
        const char *k = json_string_value(json_object_get(ent, "key"));
        mixed += last_key[0] && strcmp(k, last_key) != 0; /* the two uploads interleave */
        snprintf(last_key, sizeof(last_key), "%s", k);
    }
    json_decref(j);
    print_message("UploadPart: at most %d in flight, %d switches between the two uploads\n",
                  most, mixed);
    assert_true(most >= 3 && most <= 4); /* together, and within the client-wide limit */
    assert_true(mixed >= 2);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(count("UploadPart", lanes[k].key, "forwarded"), 5);
        assert_int_equal(count("CompleteMultipartUpload", lanes[k].key, "seen"), 1);
    }
    rules("[]");
    expect_content(c, "f/lane-a", d, n);
    expect_content(c, "f/lane-b", d2 + 1, n);
    free(d);
    free(d2);
    s3l_s3_client_free(c);
}

/* ------------------------------------------------------------------ wrong region */

/* The refusals a prefix-conditioned policy makes (issue 11, item 3), injected at the proxy as the
 * store would answer them (Ceph RGW under such a policy: tests/integration/test_cli_rgw_policy.sh).
 * A 403 on GetObject / HeadObject is settled by a ListObjectsV2 of that key: absent is NOT_FOUND,
 * listed is the 403, a refused list keeps the 403, a list answering InvalidAccessKeyId gives
 * AUTH_INVALID; a DeleteObjects refused whole is done key by key, and remembered; HeadBucket's
 * 403 is settled by its x-amz-bucket-region, else by a list of the prefix. */
static void prefix_policy_refusals_are_settled(void **state)
{
    (void)state;
    setenv("AWS_REGION", "us-east-1", 1);
    struct s3l_s3_client *c = client(4);
    struct s3l_error e = {0};
    struct s3l_s3_object o;
    uint8_t *d = NULL;
    size_t n = 0;
    OK(s3l_s3_put_object(c, bucket, "p/there", "abc", 3, NULL, NULL, err));
    rules("[{\"op\":\"GetObject\",\"key\":\"p/absent\",\"times\":-1,\"action\":\"deny\"},"
          " {\"op\":\"HeadObject\",\"key\":\"p/absent\",\"times\":-1,\"action\":\"deny\"},"
          " {\"op\":\"GetObject\",\"key\":\"p/there\",\"times\":-1,\"action\":\"deny\"}]");
    assert_int_equal(s3l_s3_get_object(c, bucket, "p/absent", 0, 0, 100, &d, &n, NULL, &e),
                     S3L_ENOT_FOUND);
    assert_non_null(strstr(e.message, "a ListObjectsV2 of the key says it is absent"));
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "p/absent", &o, &e), S3L_ENOT_FOUND);
    assert_int_equal(count("GetObject", "p/absent", "seen"), 1);
    assert_int_equal(count("HeadObject", "p/absent", "seen"), 1);
    assert_int_equal(count("ListObjectsV2", "", "ok"), 2);
    /* the key is there: the refusal stands, and says the key exists */
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_get_object(c, bucket, "p/there", 0, 0, 100, &d, &n, NULL, &e),
                     S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(e.message, "GetObject p/there: AccessDenied"));
    assert_non_null(strstr(e.message, "the key exists: ListObjectsV2 lists it"));
    assert_int_equal(count("ListObjectsV2", "", "ok"), 3);

    /* the list refused too: the 403 stands; the list saying the key id is unknown: AUTH_INVALID */
    rules("[{\"op\":\"HeadObject\",\"key\":\"p/absent\",\"times\":-1,\"action\":\"deny\"},"
          " {\"op\":\"ListObjectsV2\",\"action\":\"deny\"},"
          " {\"op\":\"ListObjectsV2\",\"action\":\"bad_key\"}]"); /* the 2nd list */
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "p/absent", &o, &e), S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(e.message, "was refused too: PERMISSION_DENIED"));
    assert_non_null(strstr(e.message, "key p/absent"));
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "p/absent", &o, &e), S3L_EAUTH_INVALID);
    assert_non_null(strstr(e.message, "ListObjectsV2 p/absent: InvalidAccessKeyId"));

    /* DeleteObjects refused as a whole: each key is a DeleteObject; the next call goes there at
     * once */
    OK(s3l_s3_put_object(c, bucket, "p/d1", "1", 1, NULL, NULL, err));
    OK(s3l_s3_put_object(c, bucket, "p/d2", "2", 1, NULL, NULL, err));
    rules("[{\"op\":\"DeleteObjects\",\"times\":-1,\"action\":\"deny\"}]");
    const char *keys[] = {"p/d1", "p/d2"};
    OK(s3l_s3_delete_objects(c, bucket, keys, 2, err));
    assert_int_equal(count("DeleteObjects", "", "seen"), 1);
    assert_int_equal(count("DeleteObject", "p/d1", "ok"), 1);
    assert_int_equal(count("DeleteObject", "p/d2", "ok"), 1);
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_head_object(c, bucket, "p/d1", &o, &e), S3L_ENOT_FOUND);
    OK(s3l_s3_delete_objects(c, bucket, keys, 2, err));
    assert_int_equal(count("DeleteObjects", "", "seen"), 1);
    assert_int_equal(count("DeleteObject", "p/d2", "ok"), 2);

    /* HeadBucket: a 403 naming the region is the answer; one without it is settled by a list of
     * the prefix; both refused fail, saying so */
    char region[64];
    rules("[{\"op\":\"HeadBucket\",\"action\":\"region_denied\",\"region\":\"us-east-1\"}]");
    OK(s3l_s3_bucket_probe(c, bucket, "p/", region, err));
    assert_string_equal(region, "us-east-1");
    assert_int_equal(count("ListObjectsV2", "", "seen"), 0);
    rules("[{\"op\":\"HeadBucket\",\"action\":\"deny\"}]");
    OK(s3l_s3_bucket_probe(c, bucket, "p/", region, err));
    assert_string_equal(region, "us-east-1");
    assert_int_equal(count("ListObjectsV2", "", "ok"), 1);
    rules("[{\"op\":\"HeadBucket\",\"action\":\"deny\"},"
          " {\"op\":\"ListObjectsV2\",\"action\":\"deny\"}]");
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_bucket_probe(c, bucket, "p/", region, &e), S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(e.message, "ListObjectsV2 p/: AccessDenied"));
    assert_non_null(strstr(e.message, "prefix p/"));
    assert_non_null(strstr(e.message, "HeadBucket was refused too"));
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_bucket_probe(c, bucket, "p", region, &e), S3L_EINVALID_ARGUMENT);
    rules("[]");
    s3l_s3_client_free(c);
}

static int n_notes;
static char last_note[256];

static void count_note(void *ctx, const char *message)
{
    (void)ctx;
    n_notes++;
    snprintf(last_note, sizeof(last_note), "%s", message);
}

/* The region of the credential scope of the proxy's log entries for OP KEY, in order: at most
 * max, written as "r1 r2 ..." into out. The scope is read at the proxy from the Authorization
 * header as it arrived (DATE/REGION/s3/aws4_request). */
static void scopes(const char *op, const char *key, char *out, size_t cap)
{
    json_t *j = proxy("counts", NULL), *ent;
    size_t i, o = 0;
    out[0] = 0;
    json_array_foreach(json_object_get(j, "log"), i, ent)
    {
        if (strcmp(json_string_value(json_object_get(ent, "op")), op) != 0 ||
            strcmp(json_string_value(json_object_get(ent, "key")), key) != 0)
            continue;
        const char *sc = json_string_value(json_object_get(ent, "scope"));
        const char *a = strchr(sc, '/'), *b = a ? strchr(a + 1, '/') : NULL;
        assert_non_null(b);
        o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? " " : "", (int)(b - a - 1), a + 1);
    }
    json_decref(j);
}

static void wrong_region_is_followed_once(void **state)
{
    (void)state;
    setenv("AWS_REGION", "us-east-1", 1);
    s3l_s3_set_note_handler(count_note, NULL);
    n_notes = 0;
    struct s3l_s3_client *c = client(4);
    struct s3l_error e = {0};
    char got[256];
    /* 301 PermanentRedirect naming eu-west-1 in x-amz-bucket-region */
    rules("[{\"op\":\"PutObject\",\"key\":\"f/moved\",\"action\":\"redirect\","
          "\"region\":\"eu-west-1\"}]");
    OK(s3l_s3_put_object(c, bucket, "f/moved", "abc", 3, NULL, NULL, err));
    scopes("PutObject", "f/moved", got, sizeof(got));
    assert_string_equal(got, "us-east-1 eu-west-1");
    assert_int_equal(n_notes, 1);
    assert_non_null(strstr(last_note, "region eu-west-1, not us-east-1"));
    /* the fix stays: the next request goes to eu-west-1 at once, and no second note */
    struct s3l_s3_object o;
    OK(s3l_s3_head_object(c, bucket, "f/moved", &o, err));
    assert_int_equal((int)o.size, 3);
    scopes("HeadObject", "f/moved", got, sizeof(got));
    assert_string_equal(got, "eu-west-1");
    assert_int_equal(n_notes, 1);

    /* 400 AuthorizationHeaderMalformed with <Region> in the body (no header) */
    rules("[{\"op\":\"GetObject\",\"key\":\"f/moved\",\"action\":\"auth_malformed\","
          "\"region\":\"us-west-2\"}]");
    uint8_t *d = NULL;
    size_t n = 0;
    OK(s3l_s3_get_object(c, bucket, "f/moved", 0, 0, 100, &d, &n, NULL, err));
    assert_int_equal((int)n, 3);
    s3l_free(d);
    scopes("GetObject", "f/moved", got, sizeof(got));
    assert_string_equal(got, "eu-west-1 us-west-2");
    assert_int_equal(n_notes, 2);

    /* any failure carrying x-amz-bucket-region: a 403 on HeadBucket */
    rules("[{\"op\":\"HeadBucket\",\"action\":\"region_denied\",\"region\":\"ap-south-1\"}]");
    OK(s3l_s3_head_bucket(c, bucket, err));
    scopes("HeadBucket", "", got, sizeof(got));
    assert_string_equal(got, "us-west-2 ap-south-1");
    assert_int_equal(n_notes, 3);

    /* once per request: a store that redirects again is refused, naming the region */
    rules("[{\"op\":\"DeleteObject\",\"key\":\"f/moved\",\"times\":-1,\"action\":\"redirect\","
          "\"region\":\"sa-east-1\"}]");
    assert_int_equal(s3l_s3_delete_object(c, bucket, "f/moved", &e), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(e.message, "region sa-east-1"));
    scopes("DeleteObject", "f/moved", got, sizeof(got));
    assert_string_equal(got, "ap-south-1 sa-east-1");
    assert_int_equal(count("DeleteObject", "f/moved", "forwarded"), 0);
    assert_int_equal(n_notes, 4);
    /* a redirect naming the region it was signed for is not followed at all */
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_delete_object(c, bucket, "f/moved", &e), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(e.message, "region sa-east-1"));
    scopes("DeleteObject", "f/moved", got, sizeof(got));
    assert_string_equal(got, "ap-south-1 sa-east-1 sa-east-1");
    assert_int_equal(n_notes, 4);
    rules("[]");
    OK(s3l_s3_delete_object(c, bucket, "f/moved", err));
    s3l_s3_client_free(c);
    s3l_s3_set_note_handler(NULL, NULL);
}

/* ------------------------------------------------------------------ encryption, storage class */

/* The FIELD of the proxy's first log entry for OP KEY ("" when absent; "-" when never seen). */
static void logged(const char *op, const char *key, const char *field, char *out, size_t cap)
{
    json_t *j = proxy("counts", NULL), *ent;
    size_t i;
    snprintf(out, cap, "-");
    json_array_foreach(json_object_get(j, "log"), i, ent)
    {
        if (strcmp(json_string_value(json_object_get(ent, "op")), op) == 0 &&
            strcmp(json_string_value(json_object_get(ent, "key")), key) == 0) {
            snprintf(out, cap, "%s", json_string_value(json_object_get(ent, field)));
            break;
        }
    }
    json_decref(j);
}

static void sse_on_everything_storage_class_on_data_files(void **state)
{
    (void)state;
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION, .endpoint = proxy_url,
                                .backoff_base_ms = 5, .backoff_max_ms = 50};
    struct s3l_s3_store_options so = {.version = S3L_S3_STORE_OPTIONS_VERSION, .client = &cfg,
                                      .sse = "AES256", .storage_class = "STANDARD"};
    struct s3l_store_options o = {.version = S3L_STORE_OPTIONS_VERSION, .s3 = &so};
    char url[256], got[64];
    snprintf(url, sizeof(url), "s3://%s/sse", bucket);
    struct s3l_store *st = NULL;
    rules("[]");
    OK(s3l_store_open(url, &o, &st, err));
    OK(s3l_store_put(st, "_openetl/staging/p/g1/t/a.parquet", "abc", 3, NULL, NULL, err));
    OK(s3l_store_put(st, "_openetl/markers/t/p-1.json", "{}", 2, NULL, NULL, err));
    OK(s3l_store_copy(st, "_openetl/staging/p/g1/t/a.parquet", "t/a.parquet", err));
    const char *ops[][3] = {
        {"PutObject", "sse/_openetl/staging/p/g1/t/a.parquet", ""},
        {"PutObject", "sse/_openetl/markers/t/p-1.json", ""},
        {"CopyObject", "sse/t/a.parquet", "STANDARD"},
    };
    for (size_t k = 0; k < 3; k++) {
        logged(ops[k][0], ops[k][1], "sse", got, sizeof(got));
        assert_string_equal(got, "AES256");
        logged(ops[k][0], ops[k][1], "storageClass", got, sizeof(got));
        assert_string_equal(got, ops[k][2]);
    }
    OK(s3l_store_remove(st, "_openetl/staging/p/g1/t/a.parquet", err));
    OK(s3l_store_remove(st, "_openetl/markers/t/p-1.json", err));
    OK(s3l_store_remove(st, "t/a.parquet", err));
    s3l_store_free(st);

    /* a bad value is refused at open, before anything is sent */
    so.storage_class = "ARCHIVE";
    struct s3l_error e = {0};
    assert_int_equal(s3l_store_open(url, &o, &st, &e), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(e.message, "GLACIER_IR"));

    /* AccessDenied on a multipart upload under SSE-KMS names the KMS permissions */
    struct s3l_s3_client *c = client(4);
    rules("[{\"op\":\"CreateMultipartUpload\",\"key\":\"f/kms\",\"action\":\"deny\"}]");
    struct s3l_s3_put_options po = {.sse = "aws:kms", .sse_kms_key_id = "testkey-1"};
    char *id = NULL;
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_create_multipart(c, bucket, "f/kms", &po, &id, &e),
                     S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(e.message, "AccessDenied"));
    assert_non_null(strstr(e.message, "kms:GenerateDataKey and kms:Decrypt"));
    assert_non_null(strstr(e.message, "testkey-1"));
    logged("CreateMultipartUpload", "f/kms", "sse", got, sizeof(got));
    assert_string_equal(got, "aws:kms");
    /* without SSE-KMS the refusal says nothing of KMS */
    rules("[{\"op\":\"CreateMultipartUpload\",\"key\":\"f/kms\",\"action\":\"deny\"}]");
    s3l_error_clear(&e);
    assert_int_equal(s3l_s3_create_multipart(c, bucket, "f/kms", NULL, &id, &e),
                     S3L_EPERMISSION_DENIED);
    assert_null(strstr(e.message, "kms:GenerateDataKey"));
    rules("[]");
    s3l_s3_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(transient_faults_are_retried_and_data_arrives_once),
        cmocka_unit_test(slowdown_lowers_requests_in_flight),
        cmocka_unit_test(permanent_faults_stop_at_once),
        cmocka_unit_test(expired_token_and_clock_skew),
        cmocka_unit_test(credentials_come_from_the_provider),
        cmocka_unit_test(unknown_complete_is_settled_and_nothing_partial_is_visible),
        cmocka_unit_test(integrity_headers_are_checked),
        cmocka_unit_test(two_threads_share_one_client),
        cmocka_unit_test(wrong_region_is_followed_once),
        cmocka_unit_test(prefix_policy_refusals_are_settled),
        cmocka_unit_test(sse_on_everything_storage_class_on_data_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
