/*
 * The test S3 store for C tests: starts a Ceph RGW with tests/stores/start-rgw.sh (or joins the
 * one named by S3L_RGW_ENV, as CTest fixtures and hand runs do) and loads its environment file
 * (RGW_ENDPOINT, RGW_BUCKET, AWS_ACCESS_KEY_ID, ...) into this process's environment.
 */
#ifndef S3L_TEST_RGW_STORE_H
#define S3L_TEST_RGW_STORE_H

/*
 * Starts or joins the store. tag names the state directory (/tmp/s3land-rgw-TAG.PID);
 * start_env is prepended to the start command (e.g. "RGW_TLS_PORT=auto"), or NULL.
 * Returns 0, or -1 when the store did not start or its environment file cannot be read.
 */
int s3l_test_rgw_start(const char *tag, const char *start_env);

/* Stops the store if s3l_test_rgw_start started it (by the PIDs it recorded). 0 or -1. */
int s3l_test_rgw_stop(void);

#endif
