/*
 * The role providers against the fake STS of tests/support/fake-creds.mjs (started here, on
 * 127.0.0.1): a profile's role_arn with source_profile (and a chain of two roles, and a loop),
 * credential_source Environment, the external id (sent; refused with the trust-policy advice
 * when wrong), web identity from the environment and from a profile (unsigned, the token sent,
 * a bad token refused), a role on top of static keys (s3l_creds_role_new), the cache's refresh
 * 5 minutes before Expiration, a throttled STS retried, and AccessDenied not retried. What was
 * sent is judged from the fake's log (the STS API Reference's parameters), never from our word;
 * no message may hold a secret ("not-for-output" or the source's secret).
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

#include "creds/creds.h"
#include "util/util.h"

static pid_t fake_pid;
static int fake_stdin = -1;
static char base[64];
static char dir[256];

static int start_fake(void **state)
{
    (void)state;
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
        execlp("node", "node", script, "--idle", "120", NULL);
        _exit(127);
    }
    close(in[0]), close(out[1]);
    fake_stdin = in[1];
    FILE *f = fdopen(out[0], "r");
    int port = 0;
    assert_int_equal(fscanf(f, "LISTENING %d", &port), 1);
    fclose(f);
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", port);
    snprintf(dir, sizeof(dir), "/tmp/s3l-sts-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int stop_fake(void **state)
{
    (void)state;
    close(fake_stdin);
    int st = 0;
    waitpid(fake_pid, &st, 0);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Every test: a clean environment, STS at the fake, the files in dir. */
static int clean_env(void **state)
{
    (void)state;
    const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                          "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_REGION",
                          "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(vars); i++)
        unsetenv(vars[i]);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    setenv("AWS_ENDPOINT_URL_STS", base, 1);
    char p[512];
    snprintf(p, sizeof(p), "%s/credentials", dir);
    setenv("AWS_SHARED_CREDENTIALS_FILE", p, 1);
    snprintf(p, sizeof(p), "%s/config", dir);
    setenv("AWS_CONFIG_FILE", p, 1);
    write_file("credentials", "[base]\naws_access_key_id = AKIDBASEPROFILE1\n"
                              "aws_secret_access_key = base-secret-not-for-output\n");
    write_file("config",
               "[profile dev]\nrole_arn = arn:aws:iam::123456789012:role/r\nsource_profile = base\n"
               "region = eu-west-3\n"
               "[profile ext-good]\nrole_arn = arn:aws:iam::123456789012:role/external\n"
               "source_profile = base\nexternal_id = ext-good\n"
               "[profile ext-bad]\nrole_arn = arn:aws:iam::123456789012:role/external\n"
               "source_profile = base\nexternal_id = ext-wrong\n"
               "[profile second]\nrole_arn = arn:aws:iam::123456789012:role/second\n"
               "source_profile = dev\nrole_session_name = my-session\nduration_seconds = 1800\n"
               "[profile loop-a]\nrole_arn = arn:aws:iam::123456789012:role/a\n"
               "source_profile = loop-b\n"
               "[profile loop-b]\nrole_arn = arn:aws:iam::123456789012:role/b\n"
               "source_profile = loop-a\n"
               "[profile from-env]\nrole_arn = arn:aws:iam::123456789012:role/r\n"
               "credential_source = Environment\n"
               "[profile web]\nrole_arn = arn:aws:iam::123456789012:role/web\n"
               "web_identity_token_file = WEBTOKEN\nrole_session_name = web-session\n");
    return 0;
}

static size_t collect(char *d, size_t s, size_t n, void *ctx)
{
    return s3l_buf_append(ctx, d, s * n) == 0 ? s * n : 0;
}

/* The fake's STS log entries (those with "sts"), from index from of them on. */
static json_t *sts_log(size_t from)
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
    json_t *out = json_array();
    size_t k = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *e = json_array_get(all, i);
        if (json_object_get(e, "sts") && k++ >= from)
            json_array_append(out, e);
    }
    json_decref(all);
    return out;
}

static size_t sts_count(void)
{
    json_t *l = sts_log(0);
    size_t n = json_array_size(l);
    json_decref(l);
    return n;
}

