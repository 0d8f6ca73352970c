/*
 * Unit tests of the store dispatch layer: URL parsing and canonical form, key and name rules,
 * operation counting, and the wrapper registration hook.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fail_alloc.h"
#include "s3l/alloc.h"
#include "s3l/creds.h"
#include "s3l/s3.h"
#include "store/store.h"
#include "util/util.h"

static void file_urls_normalise(void **state)
{
    (void)state;
    static const struct {
        const char *url, *path, *canon;
    } ok[] = {
        {"file:///tmp/lake", "/tmp/lake", "file:///tmp/lake"},
        {"file:///tmp/lake/", "/tmp/lake", "file:///tmp/lake"},
        {"file:///tmp//lake/./", "/tmp/lake", "file:///tmp/lake"},
        {"file://localhost/tmp/a%20b", "/tmp/a b", "file:///tmp/a b"},
        {"file:///", "/", "file:///"},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(ok); i++) {
        char *path = NULL, *canon = NULL;
        struct s3l_error err = {0};
        assert_int_equal(s3l__file_url_parse(ok[i].url, &path, &canon, &err), 0);
        assert_string_equal(path, ok[i].path);
        assert_string_equal(canon, ok[i].canon);
        s3l_free(path);
        s3l_free(canon);
    }
    static const char *bad[] = {"file://tmp/lake", "file:/tmp", "file:///tmp/../etc",
                                "file:///tmp/%00x", "file:///tmp/%zz"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        char *path = NULL, *canon = NULL;
        struct s3l_error err = {0};
        assert_int_equal(s3l__file_url_parse(bad[i], &path, &canon, &err), S3L_EINVALID_CONFIG);
        assert_non_null(strstr(err.message, "URL"));
    }
}

/* Version 2 of the store options carries the S3 fields an embedder sets without s3l/s3.h
 * (include/s3l/store.h): they reach the S3 backend (a value S3 does not list is refused at open,
 * before anything is sent), version 1 stops before them, and the backend's own options win. */
static void options_v2_s3_fields(void **state)
{
    (void)state;
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    struct s3l_creds_provider *creds = NULL;
    assert_int_equal(s3l_creds_static_new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                          NULL, &creds, &err),
                     0);
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    so.endpoint = "http://127.0.0.1:9";
    so.sse = "AES512";
    assert_int_equal(s3l_store_open("s3://bucket/p", &so, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "AES512"));
    assert_null(s);
    s3l_error_clear(&err);
    so.sse = "AES256";
    so.storage_class = "COLDEST";
    assert_int_equal(s3l_store_open("s3://bucket/p", &so, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "COLDEST"));
    s3l_error_clear(&err);
    /* the credentials reach the client: without them the default chain would be asked */
    so.storage_class = "STANDARD_IA";
    so.path_style = 1;
    so.credentials = creds;
    if (s3l_store_open("s3://bucket/p", &so, &s, &err))
        fail_msg("%s", err.message);
    assert_string_equal(s3l_store_url(s), "s3://bucket/p");
    assert_string_equal(s3l_store_backend(s), "s3");
    assert_true(s3l_store_copies_in_batches(s));
    assert_true(s3l_store_caps(s) & S3L_STORE_CAP_STAGED);
    assert_int_equal(s3l_store_bytes_written(s), 0);
    s3l_store_free(s);
    s = NULL;
    /* a version-1 caller's struct ends at s: the fields after it are not read */
    so.version = 1;
    so.sse = "AES512";
    setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1); /* the default chain's first source */
    setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
    int rc = s3l_store_open("s3://bucket/p", &so, &s, &err);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    if (rc)
        fail_msg("%s", err.message);
    s3l_store_free(s);
    s = NULL;
    s3l_error_clear(&err);
    /* the backend's own options win over the fields */
    so.version = S3L_STORE_OPTIONS_VERSION;
    struct s3l_s3_config cfg = {0};
    cfg.version = S3L_S3_CONFIG_VERSION;
    cfg.credentials = creds;
    struct s3l_s3_store_options own = {0};
    own.version = S3L_S3_STORE_OPTIONS_VERSION;
    own.client = &cfg;
    so.s3 = &own;
    if (s3l_store_open("s3://bucket/p", &so, &s, &err))
        fail_msg("%s", err.message);
    s3l_store_free(s);
    s3l_creds_provider_free(creds);
}

static int ignore_object(void *ctx, const struct s3l_object_info *info)
{
    (void)ctx;
    (void)info;
    return 0;
}

/* Every out-of-memory failure of a store operation says what was being done (issue 9), also
 * where the backend's helper that failed takes no err (the sub-store's key prefixing, the local
 * backend's path joins): the k-th allocation fails, for every k the operations reach. */
