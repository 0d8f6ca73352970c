/*
 * The credentials module: the INI reader, the command split, ISO 8601 times, each provider
 * (static, env, shared credentials file, config file, credential_process), the chain, the cache
 * and the default chain's order and refusals. Every test runs under a fresh temporary HOME with
 * the AWS_* variables cleared. The expected values come from the rules the code follows
 * (configparser, shlex.split, the AWS CLI's credential_process format) and from libc's timegm
 * for times; tests/unit/test_creds_botocore.py compares whole setups with botocore.
 *
 * All allocations go through an allocator that, on every free and realloc, looks for the test
 * secrets in the block being released: a secret left in freed memory (not wiped) fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "creds/creds.h"
#include "s3l/alloc.h"
#include "util/util.h"

#define SECRET "wJalrXUtnFEMI-SECRET-MARK"
#define TOKEN "FwoGZXIvY-TOKEN-MARK"

/* ---------------------------------------------------------------- a secret-checking allocator */

static int leaked;

static bool holds_secret(const unsigned char *p, size_t n)
{
    static const char *const marks[] = {"SECRET-MARK", "TOKEN-MARK"};
    for (size_t m = 0; m < 2; m++) {
        size_t k = strlen(marks[m]);
        for (size_t i = 0; i + k <= n; i++)
            if (memcmp(p + i, marks[m], k) == 0)
                return true;
    }
    return false;
}

static void *a_malloc(void *ctx, size_t n)
{
    size_t *p = malloc(n + 16);
    if (!p)
        return NULL;
    p[0] = n;
    /* zeroed: what a free finds was written by the code under test, not left by an earlier
     * user of the heap (the test's own stdio buffers hold the secrets it writes to files) */
    memset(p + 2, 0, n);
    return (char *)p + 16;
}

static void a_free(void *ctx, void *ptr)
{
    if (!ptr)
        return;
    size_t *p = (size_t *)((char *)ptr - 16);
    if (holds_secret(ptr, p[0]))
        leaked++;
    free(p);
}

static void *a_realloc(void *ctx, void *ptr, size_t n)
{
    void *q = a_malloc(ctx, n);
    if (q && ptr) {
        size_t old = ((size_t *)((char *)ptr - 16))[0];
        memcpy(q, ptr, old < n ? old : n);
        a_free(ctx, ptr);
    }
    return q;
}

/* ---------------------------------------------------------------- fixtures */

static char home[256];

static void put_file(const char *rel, const char *text, int mode)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", home, rel);
    char dir[512];
    snprintf(dir, sizeof(dir), "%s", path);
    *strrchr(dir, '/') = '\0';
    mkdir(dir, 0700);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, (mode_t)mode);
}

static const char *const VARS[] = {
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
    "AWS_CREDENTIAL_EXPIRATION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_ENDPOINT_URL_STS", "AWS_ROLE_SESSION_NAME"};

static int setup(void **state)
{
    snprintf(home, sizeof(home), "/tmp/s3l-creds-XXXXXX");
    assert_non_null(mkdtemp(home));
    setenv("HOME", home, 1);
    for (size_t i = 0; i < sizeof(VARS) / sizeof(VARS[0]); i++)
        unsetenv(VARS[i]);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    leaked = 0;
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(leaked, 0); /* no secret left in freed memory */
    return 0;
}

/* Runs one get; returns its code, with the credentials in *c and the message in err. */
static int get_once(struct s3l_creds_provider *p, struct s3l_credentials *c,
                    struct s3l_error *err)
{
    s3l_error_clear(err);
    int rc = s3l_creds_provider_get(p, c, err);
    if (rc != 0) { /* a secret never enters a message */
        assert_null(strstr(err->message, "SECRET-MARK"));
        assert_null(strstr(err->message, "TOKEN-MARK"));
    }
    return rc;
}

/* ---------------------------------------------------------------- INI, words, times */

