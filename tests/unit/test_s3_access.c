/*
 * Access failures from S3 (issue 11, item 2), through the fault proxy (tests/support/
 * fault-proxy.mjs, whose injected answers need no store behind it) and the fake STS
 * (tests/support/fake-creds.mjs): every AUTH_INVALID, AUTH_EXPIRED and PERMISSION_DENIED names
 * the operation, the bucket, the key, the credentials' source and the principal (the assumed
 * role's ARN, or the key id's first 4 and last 4 characters); AccessDenied and
 * InvalidAccessKeyId are tried once; ExpiredToken is retried once after a refresh (a role's
 * credentials: STS is asked again, and the new key signs the retry), and static keys fail with
 * AUTH_EXPIRED after that one retry. Attempts are counted by the proxy, never by the client.
 * No message holds a secret.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "s3l/creds.h"
#include "s3l/s3.h"
#include "util/util.h"

struct node {
    pid_t pid;
    int in;
    char base[64];
};
static struct node proxy, sts;

static void start(struct node *n, const char *script, const char *a1, const char *a2)
{
    const char *src = getenv("S3L_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/support/%s", src ? src : ".", script);
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    n->pid = fork();
    assert_true(n->pid >= 0);
    if (n->pid == 0) {
        dup2(in[0], 0), dup2(out[1], 1);
        close(in[1]), close(out[0]);
        execlp("node", "node", path, a1, a2, NULL);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    n->in = in[1];
    FILE *f = fdopen(out[0], "r");
    int port = 0;
    assert_int_equal(fscanf(f, "LISTENING %d", &port), 1);
    fclose(f);
    snprintf(n->base, sizeof(n->base), "http://127.0.0.1:%d", port);
}

static int setup(void **state)
{
    (void)state;
    start(&proxy, "fault-proxy.mjs", "--target", "http://127.0.0.1:9");
    start(&sts, "fake-creds.mjs", "--idle", "120");
    setenv("AWS_ENDPOINT_URL_STS", sts.base, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kill(proxy.pid, SIGTERM); /* the proxy does not watch its stdin */
    close(proxy.in), close(sts.in);
    int st;
    waitpid(proxy.pid, &st, 0), waitpid(sts.pid, &st, 0);
    return 0;
}

static size_t collect(char *d, size_t s, size_t n, void *ctx)
{
    return s3l_buf_append(ctx, d, s * n) == 0 ? s * n : 0;
}

static json_t *http_json(const char *base, const char *path, const char *post)
{
    char url[160];
    snprintf(url, sizeof(url), "%s%s", base, path);
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 22);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (post)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_cleanup(h);
    json_t *v = json_loadb((const char *)b.ptr, b.len, 0, NULL);
    s3l_buf_free(&b);
    return v;
}

static void rules(const char *json)
{
    json_decref(http_json(proxy.base, "/__proxy/reset", ""));
    json_decref(http_json(proxy.base, "/__proxy/rules", json));
}

/* How many requests the proxy saw for "OP KEY". */
static int seen(const char *op_key)
{
    json_t *c = http_json(proxy.base, "/__proxy/counts", NULL);
    json_t *o = json_object_get(json_object_get(json_object_get(c, "ops"), op_key), "seen");
    int n = json_is_integer(o) ? (int)json_integer_value(o) : 0;
    json_decref(c);
    return n;
}

static int sts_calls(void)
{
    json_t *l = http_json(sts.base, "/__log", NULL);
    int n = 0;
    for (size_t i = 0; i < json_array_size(l); i++)
        n += json_object_get(json_array_get(l, i), "sts") != NULL;
    json_decref(l);
    return n;
}

static struct s3l_s3_client *client(struct s3l_creds_provider *p, const char *ak)
{
    struct s3l_s3_config cfg = {0};
    cfg.version = S3L_S3_CONFIG_VERSION;
    cfg.endpoint = proxy.base;
    cfg.region = "us-east-1";
    cfg.max_attempts = 4;
    cfg.backoff_base_ms = 1;
    cfg.credentials = p;
    if (ak) {
        cfg.access_key = ak;
        cfg.secret_key = "static-secret-not-for-output";
        cfg.session_token = "static-token-not-for-output";
    }
    struct s3l_s3_client *c = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_s3_client_new(&cfg, &c, &err), 0);
    return c;
}