static const char *field(json_t *log, size_t i, const char *key)
{
    json_t *v = json_object_get(json_array_get(log, i), key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool is_true(json_t *log, size_t i, const char *key)
{
    return json_is_true(json_object_get(json_array_get(log, i), key));
}

static void no_secret(const struct s3l_error *err)
{
    assert_null(strstr(err->message, "not-for-output"));
    assert_null(strstr(err->message, "secret"));
    assert_null(strstr(err->message, "header.payload"));
}

/* The default chain for profile (NULL: the environment decides). */
static int chain_get(const char *profile, struct s3l_credentials *c, struct s3l_error *err)
{
    struct s3l_creds_options o = {S3L_CREDS_OPTIONS_VERSION, profile, NULL, NULL};
    struct s3l_creds_provider *p = NULL;
    s3l_error_clear(err);
    assert_int_equal(s3l_creds_default_chain_new(&o, &p, err), 0);
    int rc = s3l_creds_provider_get(p, c, err);
    s3l_creds_provider_free(p);
    no_secret(err);
    return rc;
}

static void role_with_source_profile(void **state)
{
    (void)state;
    size_t at = sts_count();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(chain_get("dev", &c, &err), 0);
    assert_string_equal(c.source, "assume-role");
    assert_true(strncmp(c.access_key_id, "ASIAFAKESTS", 11) == 0);
    assert_non_null(c.session_token);
    assert_true(c.expiration_ns > 0);
    assert_non_null(c.principal);
    assert_true(strncmp(c.principal, "arn:aws:sts::123456789012:assumed-role/r/botocore-session-",
                        58) == 0);
    json_t *l = sts_log(at);
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(field(l, 0, "sts"), "AssumeRole");
    assert_string_equal(field(l, 0, "version"), "2011-06-15");
    assert_string_equal(field(l, 0, "role"), "arn:aws:iam::123456789012:role/r");
    assert_string_equal(field(l, 0, "akid"), "AKIDBASEPROFILE1"); /* signed by the source */
    assert_string_equal(field(l, 0, "service"), "sts");
    assert_string_equal(field(l, 0, "region"), "eu-west-3"); /* the profile's region */
    assert_true(strncmp(field(l, 0, "session"), "botocore-session-", 17) == 0);
    assert_null(field(l, 0, "externalId"));
    assert_false(is_true(l, 0, "token"));
    json_decref(l);
    s3l_credentials_cleanup(&c);
}

static void chain_of_two_roles(void **state)
{
    (void)state;
    size_t at = sts_count();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(chain_get("second", &c, &err), 0);
    json_t *l = sts_log(at);
    assert_int_equal(json_array_size(l), 2);
    assert_string_equal(field(l, 0, "role"), "arn:aws:iam::123456789012:role/r");
    assert_string_equal(field(l, 1, "role"), "arn:aws:iam::123456789012:role/second");
    /* the second call is signed with the first role's credentials, token included */
    assert_true(strncmp(field(l, 1, "akid"), "ASIAFAKESTS", 11) == 0);
    assert_true(is_true(l, 1, "token"));
    assert_string_equal(field(l, 1, "session"), "my-session");
    assert_string_equal(field(l, 1, "duration"), "1800");
    assert_string_equal(c.principal, "arn:aws:sts::123456789012:assumed-role/second/my-session");
    json_decref(l);
    s3l_credentials_cleanup(&c);
}

static void loop_is_an_error(void **state)
{
    (void)state;
    size_t at = sts_count();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(chain_get("loop-a", &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "loop"));
    assert_int_equal(sts_count(), at); /* STS never asked */
}

static void external_id_right_and_wrong(void **state)
{
    (void)state;
    size_t at = sts_count();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(chain_get("ext-good", &c, &err), 0);
    s3l_credentials_cleanup(&c);
    assert_int_equal(chain_get("ext-bad", &c, &err), S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(err.message, "arn:aws:iam::123456789012:role/external"));
    assert_non_null(strstr(err.message, "trust policy first"));
    assert_non_null(strstr(err.message, "external id"));
    assert_non_null(strstr(err.message, "permissions policy"));
    assert_non_null(strstr(err.message, "AKID...ILE1")); /* the caller, abbreviated */
    assert_null(strstr(err.message, "AKIDBASEPROFILE1"));
    assert_string_equal(err.s3_code, "AccessDenied");
    assert_int_equal(err.http_status, 403);
    json_t *l = sts_log(at);
    assert_int_equal(json_array_size(l), 2); /* AccessDenied is not retried */
    assert_string_equal(field(l, 0, "externalId"), "ext-good");
    assert_string_equal(field(l, 1, "externalId"), "ext-wrong");
    json_decref(l);
}

static void credential_source_environment(void **state)
{
    (void)state;
    setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENVIRON1", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "env-secret-not-for-output", 1);
    size_t at = sts_count();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(chain_get("from-env", &c, &err), 0);
    assert_string_equal(c.source, "assume-role");
    json_t *l = sts_log(at);
    assert_string_equal(field(l, 0, "akid"), "AKIDFROMENVIRON1");
    json_decref(l);
    s3l_credentials_cleanup(&c);
    unsetenv("AWS_ACCESS_KEY_ID");
    assert_int_equal(chain_get("from-env", &c, &err), S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "credential_source Environment gave no credentials"));
}

static void web_identity_env_and_profile(void **state)
{
    (void)state;
    char tok[512];
    snprintf(tok, sizeof(tok), "%s/token", dir);
    write_file("token", "header.payload.sig\n");
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tok, 1);
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/eks", 1);
    setenv("AWS_ROLE_SESSION_NAME", "pod-session", 1);
    size_t at = sts_count();
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(chain_get(NULL, &c, &err), 0);
    assert_string_equal(c.source, "assume-role-with-web-identity");
    assert_string_equal(c.principal, "arn:aws:sts::123456789012:assumed-role/eks/pod-session");
    json_t *l = sts_log(at);
    assert_string_equal(field(l, 0, "sts"), "AssumeRoleWithWebIdentity");
    assert_false(is_true(l, 0, "signed")); /* unsigned, as botocore sends it */
    assert_string_equal(field(l, 0, "session"), "pod-session");
    json_decref(l);
    s3l_credentials_cleanup(&c);
    write_file("token", "bad-token");
    assert_int_equal(chain_get(NULL, &c, &err), S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "InvalidIdentityToken"));
    unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE"), unsetenv("AWS_ROLE_ARN");
    unsetenv("AWS_ROLE_SESSION_NAME");
    /* the profile's web_identity_token_file, role_arn and role_session_name */
    char cfg[1024];
    snprintf(cfg, sizeof(cfg),
             "[profile web]\nrole_arn = arn:aws:iam::123456789012:role/web\n"
             "web_identity_token_file = %s\nrole_session_name = web-session\n",
             tok);
    write_file("config", cfg);
    write_file("token", "header.payload.sig");
    assert_int_equal(chain_get("web", &c, &err), 0);
    assert_string_equal(c.source, "assume-role-with-web-identity");
    assert_string_equal(c.principal, "arn:aws:sts::123456789012:assumed-role/web/web-session");
    s3l_credentials_cleanup(&c);
}

