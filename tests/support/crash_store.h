/*
 * A store wrapper for crash and fault tests. Armed, it wraps every store s3l_store_open creates
 * (s3l_store_set_wrapper), with the inner store's capabilities, and counts every operation (upload
 * begin/write/publish/abort/stage, put, get, stat, list, remove, copy, staged complete/abort)
 * from 1:
 *   crash mode: SIGKILLs the process just before operation k, or at the n-th announcement of a
 *   named protocol point (after-stage, after-prepare, after-checkpoint, between-copies,
 *   before-marker, between-markers, after-marker, in-gc, after-commit; the two-phase sink's after_prepare and
 *   before_commit; and mid_complete, this wrapper's own: just after the inner store completed a
 *   staged upload, before its caller learns so);
 *   fail mode: operation k and every later one fail with S3L_EIO ("injected"), like a store that
 *   went away, without killing the process; lost-reply mode: operation k is performed, then
 *   reported failed; later ones work.
 * A crash-test build of the CLI links this file; its constructor arms crash mode from the
 * environment: S3L_CRASH_AT=k, S3L_CRASH_POINT=name or name:n, or S3L_CRASH_HOLD (below).
 */
#ifndef S3L_CRASH_STORE_H
#define S3L_CRASH_STORE_H

#include <stdbool.h>
#include <stdint.h>

/* Crash mode: at operation at_op (0: never) or at the nth (>= 1) event named point (NULL: none). */
void s3l_test_crash_arm(uint64_t at_op, const char *point, unsigned nth);
/*
 * Hold mode (crash mode's named point): the thread reaching the nth announcement of point waits
 * until the point `until` has been announced until_nth times in all (by another thread: the
 * pipelined commit's committer held at a point of epoch E until the stager announced after-stage
 * for a file of E+1), at most timeout_ms; then, with kill, the process is SIGKILLed (on a
 * timeout it _exits 4 instead, so that a test sees the interleaving did not happen); without, it
 * goes on. The CLI's crash build arms it from S3L_CRASH_HOLD=point:n:until:m (kill, 30 s).
 */
void s3l_test_hold_arm(const char *point, unsigned nth, const char *until, unsigned until_nth,
                       bool kill, int timeout_ms);
/* Fail mode from the next operation on, keeping a hold in progress (its `until` still counts). */
void s3l_test_fail_from_now(void);
/* Waits (1 ms steps, timeout_ms at most) until a thread reached the hold point: true when one
 * did (the pipelined commit's committer reaches its points after s3l_dest_commit returned). */
bool s3l_test_hold_wait(int timeout_ms);
/* After a hold without kill: 0 not reached, 1 held and released by `until`, 2 timed out. */
int s3l_test_hold_result(void);
/* Fail mode: operations from_op, from_op + 1, ... fail. */
void s3l_test_fail_arm(uint64_t from_op);
/* Fail-one mode: the nth operation named op ("upload_publish", "put", ...) fails with S3L_EIO
 * ("injected failure of OP #N (KEY)"); every other operation works. */
void s3l_test_fail_op_arm(const char *op, unsigned nth);
/* Fail-every mode: every operation named op fails as above; every other one works. */
void s3l_test_fail_op_every(const char *op);
/* The same failure added to the mode armed (a hold in progress goes on). */
void s3l_test_fail_op_also(const char *op, unsigned nth);
/* Lost-reply mode: operation at_op is performed but reported failed (S3L_EIO), as when the
 * store acted and its answer was lost; later operations work. */
void s3l_test_fail_after_arm(uint64_t at_op);
/* Stops wrapping new stores and resets the counters (stores already wrapped stay wrapped but
 * pass everything through). */
void s3l_test_crash_disarm(void);
/* Operations counted since the last arm. */
uint64_t s3l_test_crash_ops(void);
/* Whether operation k (1-based) of the last counted run changed the store (publish, put,
 * remove, copy): where a lost reply matters. Valid until the next arm. */
bool s3l_test_crash_op_mutates(uint64_t k);
/* The name of operation k of the last counted run ("put", "copy", "upload_publish", ...; "" when
 * unknown). Valid until the next arm. */
const char *s3l_test_crash_op_name(uint64_t k);

#endif
