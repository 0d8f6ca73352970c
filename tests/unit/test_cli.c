/*
 * Unit tests of the CLI's helpers (src/cli/util.c, compiled into this test): size and duration
 * parsing and the mapping of library errors to the documented exit codes (docs/cli.md).
 * Expected values are written down by hand: 256MiB = 256 * 2^20 = 268435456, 2GB = 2 * 10^9.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/cli/util.c"
#include "../../src/cli/access.c"
#include "../../src/cli/sse.c" /* cli_sse_option, which util.c calls */
#include "../../src/cli/s3_env.c" /* cli_s3_trace, which util.c and access.c call */

static void sizes(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_true(cli_parse_size("256MiB", &v));
    assert_true(v == 268435456ULL);
    assert_true(cli_parse_size("256M", &v));
    assert_true(v == 268435456ULL);
    assert_true(cli_parse_size("2GB", &v));
    assert_true(v == 2000000000ULL);
    assert_true(cli_parse_size("4KiB", &v));
    assert_true(v == 4096);
    assert_true(cli_parse_size("4kb", &v));
    assert_true(v == 4000);
    assert_true(cli_parse_size("1000", &v));
    assert_true(v == 1000);
    assert_true(cli_parse_size("1TiB", &v));
    assert_true(v == 1099511627776ULL);
    assert_false(cli_parse_size("12XB", &v));
    assert_false(cli_parse_size("-1", &v));
    assert_false(cli_parse_size("MiB", &v));
    assert_false(cli_parse_size("", &v));
    assert_false(cli_parse_size("99999999999999999999", &v));
    assert_false(cli_parse_size("20000000TiB", &v)); /* 2e7 * 2^40 overflows 64 bits */
}

/* --path-style's values, by hand: none/yes/true/path = 1, no/false/virtual = -1, auto = 0; and
 * what reaches the store options (the S3 client's path_style, only when the flag was given). */
static void path_style(void **state)
{
    (void)state;
    static const struct {
        const char *arg;
        int want;
    } ok[] = {{NULL, 1},   {"yes", 1},      {"true", 1}, {"path", 1},
              {"no", -1},  {"false", -1},   {"virtual", -1}, {"auto", 0}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int v = 7;
        assert_true(cli_parse_path_style(ok[i].arg, &v));
        assert_int_equal(v, ok[i].want);
    }
    int v = 7;
    assert_false(cli_parse_path_style("", &v));
    assert_false(cli_parse_path_style("YES!", &v));
    assert_false(cli_parse_path_style("1", &v));
    assert_int_equal(v, 7);

    struct cli_s3 s3 = {.endpoint = "http://127.0.0.1:9000", .region = "eu-west-3"};
    struct s3l_store_options so = {0};
    cli_s3_store_options(&s3, &so);
    assert_string_equal(so.endpoint, "http://127.0.0.1:9000");
    assert_string_equal(so.region, "eu-west-3");
    /* auto: client options all defaults (the client decides); they are always given, as they
     * carry what the CLI read from the environment for the library (the trace: none here) */
    const struct s3l_s3_store_options *auto_o = so.s3;
    assert_non_null(auto_o);
    assert_non_null(auto_o->client);
    assert_int_equal(auto_o->client->path_style, 0);
    assert_null(auto_o->client->credentials);
    assert_null(auto_o->client->trace);
    assert_null(auto_o->sse);
    s3.sse = "aws:kms"; /* encryption goes with the store options */
    s3.sse_kms_key_id = "k1";
    cli_s3_store_options(&s3, &so);
    assert_non_null(so.s3);
    assert_string_equal(((const struct s3l_s3_store_options *)so.s3)->sse, "aws:kms");
    assert_string_equal(((const struct s3l_s3_store_options *)so.s3)->sse_kms_key_id, "k1");
    s3.sse = s3.sse_kms_key_id = NULL;
    so.s3 = NULL;
    s3.path_style = -1;
    cli_s3_store_options(&s3, &so);
    const struct s3l_s3_store_options *o = so.s3;
    assert_non_null(o);
    assert_int_equal(o->version, S3L_S3_STORE_OPTIONS_VERSION);
    assert_int_equal(o->client->version, S3L_S3_CONFIG_VERSION);
    assert_int_equal(o->client->path_style, -1);
    assert_null(o->client->endpoint); /* the store options' endpoint and region override */
    assert_null(o->client->access_key);
}