static int oom_ops(struct s3l_store *root, struct s3l_error *err)
{
    struct s3l_store *sub = NULL;
    int rc = s3l_store_sub_new(root, "a/b/", &sub, err);
    uint8_t *data = NULL;
    size_t len = 0;
    struct s3l_object_info info;
    const char *keys[2] = {"x/1.json", "x/2.json"};
    if (rc == 0)
        rc = s3l_store_put(sub, "x/1.json", "{}", 2, NULL, NULL, err);
    if (rc == 0)
        rc = s3l_store_put(sub, "x/2.json", "{}", 2, NULL, NULL, err);
    if (rc == 0)
        rc = s3l_store_get(sub, "x/1.json", 0, UINT64_MAX, 64, &data, &len, NULL, err);
    s3l_free(data);
    if (rc == 0)
        rc = s3l_store_stat(sub, "x/2.json", &info, err);
    if (rc == 0)
        rc = s3l_store_list(sub, "x/", ignore_object, NULL, err);
    if (rc == 0)
        rc = s3l_store_copy(sub, "x/1.json", "y/1.json", err);
    if (rc == 0)
        rc = s3l_store_remove_many(sub, keys, 2, err);
    s3l_store_free(sub);
    return rc;
}

static void out_of_memory_says_what(void **state)
{
    (void)state;
    unsigned k;
    for (k = 1; k < 5000; k++) {
        char dir[] = "/tmp/s3l-store-oom-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char url[64];
        snprintf(url, sizeof(url), "file://%s", dir);
        struct s3l_store *s = NULL;
        struct s3l_error err = {0};
        s3l_test_fail_alloc_arm(k);
        s3l_set_allocator(&s3l_test_fail_alloc);
        int rc = s3l_store_open(url, NULL, &s, &err);
        if (rc == 0)
            rc = oom_ops(s, &err);
        s3l_store_free(s);
        s3l_set_allocator(NULL);
        bool hit = s3l_test_fail_alloc_hit();
        if (rc != 0 && !err.message[0])
            fail_msg("k=%u: %s without a message", k, s3l_error_name(rc));
        if (rc != 0 && rc != S3L_ENOMEM)
            fail_msg("k=%u: %s (%s), expected success or out of memory", k, s3l_error_name(rc),
                     err.message);
        char cmd[96];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
        if (!hit)
            break;
    }
    print_message("allocation failures: %u points enumerated\n", k - 1);
    assert_true(k > 20);
}

