/*
 * Errors of libs3land: one table of codes, and the detail a caller needs to act on one.
 *
 * Every fallible function returns an int: 0 on success or a negative S3L_E* code. Functions that
 * touch storage, the network or user input also take a `struct s3l_error *` last; on failure it
 * holds the code, the errno or HTTP status behind it, and a one-line message naming the thing at
 * fault (path, key, line, column). The first message set wins; outer layers may prefix context.
 * Messages never hold credentials or signatures.
 *
 * The taxonomy follows docs/design.md section 5: AUTH_INVALID .. PRECONDITION_FAILED are the
 * store's answers, SCHEMA_DRIFT, INVALID_INPUT and INVALID_CONFIG are the destination's.
 */
#ifndef S3L_ERROR_H
#define S3L_ERROR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* X(NAME, value, retryable, description). Values are stable: they are part of the ABI. */
#define S3L_ERROR_TABLE(X)                                                                         \
    X(OK, 0, false, "success")                                                                     \
    X(NOMEM, -1, false, "out of memory")                                                           \
    X(INVALID_ARGUMENT, -2, false, "invalid argument")                                             \
    X(INVALID_INPUT, -3, false, "invalid input record")                                            \
    X(INVALID_CONFIG, -4, false, "invalid configuration")                                          \
    X(IO, -5, false, "input/output error")                                                         \
    X(NO_SPACE, -6, false, "no space left on the destination")                                     \
    X(NOT_FOUND, -7, false, "not found")                                                           \
    X(EXISTS, -8, false, "already exists")                                                         \
    X(CONFLICT, -9, false, "conflicting concurrent change")                                        \
    X(PRECONDITION_FAILED, -10, false, "precondition failed")                                      \
    X(SCHEMA_DRIFT, -11, false, "column type changed")                                             \
    X(AUTH_INVALID, -12, false, "credentials invalid")                                             \
    X(AUTH_EXPIRED, -13, true, "credentials expired")                                              \
    X(PERMISSION_DENIED, -14, false, "permission denied")                                          \
    X(THROTTLED, -15, true, "throttled by the store")                                              \
    X(TRANSIENT, -16, true, "transient failure")                                                   \
    X(TOO_LARGE, -17, false, "size limit exceeded")                                                \
    X(CORRUPT, -18, false, "corrupt or unreadable data")                                           \
    X(UNSUPPORTED, -19, false, "not supported")                                                    \
    X(FENCED, -20, false, "a newer writer generation owns this pipeline")                          \
    X(CODEC, -21, false, "compression codec failure")                                              \
    X(STATE, -22, false, "operation not valid in this state")                                      \
    X(INTERNAL, -23, false, "internal error")

enum s3l_code {
#define S3L_ERROR_ENUM_(name, value, retry, text) S3L_E##name = (value),
    S3L_ERROR_TABLE(S3L_ERROR_ENUM_)
#undef S3L_ERROR_ENUM_
};

#define S3L_ERROR_MESSAGE_MAX 512

/*
 * Detail of one failure. Zero it (or call s3l_error_clear) before passing it in.
 * code: the S3L_E* code; sys_errno: the errno behind it, or 0; http_status: the HTTP status, or 0;
 * s3_code and request_id: the store's error code and x-amz-request-id, or empty strings;
 * retryable: whether the same call may succeed if repeated; message: NUL-terminated, one line.
 */
struct s3l_error {
    int code;
    int sys_errno;
    int http_status;
    bool retryable;
    char s3_code[64];
    char request_id[128];
    char message[S3L_ERROR_MESSAGE_MAX];
};

/* The constant name of a code ("INVALID_INPUT"), or "UNKNOWN". Never NULL. */
const char *s3l_error_name(int code);

/* The description of a code ("invalid input record"), or "unknown error". Never NULL. */
const char *s3l_strerror(int code);

/* Whether the code is one that a caller may retry (THROTTLED, TRANSIENT, AUTH_EXPIRED). */
bool s3l_error_retryable(int code);

/* Resets err to success. err may be NULL. */
void s3l_error_clear(struct s3l_error *err);

/*
 * Records a failure in err, unless err already holds one (the first message wins), and returns
 * code, so that `return s3l_error_set(err, S3L_EIO, "...", ...)` reads naturally. The message is
 * printf-formatted and truncated to S3L_ERROR_MESSAGE_MAX - 1 bytes. err may be NULL.
 */
int s3l_error_set(struct s3l_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* As s3l_error_set, also recording errno value sys_errno and appending its strerror text. */
int s3l_error_set_errno(struct s3l_error *err, int code, int sys_errno, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Prefixes err's message with "CONTEXT: " (for example a table or file name). Returns err->code. */
int s3l_error_prefix(struct s3l_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
