/*
 * The endpoint providers against fakes on 127.0.0.1 (tests/support/fake-creds.mjs, started
 * here): EC2 instance metadata, IMDSv2 (the token PUT with its TTL header, then the role name
 * and the credentials, each GET with the token), its IMDSv1 fallback, an instance without a
 * role, an endpoint that never answers (the 1 s timeout), a malformed answer,
 * AWS_EC2_METADATA_DISABLED; and the container endpoint (FULL_URI, the authorization token from
 * the environment or from its file, a refused token, a host the SDKs refuse over http, an
 * endpoint that is down). What the client sent is judged from the fake's own log, not from the
 * client's word. Expected values are the EC2 User Guide's and the SDKs' rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "creds/creds.h"
#include "util/util.h"

static pid_t fake_pid;
static int fake_stdin = -1;
static char base[64];

static int start_fake(void **state)
{
    const char *src = getenv("S3L_SOURCE_DIR");
    char script[512];
    snprintf(script, sizeof(script), "%s/tests/support/fake-creds.mjs", src ? src : ".");
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    fake_pid = fork();
    assert_true(fake_pid >= 0);
    if (fake_pid == 0) {
        dup2(in[0], 0), dup2(out[1], 1);
        close(in[1]), close(out[0]);
        execlp("node", "node", script, "--auth", "Bearer right-token", "--idle", "120", NULL);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    fake_stdin = in[1];
    FILE *f = fdopen(out[0], "r");
    int port = 0;
    assert_int_equal(fscanf(f, "LISTENING %d", &port), 1);
    fclose(f);
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", port);
    return 0;
}

static int stop_fake(void **state)
{
    close(fake_stdin); /* the fake exits when its stdin closes */
    int st = 0;
    waitpid(fake_pid, &st, 0);
    return 0;
}

static int clean_env(void **state)
{
    const char *vars[] = {"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT",
                          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                          "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
                          "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    return 0;
}

static size_t collect(char *d, size_t s, size_t n, void *ctx)
{
    return s3l_buf_append(ctx, d, s * n) == 0 ? s * n : 0;
}

/* The fake's request log, from index `from` on. */
static json_t *fake_log(size_t from)
{
    char url[128];
    snprintf(url, sizeof(url), "%s/__log", base);
    struct s3l_buf b;
    s3l_buf_init(&b, 1 << 20);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_cleanup(h);
    json_t *all = json_loadb((const char *)b.ptr, b.len, 0, NULL);
    s3l_buf_free(&b);
    assert_true(json_is_array(all));
    json_t *tail = json_array();
    for (size_t i = from; i < json_array_size(all); i++)
        json_array_append(tail, json_array_get(all, i));
    json_decref(all);
    return tail;
}

static size_t log_size(void)
{
    json_t *l = fake_log(0);
    size_t n = json_array_size(l);
    json_decref(l);
    return n;
}

static const char *entry_str(json_t *log, size_t i, const char *key)
{
    json_t *v = json_object_get(json_array_get(log, i), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool entry_true(json_t *log, size_t i, const char *key)
{
    return json_is_true(json_object_get(json_array_get(log, i), key));
}

static int get_from(int (*ctor)(struct s3l_creds_provider **, struct s3l_error *),
                    struct s3l_credentials *c, struct s3l_error *err)
{
    struct s3l_creds_provider *p = NULL;
    s3l_error_clear(err);
    assert_int_equal(ctor(&p, err), 0);
    int rc = s3l_creds_provider_get(p, c, err);
    s3l_creds_provider_free(p);
    assert_null(strstr(err->message, "not-for-output")); /* no secret in a message */
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- IMDS */

static void imds_v2_token_then_role_then_credentials(void **state)
{
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", base, 1);
    size_t from = log_size();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), 0);
    assert_string_equal(c.source, "iam-role");
    assert_string_equal(c.access_key_id, "AKIDIMDSROLE0001");
    assert_string_equal(c.secret_access_key, "imds-secret-not-for-output");
    assert_string_equal(c.session_token, "imds-token-not-for-output");
    assert_true(c.expiration_ns > (int64_t)time(NULL) * 1000000000 + 5LL * 3600 * 1000000000);
    json_t *log = fake_log(from);
    assert_int_equal(json_array_size(log), 3);
    assert_string_equal(entry_str(log, 0, "method"), "PUT");
    assert_string_equal(entry_str(log, 0, "path"), "/latest/api/token");
    assert_string_equal(entry_str(log, 0, "ttl"), "21600");
    assert_string_equal(entry_str(log, 1, "path"), "/latest/meta-data/iam/security-credentials/");
    assert_string_equal(entry_str(log, 2, "path"),
                        "/latest/meta-data/iam/security-credentials/fake-role");
    assert_true(entry_true(log, 1, "token") && entry_true(log, 2, "token"));
    json_decref(log);
    /* a trailing slash on the endpoint changes nothing */
    char with_slash[80];
    snprintf(with_slash, sizeof(with_slash), "%s/", base);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", with_slash, 1);
    assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), 0);
    s3l_credentials_cleanup(&c);
}