static void open_refuses_unknown_and_s3(void **state)
{
    (void)state;
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    /* s3:// is wired to the S3 backend (tests/integration/test_s3_rgw.c); a URL with no bucket
     * is refused before any client is made */
    assert_int_equal(s3l_store_open("s3:///x", NULL, &s, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);
    /* nor a prefix with a control character, which S3's XML answers cannot carry: the message
     * names the byte (b=0, u=1, c=2, k=3, e=4, t=5, /=6, a=7, \x01=8) and holds no raw one */
    assert_int_equal(s3l_store_open("s3://bucket/a\x01b", NULL, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "byte 8 of the bucket and prefix is a control character"));
    assert_null(strchr(err.message, '\x01'));
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_open("ftp://x", NULL, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "ftp://x"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_open("file:///nonexistent-s3l-dir/x", NULL, &s, &err),
                     S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "/nonexistent-s3l-dir/x"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_open("file:///etc/passwd", NULL, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "not a directory"));
}

static void keys_follow_the_rules(void **state)
{
    (void)state;
    assert_true(s3l_store_key_valid("a"));
    assert_true(s3l_store_key_valid("a/b c/=x/__q/..x"));
    assert_false(s3l_store_key_valid(""));
    assert_false(s3l_store_key_valid("/a"));
    assert_false(s3l_store_key_valid("a//b"));
    assert_false(s3l_store_key_valid("a/"));
    assert_false(s3l_store_key_valid("a/../b"));
    assert_false(s3l_store_key_valid(".."));
    assert_false(s3l_store_key_valid("a/./b"));
}

static void check_name_refused(const char *name, size_t len, const char *why)
{
    struct s3l_error err = {0};
    assert_int_equal(s3l_name_check(name, len, "table", &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "table name"));
    if (!strstr(err.message, why))
        fail_msg("'%s' does not say '%s'", err.message, why);
}

static void names_cannot_escape(void **state)
{
    (void)state;
    check_name_refused("..", 2, "'..'");
    check_name_refused(".", 1, "'.'");
    check_name_refused("/etc", 4, "absolute");
    check_name_refused("a/b", 3, "'/'");
    check_name_refused("a\0b", 3, "NUL");
    check_name_refused("", 0, "empty");
    check_name_refused(".s3l-tmp-1", 10, "reserved");
    char long_name[257];
    memset(long_name, 'x', 256);
    long_name[256] = 0;
    check_name_refused(long_name, 256, "255 bytes");
    /* Control characters (a newline breaks `ls` output), backslash, invalid UTF-8 (RFC 3629). */
    check_name_refused("a\nb", 3, "control character");
    check_name_refused("a\tb", 3, "control character");
    check_name_refused("\x01x", 2, "control character");
    check_name_refused("x\x1f", 2, "control character");
    check_name_refused("x\x7f", 2, "control character");
    check_name_refused("a\\b", 3, "backslash");
    check_name_refused("caf\xe9", 4, "not valid UTF-8");          /* Latin-1 e-acute */
    check_name_refused("\xc0\xaf", 2, "not valid UTF-8");         /* overlong '/' */
    check_name_refused("\xed\xa0\x80", 3, "not valid UTF-8");     /* surrogate U+D800 */
    check_name_refused("\xf4\x90\x80\x80", 4, "not valid UTF-8"); /* above U+10FFFF */
    check_name_refused("ab\xe6\x97", 4, "not valid UTF-8");       /* truncated sequence */
    check_name_refused("\xff", 1, "not valid UTF-8");
    {
        /* The message stays on one line and names the byte and its offset. */
        struct s3l_error err = {0};
        assert_int_equal(s3l_name_check("ta\nble", 6, "table", &err), S3L_EINVALID_CONFIG);
        assert_null(strchr(err.message, '\n'));
        assert_non_null(strstr(err.message, "'ta\\x0able'"));
        assert_non_null(strstr(err.message, "0x0a at offset 2"));
    }
    static const char *good[] = {"orders", "with space",   "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
                                 "k=v",    "__quarantine", "_openetl2",
                                 "_openetl", /* the destination's rule, not the store's */
                                 "..x",    ".hidden",
                                 "\xf0\x9f\x98\x80 emoji", "\xef\xbf\xbf", "a~b!c#d$e%f'g"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(good); i++) {
        struct s3l_error err = {0};
        assert_int_equal(s3l_name_check(good[i], strlen(good[i]), "table", &err), 0);
    }
    struct s3l_error err = {0};
    assert_int_equal(s3l_name_check(long_name, 255, "namespace", &err), 0);
}

/* A wrapper that counts stores it wrapped and passes every op through (by delegation). */
static int n_wrapped;
static int wrap_count(void *ctx, struct s3l_store *inner, struct s3l_store **outer,
                      struct s3l_error *err)
{
    (void)ctx;
    (void)err;
    n_wrapped++;
    *outer = inner;
    return 0;
}

static int wrap_fail(void *ctx, struct s3l_store *inner, struct s3l_store **outer,
                     struct s3l_error *err)
{
    (void)ctx;
    (void)inner;
    (void)outer;
    return s3l_error_set(err, S3L_EINTERNAL, "wrapper refused");
}

static void wrapper_hook_applies_and_ops_count(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3l-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char url[64];
    snprintf(url, sizeof(url), "file://%s/", dir);
    s3l_store_set_wrapper(wrap_count, NULL);
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &s, &err), 0);
    assert_int_equal(n_wrapped, 1);
    char canon[64];
    snprintf(canon, sizeof(canon), "file://%s", dir);
    assert_string_equal(s->url, canon);
    assert_int_equal(s3l_store_put(s, "a/b", "xyz", 3, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_put(s, "../b", "xyz", 3, NULL, NULL, &err), S3L_EINVALID_ARGUMENT);
    assert_int_equal(s->n_ops, 1);
    assert_int_equal(s->bytes_written, 3);
    assert_int_equal(s3l_store_remove(s, "a/b", &err), 0);
    assert_int_equal(s->n_ops, 2);
    s3l_store_free(s);
    s3l_store_set_wrapper(wrap_fail, NULL);
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_open(url, NULL, &s, &err), S3L_EINTERNAL);
    s3l_store_set_wrapper(NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Store operations counted by name on file:// (issue 14 item 4), and the difference of two
 * snapshots as an epoch's cost is taken. */
static void counts_by_operation(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3l-store-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char url[64];
    snprintf(url, sizeof(url), "file://%s", dir);
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &s, &err), 0);
    struct s3l_store_counts c0, c1, d;
    s3l_store_counts(s, &c0);
    assert_string_equal(c0.unit, "store operations");
    assert_int_equal(c0.n, 0);
    assert_int_equal(c0.total, 0);
    assert_int_equal(s3l_store_put(s, "a/b", "xyz", 3, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_put(s, "a/c", "xyz", 3, NULL, NULL, &err), 0);
    s3l_store_counts(s, &c1);
    struct s3l_object_info info;
    assert_int_equal(s3l_store_stat(s, "a/b", &info, &err), 0);
    assert_int_equal(s3l_store_copy_sized(s, "a/b", 3, "a/d", &err), 0);
    assert_int_equal(s3l_store_stat(s, "a/nope", &info, &err), S3L_ENOT_FOUND);
    s3l_store_counts(s, &d);
    assert_int_equal(d.total, 5);
    assert_int_equal(s3l_counts_get(&d, "put"), 2);
    assert_int_equal(s3l_counts_get(&d, "stat"), 2); /* a failed call is a call */
    assert_int_equal(s3l_counts_get(&d, "copy"), 1);
    assert_int_equal(s3l_counts_get(&d, "get"), 0);
    s3l_counts_diff(&d, &c1, &d); /* in place */
    assert_int_equal(d.total, 3);
    assert_int_equal(d.n, 2); /* put is left out: no put since c1 */
    assert_string_equal(d.ops[0].op, "stat");
    assert_int_equal(d.ops[0].n, 2);
    assert_string_equal(d.ops[1].op, "copy");
    assert_int_equal(s3l_counts_get(&d, "put"), 0);
    s3l_store_free(s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static int collect(void *ctx, const struct s3l_object_info *info)
{
    char *buf = ctx;
    strcat(buf, info->key);
    strcat(buf, ";");
    return 0;
}

/* s3l_store_sub_new: every key is the parent's PREFIX + key, listings strip it, operations are
 * counted by the parent, staged uploads work through it, and bad prefixes are refused. */
static void sub_store_prefixes_every_key(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3l-sub-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char url[64];
    snprintf(url, sizeof(url), "file://%s", dir);
    struct s3l_store *p = NULL, *sub = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &p, &err), 0);
    static const char *bad[] = {"", "a", "/a/", "a//", "../", "a/../", "./"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++)
        assert_int_equal(s3l_store_sub_new(p, bad[i], &sub, &err), S3L_EINVALID_ARGUMENT);
    assert_int_equal(s3l_store_sub_new(p, "a/b/", &sub, &err), 0);
    char want[96];
    snprintf(want, sizeof(want), "%s/a/b", url);
    assert_string_equal(sub->url, want);
    assert_int_equal(sub->ops->caps, p->ops->caps);
    uint64_t before = p->n_ops;
    struct s3l_object_info info;
    assert_int_equal(s3l_store_put(sub, "x/y", "hello", 5, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_stat(p, "a/b/x/y", &info, &err), 0);
    assert_int_equal(info.size, 5);
    assert_true(p->n_ops > before); /* counted by the parent */
    assert_int_equal(s3l_store_copy(sub, "x/y", "z", &err), 0);
    assert_int_equal(s3l_store_put(p, "a/c", "other", 5, NULL, NULL, &err), 0);
    char seen[256] = "";
    assert_int_equal(s3l_store_list(sub, "", collect, seen, &err), 0);
    assert_string_equal(seen, "x/y;z;");
    /* conditional puts go through */
    struct s3l_put_options po = {0};
    po.if_none_match = true;
    assert_int_equal(s3l_store_put(sub, "z", "again", 5, &po, NULL, &err),
                     S3L_EPRECONDITION_FAILED);
    s3l_error_clear(&err);
    /* a staged upload, then its abort */
    struct s3l_upload *u = NULL;
    struct s3l_staged st = {0};
    assert_int_equal(s3l_store_upload_begin(sub, "staged", NULL, &u, &err), 0);
    assert_int_equal(s3l_store_upload_write(u, "12345", 5, &err), 0);
    assert_int_equal(s3l_store_upload_stage(u, &st, &err), 0);
    assert_int_equal(st.size, 5);
    assert_int_equal(s3l_store_staged_abort(sub, "staged", st.upload_id, &err), 0);
    s3l_staged_cleanup(&st);
    const char *keys[] = {"x/y", "z"};
    assert_int_equal(s3l_store_remove_many(sub, keys, 2, &err), 0);
    seen[0] = 0;
    assert_int_equal(s3l_store_list(sub, "", collect, seen, &err), 0);
    assert_string_equal(seen, "");
    seen[0] = 0;
    assert_int_equal(s3l_store_list(p, "", collect, seen, &err), 0);
    assert_string_equal(seen, "a/c;"); /* the parent's own object is untouched */
    s3l_store_free(sub);
    assert_int_equal(s3l_store_remove(p, "a/c", &err), 0);
    s3l_store_free(p);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(file_urls_normalise),
        cmocka_unit_test(open_refuses_unknown_and_s3),
        cmocka_unit_test(keys_follow_the_rules),
        cmocka_unit_test(names_cannot_escape),
        cmocka_unit_test(wrapper_hook_applies_and_ops_count),
        cmocka_unit_test(counts_by_operation),
        cmocka_unit_test(options_v2_s3_fields),
        cmocka_unit_test(out_of_memory_says_what),
        cmocka_unit_test(sub_store_prefixes_every_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