static void durations(void **state)
{
    (void)state;
    int64_t ns = 0;
    assert_true(cli_parse_duration("30s", &ns));
    assert_true(ns == 30000000000LL);
    assert_true(cli_parse_duration("30", &ns));
    assert_true(ns == 30000000000LL);
    assert_true(cli_parse_duration("500ms", &ns));
    assert_true(ns == 500000000LL);
    assert_true(cli_parse_duration("2m", &ns));
    assert_true(ns == 120000000000LL);
    assert_true(cli_parse_duration("1h", &ns));
    assert_true(ns == 3600000000000LL);
    assert_true(cli_parse_duration("0", &ns));
    assert_true(ns == 0);
    assert_false(cli_parse_duration("1d", &ns));
    assert_false(cli_parse_duration("-5s", &ns));
    assert_false(cli_parse_duration("s", &ns));
}

static void exit_codes(void **state)
{
    (void)state;
    assert_int_equal(cli_exit_for(0, S3L_SIDE_NONE), 0);
    assert_int_equal(cli_exit_for(S3L_EINVALID_CONFIG, S3L_SIDE_DESTINATION), 1);
    assert_int_equal(cli_exit_for(S3L_EINVALID_INPUT, S3L_SIDE_DESTINATION), 2);
    assert_int_equal(cli_exit_for(S3L_ENOT_FOUND, S3L_SIDE_INPUT), 2);
    assert_int_equal(cli_exit_for(S3L_EPERMISSION_DENIED, S3L_SIDE_INPUT), 2);
    /* Access errors are 8 from the store, whichever step met them (issue 10 item 7). */
    assert_int_equal(cli_exit_for(S3L_EPERMISSION_DENIED, S3L_SIDE_DESTINATION), 8);
    assert_int_equal(cli_exit_for(S3L_EAUTH_INVALID, S3L_SIDE_DESTINATION), 8);
    assert_int_equal(cli_exit_for(S3L_EAUTH_EXPIRED, S3L_SIDE_DESTINATION), 8);
    assert_int_equal(cli_exit_for(S3L_EAUTH_INVALID, S3L_SIDE_NONE), 8);
    assert_int_equal(cli_exit_for(S3L_ENOT_FOUND, S3L_SIDE_DESTINATION), 3);
    assert_int_equal(cli_exit_for(S3L_ETRANSIENT, S3L_SIDE_DESTINATION), 3);
    assert_int_equal(cli_exit_for(S3L_ENO_SPACE, S3L_SIDE_DESTINATION), 3);
    assert_int_equal(cli_exit_for(S3L_ESCHEMA_DRIFT, S3L_SIDE_DESTINATION), 4);
    assert_int_equal(cli_exit_for(S3L_EFENCED, S3L_SIDE_DESTINATION), 5);
    assert_int_equal(cli_exit_for(S3L_EUNSUPPORTED, S3L_SIDE_CONFIG), 6);
    assert_int_equal(cli_exit_for(S3L_ENOMEM, S3L_SIDE_INPUT), 7);
    assert_int_equal(cli_exit_for(S3L_ENOT_FOUND, S3L_SIDE_CONFIG), 1);
}

static void bytes_for_humans(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(cli_fmt_bytes(1023, b, sizeof(b)), "1023 B");
    assert_string_equal(cli_fmt_bytes(1536, b, sizeof(b)), "1.5 KiB");
    assert_string_equal(cli_fmt_bytes(268435456, b, sizeof(b)), "256.0 MiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),
        cmocka_unit_test(path_style),
        cmocka_unit_test(durations),
        cmocka_unit_test(exit_codes),
        cmocka_unit_test(bytes_for_humans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