static void ini_follows_configparser(void **state)
{
    const char *text = "\xEF\xBB\xBF# comment\n; also a comment\n[default]\n"
                       "AWS_Access_Key_ID = AKID1 # not a comment\n"
                       "region: eu-west-1\n"
                       "s3 =\n  endpoint_url = http://x\n\n  addressing_style = path\n"
                       "[profile two words]\nk=v\n";
    struct s3l__ini ini;
    struct s3l_error err = {0};
    assert_int_equal(s3l__ini_parse(text, strlen(text), "f", &ini, &err), 0);
    assert_string_equal(s3l__ini_get(&ini, "default", "aws_access_key_id"),
                        "AKID1 # not a comment");
    assert_string_equal(s3l__ini_get(&ini, "default", "region"), "eu-west-1");
    assert_string_equal(s3l__ini_get(&ini, "default", "s3"),
                        "endpoint_url = http://x\naddressing_style = path");
    assert_string_equal(s3l__ini_get(&ini, "profile two words", "k"), "v");
    assert_true(s3l__ini_has(&ini, "profile two words"));
    assert_null(s3l__ini_get(&ini, "default", "k"));
    s3l__ini_free(&ini);

    const char *bad[] = {"k = v\n", "[a]\njust words\n", "[a]\n[a]\n", "[a]\nk=1\nK=2\n"};
    const char *why[] = {"f:1: key before any [section]", "f:2: expected [section]",
                         "f:2: section [a] repeated", "f:3: key k repeated in [a]"};
    for (int i = 0; i < 4; i++) {
        s3l_error_clear(&err);
        assert_int_equal(s3l__ini_parse(bad[i], strlen(bad[i]), "f", &ini, &err),
                         S3L_EINVALID_CONFIG);
        assert_non_null(strstr(err.message, why[i]));
    }
}

