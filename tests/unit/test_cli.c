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
    assert_int_equal(cli_exit_for(S3L_EPERMISSION_DENIED, S3L_SIDE_DESTINATION), 3);
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
        cmocka_unit_test(durations),
        cmocka_unit_test(exit_codes),
        cmocka_unit_test(bytes_for_humans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