static void imds_v1_fallback(void **state)
{
    char ep[96];
    snprintf(ep, sizeof(ep), "%s/v1only", base);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
    size_t from = log_size();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDIMDSROLE0001");
    json_t *log = fake_log(from);
    assert_int_equal(json_array_size(log), 3);
    assert_string_equal(entry_str(log, 0, "method"), "PUT"); /* refused 403: v1 from then on */
    assert_string_equal(entry_str(log, 1, "method"), "GET");
    assert_false(entry_true(log, 1, "token"));
    json_decref(log);
    s3l_credentials_cleanup(&c);
}

static void imds_nothing_here(void **state)
{
    struct {
        const char *prefix, *why;
    } cases[] = {{"/norole", "answered HTTP 404 to the role name"},
                 {"/badjson", "is not a JSON object"}};
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    for (size_t i = 0; i < 2; i++) {
        char ep[96];
        snprintf(ep, sizeof(ep), "%s%s", base, cases[i].prefix);
        setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
        assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), S3L_ENOT_FOUND);
        assert_non_null(strstr(err.message, cases[i].why));
    }
    /* disabled: not a single request */
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", base, 1);
    setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
    size_t before = log_size();
    assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), S3L_ENOT_FOUND);
    assert_string_equal(err.message, "off (AWS_EC2_METADATA_DISABLED)");
    assert_int_equal(log_size(), before);
}

static void imds_silence_costs_one_second(void **state)
{
    char ep[96];
    snprintf(ep, sizeof(ep), "%s/silent", base);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    double t0 = now_s();
    assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), S3L_ENOT_FOUND);
    double took = now_s() - t0;
    assert_non_null(strstr(err.message, "no answer in 1 s"));
    assert_true(took >= 0.9 && took < 3.0); /* the token PUT's 1 s timeout, then nothing more */
    /* a port where nothing listens: refused at once */
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1", 1);
    assert_int_equal(get_from(s3l_creds_imds_new, &c, &err), S3L_ENOT_FOUND);
}

/* ---------------------------------------------------------------- container */

static void container_full_uri_and_tokens(void **state)
{
    char uri[128];
    snprintf(uri, sizeof(uri), "%s/container/creds", base);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri, 1);
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "answered HTTP 401"));
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer right-token", 1);
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), 0);
    assert_string_equal(c.source, "container-role");
    assert_string_equal(c.access_key_id, "AKIDCONTAINER001");
    assert_string_equal(c.session_token, "container-token-not-for-output");
    assert_true(c.expiration_ns > 0);

    /* the token file (EKS Pod Identity) wins over the variable, and is read at every get */
    char path[] = "/tmp/s3l-container-token-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "Bearer wrong\n", 13), 13);
    close(fd);
    setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", path, 1);
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), S3L_EAUTH_INVALID);
    FILE *f = fopen(path, "w");
    fputs("Bearer right-token\n", f); /* a trailing newline, as editors write */
    fclose(f);
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDCONTAINER001");
    unlink(path);
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"));
    s3l_credentials_cleanup(&c);
}

static void container_refusals(void **state)
{
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), S3L_ENOT_FOUND);
    /* http to a host that is not loopback or the ECS/EKS addresses: refused before any request */
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.10/creds", 1);
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "use https"));
    /* configured but down: an error, not "nothing here" */
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds", 1);
    assert_int_equal(get_from(s3l_creds_container_new, &c, &err), S3L_ETRANSIENT);
    assert_non_null(strstr(err.message, "container endpoint http://127.0.0.1:1/creds"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(imds_v2_token_then_role_then_credentials, clean_env),
        cmocka_unit_test_setup(imds_v1_fallback, clean_env),
        cmocka_unit_test_setup(imds_nothing_here, clean_env),
        cmocka_unit_test_setup(imds_silence_costs_one_second, clean_env),
        cmocka_unit_test_setup(container_full_uri_and_tokens, clean_env),
        cmocka_unit_test_setup(container_refusals, clean_env),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, start_fake, stop_fake);
}