static void words_split_like_shlex(void **state)
{
    char **w = NULL;
    struct s3l_error err = {0};
    /* shlex.split(r'''/bin/p --a 'x y' "q \" \$" b\ c''') == ['/bin/p', '--a', 'x y',
     * 'q " \\$', 'b c'] */
    assert_int_equal(s3l__creds_split_words("/bin/p --a 'x y' \"q \\\" \\$\" b\\ c", &w, &err), 0);
    assert_string_equal(w[0], "/bin/p");
    assert_string_equal(w[1], "--a");
    assert_string_equal(w[2], "x y");
    assert_string_equal(w[3], "q \" \\$");
    assert_string_equal(w[4], "b c");
    assert_null(w[5]);
    s3l_free(w);
    assert_int_equal(s3l__creds_split_words("a 'b", &w, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);
    assert_int_equal(s3l__creds_split_words("  ", &w, &err), S3L_EINVALID_CONFIG);
}

static void times_are_iso8601_utc(void **state)
{
    struct tm tm = {0};
    tm.tm_year = 2026 - 1900, tm.tm_mon = 11, tm.tm_mday = 1, tm.tm_hour = 20, tm.tm_min = 5;
    tm.tm_sec = 7;
    int64_t want = (int64_t)timegm(&tm) * 1000000000;
    int64_t ns = 0;
    assert_int_equal(s3l__creds_parse_time("2026-12-01T20:05:07Z", &ns), 0);
    assert_true(ns == want);
    assert_int_equal(s3l__creds_parse_time("2026-12-01T20:05:07.250Z", &ns), 0);
    assert_true(ns == want + 250000000);
    assert_int_equal(s3l__creds_parse_time("2026-12-01T22:05:07+02:00", &ns), 0);
    assert_true(ns == want);
    assert_int_equal(s3l__creds_parse_time("1970-01-01T00:00:00Z", &ns), 0);
    assert_true(ns == 0);
    assert_int_equal(s3l__creds_parse_time("2026-12-01T20:05:07", &ns), S3L_EINVALID_CONFIG);
    assert_int_equal(s3l__creds_parse_time("2026-13-01T20:05:07Z", &ns), S3L_EINVALID_CONFIG);
    assert_int_equal(s3l__creds_parse_time("tomorrow", &ns), S3L_EINVALID_CONFIG);
}

/* ---------------------------------------------------------------- single providers */

static void static_keys(void **state)
{
    struct s3l_creds_provider *p = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_static_new("AKIDSTATIC", NULL, NULL, &p, &err),
                     S3L_EINVALID_ARGUMENT);
    assert_int_equal(s3l_creds_static_new("AKIDSTATIC", SECRET, TOKEN, &p, &err), 0);
    struct s3l_credentials c = {0};
    assert_int_equal(get_once(p, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDSTATIC");
    assert_string_equal(c.secret_access_key, SECRET);
    assert_string_equal(c.session_token, TOKEN);
    assert_string_equal(c.source, "explicit");
    assert_true(c.expiration_ns == 0);
    s3l_credentials_cleanup(&c);
    assert_null(c.secret_access_key);
    s3l_creds_provider_free(p);
}

static void environment(void **state)
{
    struct s3l_creds_provider *p = NULL;
    struct s3l_error err = {0};
    struct s3l_credentials c = {0};
    assert_int_equal(s3l_creds_env_new(&p, &err), 0);
    assert_int_equal(get_once(p, &c, &err), S3L_ENOT_FOUND);
    assert_string_equal(err.message, "AWS_ACCESS_KEY_ID not set");
    setenv("AWS_ACCESS_KEY_ID", "", 1); /* empty is unset, as botocore reads it */
    assert_int_equal(get_once(p, &c, &err), S3L_ENOT_FOUND);
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    assert_int_equal(get_once(p, &c, &err), S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "AWS_SECRET_ACCESS_KEY"));
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    assert_int_equal(get_once(p, &c, &err), 0);
    assert_string_equal(c.source, "env");
    assert_null(c.session_token);
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    setenv("AWS_CREDENTIAL_EXPIRATION", "2099-01-01T00:00:00Z", 1);
    assert_int_equal(get_once(p, &c, &err), 0);
    assert_string_equal(c.session_token, TOKEN);
    assert_true(c.expiration_ns > 0);
    setenv("AWS_SECURITY_TOKEN", "older-" TOKEN, 1); /* botocore's TOKENS: the older name first */
    assert_int_equal(get_once(p, &c, &err), 0);
    assert_string_equal(c.session_token, "older-" TOKEN);
    setenv("AWS_CREDENTIAL_EXPIRATION", "soon", 1);
    assert_int_equal(get_once(p, &c, &err), S3L_EINVALID_CONFIG);
    s3l_credentials_cleanup(&c);
    s3l_creds_provider_free(p);
}

static void shared_credentials_and_config_files(void **state)
{
    struct s3l_creds_provider *cred = NULL, *conf = NULL;
    struct s3l_error err = {0};
    struct s3l_credentials c = {0};
    struct s3l_creds_options o = {S3L_CREDS_OPTIONS_VERSION, "dev", NULL, NULL};
    assert_int_equal(s3l_creds_shared_file_new(&o, &cred, &err), 0);
    assert_int_equal(s3l_creds_config_file_new(&o, &conf, &err), 0);
    assert_int_equal(get_once(cred, &c, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "/.aws/credentials not found"));
    assert_int_equal(get_once(conf, &c, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "/.aws/config not found"));

    /* [dev] in the config file is no profile: only [profile dev] is */
    put_file(".aws/config", "[dev]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = x\n"
                            "[profile dev]\naws_access_key_id = AKIDCONFDEV\n",
             0600);
    put_file(".aws/credentials", "[profile dev]\naws_access_key_id = AKIDWRONG\n"
                                 "[dev]\naws_access_key_id = AKIDCREDDEV\n"
                                 "aws_secret_access_key = " SECRET "\n"
                                 "aws_session_token = " TOKEN "\n",
             0600);
    assert_int_equal(get_once(cred, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDCREDDEV");
    assert_string_equal(c.session_token, TOKEN);
    assert_string_equal(c.source, "shared-credentials-file");
    assert_int_equal(get_once(conf, &c, &err), S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "[profile dev]"));
    assert_non_null(strstr(err.message, "no aws_secret_access_key"));
    put_file(".aws/config", "[profile dev]\naws_access_key_id = AKIDCONFDEV\n"
                            "aws_secret_access_key = " SECRET "\n",
             0600);
    assert_int_equal(get_once(conf, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDCONFDEV");
    assert_string_equal(c.source, "config-file");
    assert_null(c.session_token);
    s3l_credentials_cleanup(&c);
    s3l_creds_provider_free(cred);
    s3l_creds_provider_free(conf);
}

static void files_moved_and_default_section(void **state)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/elsewhere/c.ini", home);
    put_file("elsewhere/c.ini", "[default]\naws_access_key_id=AKIDMOVED\n"
                                "aws_secret_access_key=" SECRET "\n", 0600);
    put_file("elsewhere/g.ini", "[default]\naws_access_key_id=AKIDGDEFAULT\n"
                                "aws_secret_access_key=" SECRET "\nregion = sa-east-1\n", 0600);
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    setenv("AWS_CONFIG_FILE", "~/elsewhere/g.ini", 1); /* "~" is HOME */
    struct s3l_creds_provider *p = NULL, *q = NULL;
    struct s3l_error err = {0};
    struct s3l_credentials c = {0};
    assert_int_equal(s3l_creds_shared_file_new(NULL, &p, &err), 0);
    assert_int_equal(s3l_creds_config_file_new(NULL, &q, &err), 0);
    assert_int_equal(get_once(p, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDMOVED");
    assert_int_equal(get_once(q, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDGDEFAULT");
    char *region = NULL;
    assert_int_equal(s3l_creds_profile_region(NULL, &region, &err), 0);
    assert_string_equal(region, "sa-east-1");
    s3l_free(region);
    s3l_credentials_cleanup(&c);
    s3l_creds_provider_free(p);
    s3l_creds_provider_free(q);
}

static void process_provider(void **state)
{
    put_file("bin/ok proc", "#!/bin/sh\n[ \"$1\" = \"--arg\" ] || exit 9\n"
                            "echo '{\"Version\": 1, \"AccessKeyId\": \"AKIDPROC\", "
                            "\"SecretAccessKey\": \"" SECRET "\", \"SessionToken\": \"" TOKEN "\", "
                            "\"Expiration\": \"2099-01-01T00:00:00Z\"}'\n",
             0700);
    put_file("bin/v2", "#!/bin/sh\necho '{\"Version\": 2, \"AccessKeyId\": \"A\", "
                       "\"SecretAccessKey\": \"" SECRET "\"}'\n", 0700);
    put_file("bin/nosecret", "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"A\"}'\n", 0700);
    put_file("bin/fails", "#!/bin/sh\necho 'token expired, run login' >&2\necho " SECRET "\nexit 3\n",
             0700);
    put_file("bin/garbage", "#!/bin/sh\necho 'not json " SECRET "'\n", 0700);
    struct {
        const char *cmd;
        int rc;
        const char *msg;
    } cases[] = {
        {"'%s/bin/ok proc' --arg", 0, NULL},
        {"%s/bin/v2", S3L_EINVALID_CONFIG, "Version is not 1"},
        {"%s/bin/nosecret", S3L_EINVALID_CONFIG, "has no SecretAccessKey"},
        {"%s/bin/fails", S3L_EAUTH_INVALID, "exited with status 3: token expired, run login"},
        {"%s/bin/garbage", S3L_EINVALID_CONFIG, "is not a JSON object"},
        {"%s/bin/absent", S3L_EAUTH_INVALID, "exited with status 127"},
    };
    struct s3l_creds_provider *p = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_process_new(NULL, &p, &err), 0);
    struct s3l_credentials c = {0};
    assert_int_equal(get_once(p, &c, &err), S3L_ENOT_FOUND);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char conf[600], cmd[400];
        snprintf(cmd, sizeof(cmd), cases[i].cmd, home);
        snprintf(conf, sizeof(conf), "[default]\ncredential_process = %s\n", cmd);
        put_file(".aws/config", conf, 0600);
        assert_int_equal(get_once(p, &c, &err), cases[i].rc);
        if (cases[i].msg) {
            assert_non_null(strstr(err.message, cases[i].msg));
            assert_non_null(strstr(err.message, "profile default"));
        }
    }
    put_file(".aws/config", "[default]\ncredential_process = /bin/false\n", 0600);
    /* the credentials file's value wins over the config file's (botocore's full_config) */
    char creds[600];
    snprintf(creds, sizeof(creds), "[default]\ncredential_process = '%s/bin/ok proc' --arg\n",
             home);
    put_file(".aws/credentials", creds, 0600);
    assert_int_equal(get_once(p, &c, &err), 0);
    assert_string_equal(c.access_key_id, "AKIDPROC");
    assert_string_equal(c.secret_access_key, SECRET);
    assert_string_equal(c.session_token, TOKEN);
    assert_string_equal(c.source, "custom-process");
    assert_true(c.expiration_ns > 4070908800LL * 1000000000 - 1);
    s3l_credentials_cleanup(&c);
    s3l_creds_provider_free(p);
}

/* ---------------------------------------------------------------- chain and cache */

struct counted {
    int calls;
    int rc;
    int64_t expires_in_s; /* 0: no expiration */
    const char *name;
};

static int counted_get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    struct counted *f = impl;
    f->calls++;
    if (f->rc != 0)
        return s3l_error_set(err, f->rc, "fixture %s says %d", f->name, f->rc);
    char id[32];
    snprintf(id, sizeof(id), "AKID%s%d", f->name, f->calls); /* a new key id each time */
    int64_t exp = f->expires_in_s
                      ? (int64_t)time(NULL) * 1000000000 + f->expires_in_s * 1000000000
                      : 0;
    return s3l__creds_fill(out, id, SECRET, TOKEN, exp, f->name);
}

static const struct s3l_creds_provider_ops counted_ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "fix",
                                                          counted_get, NULL};

static struct s3l_creds_provider *counted_new(struct counted *f)
{
    struct s3l_creds_provider *p = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_provider_new(&counted_ops, f, &p, &err), 0);
    return p;
}

static void chain_order_and_reasons(void **state)
{
    struct counted a = {0, S3L_ENOT_FOUND, 0, "A"}, b = {0, 0, 0, "B"}, c = {0, 0, 0, "C"};
    struct s3l_creds_provider *ps[] = {counted_new(&a), counted_new(&b), counted_new(&c)};
    struct s3l_creds_provider *chain = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_chain_new(ps, 3, &chain, &err), 0);
    struct s3l_credentials cr = {0};
    assert_int_equal(get_once(chain, &cr, &err), 0);
    assert_string_equal(cr.source, "B"); /* the first answer wins */
    assert_int_equal(a.calls, 1);
    assert_int_equal(c.calls, 0);
    b.rc = S3L_EINVALID_CONFIG; /* a configured source that fails stops the chain */
    assert_int_equal(get_once(chain, &cr, &err), S3L_EINVALID_CONFIG);
    assert_string_equal(err.message, "fix: fixture B says -4");
    assert_int_equal(c.calls, 0);
    b.rc = S3L_ENOT_FOUND, c.rc = S3L_ENOT_FOUND;
    assert_int_equal(get_once(chain, &cr, &err), S3L_EAUTH_INVALID);
    assert_string_equal(err.message, "no credentials found: fix: fixture A says -7; fix: fixture "
                                     "B says -7; fix: fixture C says -7");
    s3l_creds_provider_free(chain);
    assert_int_equal(s3l_creds_chain_new(NULL, 0, &chain, &err), S3L_EINVALID_ARGUMENT);
}

static void cache_refreshes_five_minutes_ahead(void **state)
{
    struct counted never = {0, 0, 0, "N"}, later = {0, 0, 600, "L"}, soon = {0, 0, 240, "S"};
    struct counted *fs[] = {&never, &later, &soon};
    int want_calls[] = {1, 1, 1};
    for (int k = 0; k < 3; k++) {
        struct s3l_creds_provider *cache = NULL;
        struct s3l_error err = {0};
        assert_int_equal(s3l_creds_cache_new(counted_new(fs[k]), &cache, &err), 0);
        struct s3l_credentials c = {0};
        for (int i = 0; i < 3; i++)
            assert_int_equal(get_once(cache, &c, &err), 0);
        /* 10 minutes left: served from the cache; 4 minutes left: inside the 5-minute window,
         * asked again only 30 s later (every get asked for it before: a credential_process ran
         * for each request) */
        assert_int_equal(fs[k]->calls, want_calls[k]);
        char want_id[32];
        snprintf(want_id, sizeof(want_id), "AKID%s%d", fs[k]->name, want_calls[k]);
        assert_string_equal(c.access_key_id, want_id);
        s3l_creds_cache_invalidate(cache); /* after AUTH_EXPIRED: ask again */
        assert_int_equal(get_once(cache, &c, &err), 0);
        assert_int_equal(fs[k]->calls, want_calls[k] + 1);
        /* a failed refresh is returned; unexpired credentials are kept for the next get */
        fs[k]->rc = S3L_ETRANSIENT;
        s3l_creds_cache_invalidate(cache);
        assert_int_equal(get_once(cache, &c, &err), S3L_ETRANSIENT);
        s3l_credentials_cleanup(&c);
        s3l_creds_provider_free(cache);
    }
    s3l_creds_cache_invalidate(NULL); /* not a cache: left alone */
}

/* A source whose fresh answer is expired already fails, as botocore's "the refreshed credentials
 * are still expired" (it was used, and the source asked again for every request); one with 2 s
 * left is asked again once half of that has passed. */
static void cache_refuses_expired_answers(void **state)
{
    struct counted old = {0, 0, -60, "E"}, brief = {0, 0, 2, "B"};
    struct s3l_creds_provider *cache = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_creds_cache_new(counted_new(&old), &cache, &err), 0);
    struct s3l_credentials c = {0};
    assert_int_equal(get_once(cache, &c, &err), S3L_EAUTH_EXPIRED);
    if (!strstr(err.message, "E: credentials were refreshed, but the refreshed credentials are "
                             "still expired (their Expiration is 6"))
        fail_msg("message: %s", err.message);
    assert_null(strstr(err.message, SECRET));
    assert_null(c.access_key_id);
    s3l_creds_provider_free(cache);
    assert_int_equal(s3l_creds_cache_new(counted_new(&brief), &cache, &err), 0);
    assert_int_equal(get_once(cache, &c, &err), 0);
    assert_int_equal(get_once(cache, &c, &err), 0);
    assert_int_equal(brief.calls, 1);
    usleep(1100 * 1000);
    assert_int_equal(get_once(cache, &c, &err), 0);
    assert_int_equal(brief.calls, 2);
    s3l_credentials_cleanup(&c);
    s3l_creds_provider_free(cache);
}

