/*
 * The test S3 store for C tests: starts a Ceph RGW with tests/stores/start-rgw.sh (or joins the
 * one named by S3L_RGW_ENV, as CTest fixtures and hand runs do) and loads its environment file
 * (RGW_ENDPOINT, RGW_BUCKET, AWS_ACCESS_KEY_ID, ...) into this process's environment.
 */
#ifndef S3L_TEST_RGW_STORE_H
#define S3L_TEST_RGW_STORE_H

#include <stddef.h>

#include "s3l/error.h"

/*
 * Starts or joins the store. tag names the state directory (/tmp/s3land-rgw-TAG.PID);
 * start_env is prepended to the start command (e.g. "RGW_TLS_PORT=auto"), or NULL.
 * Returns 0, or -1 when the store did not start or its environment file cannot be read.
 */
int s3l_test_rgw_start(const char *tag, const char *start_env);

/* Stops the store if s3l_test_rgw_start started it (by the PIDs it recorded). 0 or -1. */
int s3l_test_rgw_stop(void);

/*
 * After s3l_test_rgw_start: points the environment at the store the way the AWS tools read it
 * (AWS_ENDPOINT_URL = RGW_ENDPOINT, no AWS_ENDPOINT_URL_S3), so that the CLI, a tool or a
 * client configured by s3l_test_s3_env (s3_env.h; the library itself reads no environment) with no
 * endpoint finds it, and copies the store's bucket (RGW_BUCKET) into bucket (cap bytes).
 * 0, or -1 when the store's environment lacks either.
 */
int s3l_test_rgw_use(char *bucket, size_t cap);

/*
 * In cmocka tests of the S3 client and store: `call` (which may use `err`, a struct s3l_error *
 * in scope of the call only) must return 0, else the test fails naming the call, its message and
 * its code.
 */
#define OK(call)                                                                                   \
    do {                                                                                           \
        struct s3l_error e_ = {0};                                                                 \
        struct s3l_error *err = &e_;                                                               \
        int rc_ = (call);                                                                          \
        if (rc_ != 0)                                                                              \
            fail_msg("%s failed: %s (%s)", #call, e_.message, s3l_error_name(rc_));                \
    } while (0)

#endif