static struct s3l_creds_provider *role_on_keys(const char *arn, const char *ext, bool cached)
{
    struct s3l_error err = {0};
    struct s3l_creds_provider *src = NULL, *r = NULL, *c = NULL;
    assert_int_equal(s3l_creds_static_new("AKIDSTATICKEYS01", "static-secret-not-for-output",
                                          NULL, &src, &err),
                     0);
    struct s3l_creds_role_options ro = {S3L_CREDS_ROLE_OPTIONS_VERSION, arn, ext, "on-top", 900,
                                        "ap-south-2", NULL};
    assert_int_equal(s3l_creds_role_new(&ro, src, &r, &err), 0);
    if (!cached)
        return r;
    assert_int_equal(s3l_creds_cache_new(r, &c, &err), 0);
    return c;
}

static void role_on_top_cached_and_refreshed(void **state)
{
    (void)state;
    size_t at = sts_count();
    struct s3l_creds_provider *p = role_on_keys("arn:aws:iam::123456789012:role/r", NULL, true);
    struct s3l_credentials a = {0}, b = {0};
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_provider_get(p, &a, &err), 0);
    assert_int_equal(s3l_creds_provider_get(p, &b, &err), 0);
    assert_string_equal(a.access_key_id, b.access_key_id); /* 15 min left: from the cache */
    assert_int_equal(sts_count(), at + 1);
    json_t *l = sts_log(at);
    assert_string_equal(field(l, 0, "akid"), "AKIDSTATICKEYS01");
    assert_string_equal(field(l, 0, "region"), "ap-south-2");
    assert_string_equal(field(l, 0, "duration"), "900");
    assert_string_equal(field(l, 0, "session"), "on-top");
    json_decref(l);
    s3l_creds_provider_free(p);
    /* credentials expiring in 299 s are inside the 5-minute window: asked again, but not for
     * every request (at most every 30 s; test_creds.c cache_refuses_expired_answers) */
    p = role_on_keys("arn:aws:iam::123456789012:role/short", NULL, true);
    assert_int_equal(s3l_creds_provider_get(p, &a, &err), 0);
    assert_int_equal(s3l_creds_provider_get(p, &b, &err), 0);
    assert_string_equal(a.access_key_id, b.access_key_id);
    assert_int_equal(sts_count(), at + 2);
    s3l_creds_cache_invalidate(p); /* after AUTH_EXPIRED: asked again at once */
    assert_int_equal(s3l_creds_provider_get(p, &b, &err), 0);
    assert_string_not_equal(a.access_key_id, b.access_key_id);
    assert_int_equal(sts_count(), at + 3);
    s3l_creds_provider_free(p);
    s3l_credentials_cleanup(&a);
    s3l_credentials_cleanup(&b);
}