/* ---------------------------------------------------------------- the default chain */

static int resolve(const char *profile, struct s3l_credentials *c, struct s3l_error *err)
{
    struct s3l_creds_options o = {S3L_CREDS_OPTIONS_VERSION, profile, NULL, NULL};
    struct s3l_creds_provider *p = NULL;
    assert_int_equal(s3l_creds_default_chain_new(&o, &p, err), 0);
    int rc = get_once(p, c, err);
    s3l_creds_provider_free(p);
    return rc;
}

static void default_chain(void **state)
{
    struct s3l_credentials c = {0};
    struct s3l_error err = {0};
    assert_int_equal(resolve(NULL, &c, &err), S3L_EAUTH_INVALID);
    const char *listed[] = {"env: AWS_ACCESS_KEY_ID not set", "shared-credentials-file: ",
                            "custom-process: no credential_process", "config-file: ",
                            "container-role: AWS_CONTAINER_CREDENTIALS_*_URI not set",
                            "iam-role: off (AWS_EC2_METADATA_DISABLED)"};
    for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++)
        assert_non_null(strstr(err.message, listed[i]));

    put_file(".aws/credentials", "[dev]\naws_access_key_id = AKIDCREDDEV\n"
                                 "aws_secret_access_key = " SECRET "\n", 0600);
    setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    setenv("AWS_PROFILE", "dev", 1);
    assert_int_equal(resolve(NULL, &c, &err), 0);
    assert_string_equal(c.source, "env"); /* AWS_PROFILE does not turn the environment off */
    assert_int_equal(resolve("dev", &c, &err), 0);
    assert_string_equal(c.source, "shared-credentials-file"); /* a profile in code does */
    assert_string_equal(c.access_key_id, "AKIDCREDDEV");
    assert_int_equal(resolve("nope", &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "profile nope is in neither"));
    setenv("AWS_PROFILE", "gone", 1); /* botocore: ProfileNotFound, even with keys in env */
    assert_int_equal(resolve(NULL, &c, &err), S3L_EINVALID_CONFIG);
    unsetenv("AWS_PROFILE");
    unsetenv("AWS_ACCESS_KEY_ID");

    /* a role in the profile comes before its keys (STS here is a port nobody listens on; the
     * fake STS of test_creds_sts.c answers the real calls) */
    setenv("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9", 1);
    put_file(".aws/credentials", "[default]\naws_access_key_id = AKIDCREDDEF\n"
                                 "aws_secret_access_key = " SECRET "\nsource_profile = default\n",
             0600);
    put_file(".aws/config", "[default]\nrole_arn = arn:aws:iam::123456789012:role/r\n", 0600);
    assert_int_equal(resolve(NULL, &c, &err), S3L_ETRANSIENT);
    assert_non_null(strstr(err.message, "assume-role: profile default: STS AssumeRole of role "
                                        "arn:aws:iam::123456789012:role/r at "
                                        "http://127.0.0.1:9/"));
    put_file(".aws/config", "[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = a\n"
                            "[profile a]\nrole_arn = arn:aws:iam::1:role/a\nsource_profile = "
                            "default\n",
             0600);
    put_file(".aws/credentials", "", 0600);
    assert_int_equal(resolve(NULL, &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "makes a loop"));
    put_file(".aws/config", "[default]\nrole_arn = arn:aws:iam::1:role/r\n", 0600);
    assert_int_equal(resolve(NULL, &c, &err), S3L_EAUTH_INVALID);
    assert_non_null(strstr(err.message, "neither source_profile nor credential_source"));

    /* an SSO profile is refused with the way that works */
    put_file(".aws/config", "[default]\nsso_start_url = https://x.awsapps.com/start\n"
                            "sso_account_id = 123456789012\nsso_role_name = r\n", 0600);
    assert_int_equal(resolve(NULL, &c, &err), S3L_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "sso: profile default is an SSO profile"));
    assert_non_null(strstr(err.message, "credential_process"));

    /* web identity from the environment comes before the profile's files */
    put_file(".aws/config", "[default]\naws_access_key_id = AKIDCONF\n"
                            "aws_secret_access_key = " SECRET "\n", 0600);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token", 1);
    assert_int_equal(resolve(NULL, &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "assume-role-with-web-identity: "));
    setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/web", 1);
    assert_int_equal(resolve(NULL, &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "web identity token file /var/run/token"));
    unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
    assert_int_equal(resolve(NULL, &c, &err), 0);
    assert_string_equal(c.source, "config-file");
    s3l_credentials_cleanup(&c);
}

int main(void)
{
    static const struct s3l_allocator alloc = {a_malloc, a_realloc, a_free, NULL};
    s3l_set_allocator(&alloc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ini_follows_configparser, setup, teardown),
        cmocka_unit_test_setup_teardown(words_split_like_shlex, setup, teardown),
        cmocka_unit_test_setup_teardown(times_are_iso8601_utc, setup, teardown),
        cmocka_unit_test_setup_teardown(static_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(environment, setup, teardown),
        cmocka_unit_test_setup_teardown(shared_credentials_and_config_files, setup, teardown),
        cmocka_unit_test_setup_teardown(files_moved_and_default_section, setup, teardown),
        cmocka_unit_test_setup_teardown(process_provider, setup, teardown),
        cmocka_unit_test_setup_teardown(chain_order_and_reasons, setup, teardown),
        cmocka_unit_test_setup_teardown(cache_refreshes_five_minutes_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(cache_refuses_expired_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(default_chain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