static struct s3l_creds_provider *role(void)
{
    struct s3l_creds_provider *src = NULL, *r = NULL, *c = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_static_new("AKIDROLESOURCE01", "src-secret-not-for-output", NULL,
                                          &src, &err),
                     0);
    struct s3l_creds_role_options ro = {S3L_CREDS_ROLE_OPTIONS_VERSION,
                                        "arn:aws:iam::123456789012:role/writer", NULL, "sess", 0,
                                        NULL, NULL};
    assert_int_equal(s3l_creds_role_new(&ro, src, &r, &err), 0);
    assert_int_equal(s3l_creds_cache_new(r, &c, &err), 0);
    return c;
}

static void no_secret(const struct s3l_error *e)
{
    assert_null(strstr(e->message, "not-for-output"));
    assert_null(strstr(e->message, "AKIDSTATICKEY001")); /* the key id only abbreviated */
}

static void denied_names_who_and_is_tried_once(void **state)
{
    (void)state;
    rules("[{\"op\":\"PutObject\",\"times\":-1,\"action\":\"deny\"}]");
    struct s3l_creds_provider *p = role();
    struct s3l_s3_client *c = client(p, NULL);
    struct s3l_error err = {0};
    assert_int_equal(s3l_s3_put_object(c, "bkt", "pre/fix/k1", "x", 1, NULL, NULL, &err),
                     S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(err.message, "PutObject"));
    assert_non_null(strstr(err.message, "bucket bkt"));
    assert_non_null(strstr(err.message, "key pre/fix/k1"));
    assert_non_null(strstr(err.message, "arn:aws:sts::123456789012:assumed-role/writer/sess"));
    assert_non_null(strstr(err.message, "credentials from assume-role"));
    no_secret(&err);
    assert_int_equal(seen("PutObject pre/fix/k1"), 1); /* one attempt */
    s3l_s3_client_free(c);
    s3l_creds_provider_free(p);
}

static void bad_key_names_the_key_id(void **state)
{
    (void)state;
    rules("[{\"op\":\"GetObject\",\"times\":-1,\"action\":\"bad_key\"}]");
    struct s3l_s3_client *c = client(NULL, "AKIDSTATICKEY001");
    struct s3l_error err = {0};
    uint8_t *data = NULL;
    size_t n = 0;
    assert_int_equal(s3l_s3_get_object(c, "bkt", "k2", 0, 0, 1024, &data, &n, NULL, &err),
                     S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "as AKID...Y001 (credentials from explicit)"));
    assert_non_null(strstr(err.message, "key k2"));
    no_secret(&err);
    assert_int_equal(seen("GetObject k2"), 1);
    s3l_s3_client_free(c);
}

static void expired_refreshes_once(void **state)
{
    (void)state;
    /* a role, and ExpiredToken to every attempt: the first makes the client refresh (the cache
     * is invalidated, STS issues new credentials), the retry meets it again and the client
     * stops: two attempts, two AssumeRole calls */
    rules("[{\"op\":\"GetObject\",\"times\":-1,\"action\":\"expired_token\"}]");
    int before = sts_calls();
    struct s3l_creds_provider *p = role();
    struct s3l_s3_client *c = client(p, NULL);
    struct s3l_error err = {0};
    uint8_t *data = NULL;
    size_t n = 0;
    assert_int_equal(s3l_s3_get_object(c, "bkt", "k3", 0, 0, 64, &data, &n, NULL, &err),
                     S3L_EAUTH_EXPIRED);
    assert_int_equal(seen("GetObject k3"), 2);
    assert_int_equal(sts_calls(), before + 2);
    assert_non_null(strstr(err.message, "assumed-role/writer"));
    no_secret(&err);
    s3l_s3_client_free(c);
    s3l_creds_provider_free(p);
    /* static keys cannot refresh: the same keys sign the one retry, then AUTH_EXPIRED */
    rules("[{\"op\":\"GetObject\",\"times\":-1,\"action\":\"expired_token\"}]");
    c = client(NULL, "AKIDSTATICKEY001");
    s3l_error_clear(&err);
    assert_int_equal(s3l_s3_get_object(c, "bkt", "k4", 0, 0, 64, &data, &n, NULL, &err),
                     S3L_EAUTH_EXPIRED);
    assert_int_equal(seen("GetObject k4"), 2);
    assert_non_null(strstr(err.message, "credentials from explicit"));
    no_secret(&err);
    s3l_s3_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(denied_names_who_and_is_tried_once),
        cmocka_unit_test(bad_key_names_the_key_id),
        cmocka_unit_test(expired_refreshes_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