static void throttled_retried_denied_not(void **state)
{
    (void)state;
    size_t at = sts_count();
    struct s3l_creds_provider *p =
        role_on_keys("arn:aws:iam::123456789012:role/throttled", NULL, false);
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_provider_get(p, &c, &err), 0);
    assert_int_equal(sts_count(), at + 2); /* Throttling, then the answer */
    s3l_creds_provider_free(p);
    s3l_credentials_cleanup(&c);
    p = role_on_keys("arn:aws:iam::123456789012:role/denied", "some-id", false);
    assert_int_equal(s3l_creds_provider_get(p, &c, &err), S3L_EPERMISSION_DENIED);
    assert_int_equal(sts_count(), at + 3); /* one attempt */
    assert_non_null(strstr(err.message, "role/denied"));
    assert_non_null(strstr(err.message, "AKID...YS01"));
    no_secret(&err);
    s3l_creds_provider_free(p);
}

static void sts_not_answering(void **state)
{
    (void)state;
    struct s3l_creds_provider *src = NULL, *r = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_static_new("AKIDSTATICKEYS01", "s", NULL, &src, &err), 0);
    struct s3l_creds_role_options ro = {S3L_CREDS_ROLE_OPTIONS_VERSION,
                                        "arn:aws:iam::1:role/r", NULL, NULL, 0, NULL,
                                        "http://127.0.0.1:9"};
    assert_int_equal(s3l_creds_role_new(&ro, src, &r, &err), 0);
    struct s3l_credentials c = {0};
    assert_int_equal(s3l_creds_provider_get(r, &c, &err), S3L_ETRANSIENT);
    assert_non_null(strstr(err.message, "127.0.0.1:9"));
    s3l_creds_provider_free(r);
    ro.role_arn = "not-an-arn";
    assert_int_equal(s3l_creds_static_new("AKIDSTATICKEYS01", "s", NULL, &src, &err), 0);
    assert_int_equal(s3l_creds_role_new(&ro, src, &r, &err), S3L_EINVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(role_with_source_profile, clean_env),
        cmocka_unit_test_setup(chain_of_two_roles, clean_env),
        cmocka_unit_test_setup(loop_is_an_error, clean_env),
        cmocka_unit_test_setup(external_id_right_and_wrong, clean_env),
        cmocka_unit_test_setup(credential_source_environment, clean_env),
        cmocka_unit_test_setup(web_identity_env_and_profile, clean_env),
        cmocka_unit_test_setup(role_on_top_cached_and_refreshed, clean_env),
        cmocka_unit_test_setup(throttled_retried_denied_not, clean_env),
        cmocka_unit_test_setup(sts_not_answering, clean_env),
    };
    return cmocka_run_group_tests(tests, start_fake, stop_fake);
}
