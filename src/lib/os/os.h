/*
 * os: the only module that makes OS calls. Each function returns 0 or a negative S3L_E* code
 * and, on failure, fills err with a message naming the syscall and the path, errno mapped to the
 * taxonomy by s3l__os_code (docs/internals/store.md has the table).
 */
#ifndef S3L_OS_H
#define S3L_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

/* What the local backend needs to know of a file. */
struct s3l__os_stat {
    uint64_t size;
    int64_t mtime_ns;
    int64_t ctime_ns; /* inode change: creation, write, link(2) */
    uint64_t ino;
    uint64_t dev;
    bool is_dir;
    bool is_reg;
};

/* errno -> S3L_E*: EACCES/EPERM/EROFS -> PERMISSION_DENIED, ENOSPC/EDQUOT -> NO_SPACE,
 * ENOENT/ENOTDIR -> NOT_FOUND, EEXIST -> EXISTS, ENAMETOOLONG -> INVALID_ARGUMENT, ENOMEM ->
 * NOMEM, else IO. */
int s3l__os_code(int e);
/* Sets err from errno value e: "<syscall> <path>: <strerror>". Returns the mapped code. */
int s3l__os_fail(struct s3l_error *err, int e, const char *syscall, const char *path);

int s3l__os_stat(const char *path, struct s3l__os_stat *st, struct s3l_error *err);
/* Creates path and its missing parents (mode 0755), fsyncing each parent that gained an entry,
 * so that a later fsynced file in it survives a crash. Existing directories are fine. */
int s3l__os_mkdirs(const char *path, struct s3l_error *err);
/* Creates a new file (O_EXCL, 0644) at path; *fd is open for writing. */
int s3l__os_create_excl(const char *path, int *fd, struct s3l_error *err);
int s3l__os_open_read(const char *path, int *fd, struct s3l_error *err);
int s3l__os_fstat(int fd, const char *path, struct s3l__os_stat *st, struct s3l_error *err);
/* Writes all len bytes (retrying short writes and EINTR). */
int s3l__os_write_all(int fd, const void *data, size_t len, const char *path,
                      struct s3l_error *err);
/* Reads up to len bytes at offset; *got < len only at end of file. */
int s3l__os_pread_full(int fd, void *buf, size_t len, uint64_t offset, size_t *got,
                       const char *path, struct s3l_error *err);
/* read(2) of up to len bytes at the file position into buf (EINTR retried): *got is 0 only at the
 * end of the input. Errors: the mapped code, "read <path>: <strerror>". */
int s3l__os_read(int fd, void *buf, size_t len, size_t *got, const char *path,
                 struct s3l_error *err);
/* Waits up to timeout_ms (>= 0) for fd to be readable (poll(2), POLLIN): true when a read will
 * not block (bytes, the end of the input, or an error the read then reports), false when the
 * time passed or a signal interrupted the wait (the caller may look at a stop request). */
bool s3l__os_wait_readable(int fd, int timeout_ms);
/* lseek(2) of fd to offset off from its start. Returns 0, 1 when fd cannot seek (ESPIPE: a pipe,
 * FIFO or socket; the caller reads and drops the bytes instead; err is left alone), or the mapped
 * code with "lseek <path> to byte offset <off>: <strerror>". */
int s3l__os_seek(int fd, uint64_t off, const char *path, struct s3l_error *err);
int s3l__os_fsync(int fd, const char *path, struct s3l_error *err);
/* close(2); errors are reported (a close error after write can mean lost data on NFS). */
int s3l__os_close(int fd, const char *path, struct s3l_error *err);
/* Opens the directory and fsyncs it, making renames/links/unlinks in it durable. */
int s3l__os_fsync_dir(const char *dir, struct s3l_error *err);
int s3l__os_rename(const char *from, const char *to, struct s3l_error *err);
/* link(2); S3L_EEXISTS when to exists. */
int s3l__os_link(const char *from, const char *to, struct s3l_error *err);
/* unlink(2); a missing file is success when missing_ok. */
int s3l__os_unlink(const char *path, bool missing_ok, struct s3l_error *err);
/* rmdir(2) if empty; any failure is ignored (returns false). */
bool s3l__os_rmdir_if_empty(const char *path);
/* Opens (creating, 0644) path and takes an exclusive flock(2) on it; *fd is the held lock. The
 * lock is held only on the file path names once it is taken: when the file was unlinked between
 * the open and the flock, it is opened anew (so a lock file may be removed under its lock). */
int s3l__os_lock(const char *path, int *fd, struct s3l_error *err);
void s3l__os_unlock(int fd);
/* Takes a shared flock(2) on an open file: held while the process lives, it marks the file as
 * in use (temp files of uploads). */
void s3l__os_hold(int fd);
/* Whether nobody holds a flock on path any more (an exclusive non-blocking flock succeeds):
 * the temp file of a process that died. False on any error. */
bool s3l__os_abandoned(const char *path);
/* As s3l__os_abandoned, and the file's ctime (ns since epoch) is before before_ns: a file
 * created (or linked) after that could be one whose creator has not taken its flock yet. */
bool s3l__os_abandoned_before(const char *path, int64_t before_ns);
/* The wall clock (CLOCK_REALTIME), ns since epoch. */
int64_t s3l__os_now_ns(void);
/* The interval clock (CLOCK_MONOTONIC), ns since an unspecified start: for durations and
 * deadlines, never written to storage. */
int64_t s3l__os_mono_ns(void);
/* Sleeps ms milliseconds (nanosleep, resumed after a signal). */
void s3l__os_sleep_ms(long ms);
/* Calls cb(ctx, name, is_dir) for every entry of dir but "." and "..". A non-zero cb result
 * stops and is returned. */
int s3l__os_readdir(const char *dir, int (*cb)(void *ctx, const char *name, bool is_dir), void *ctx,
                    struct s3l_error *err);
/* A process-unique number for temp names (pid and a counter). */
uint64_t s3l__os_unique(void);
int s3l__os_getpid(void);

/* (path.c) The current working directory (getcwd(3)) as a new string, freed with s3l_free.
 * Errors: S3L_ENOMEM; the mapped code with "getcwd: <strerror>" (a directory removed under the
 * process is ENOENT: S3L_ENOT_FOUND). */
int s3l__os_getcwd(char **out, struct s3l_error *err);
/* (path.c) The real path of path (realpath(3): absolute, symbolic links, "." and ".." resolved) as
 * a new string, freed with s3l_free. Errors: S3L_ENOMEM; the mapped code with "realpath <path>:
 * <strerror>" (S3L_ENOT_FOUND when a component does not exist). */
int s3l__os_realpath(const char *path, char **out, struct s3l_error *err);

/* (proc.c) Reads the whole file at path, appending it to out (an s3l_buf, util.h). A missing
 * file is S3L_ENOT_FOUND, a file over max bytes S3L_ETOO_LARGE. out is grown once, to the
 * file's size, and the read buffers are wiped: the file may hold a secret, which must not be
 * left in freed memory. */
struct s3l_buf;
int s3l__os_read_file(const char *path, size_t max, struct s3l_buf *out, struct s3l_error *err);
/* (proc.c) Runs argv[0] (looked up in PATH, execvp) with argv, stdin /dev/null, and waits for
 * it, appending its stdout to out and its stderr to errout (each at most max bytes: more is
 * S3L_ETOO_LARGE and the program is killed). *status is its exit status, 128 + the signal when a
 * signal ended it, 127 when it could not be started. */
int s3l__os_run(char *const argv[], size_t max, struct s3l_buf *out, struct s3l_buf *errout,
                int *status, struct s3l_error *err);

/* Calls cb(ctx, path) for each path matching the glob(7) pattern, sorted (glob(3) with
 * GLOB_ERR); none when nothing matches. cb's non-zero result stops and is returned. S3L_EIO for
 * a directory that cannot be read, S3L_ENOMEM. */
int s3l__os_glob(const char *pattern, int (*cb)(void *ctx, const char *path), void *ctx,
                 struct s3l_error *err);

/* (watch.c) Waiting for followed files to change: inotify(7) on each file's directory, or a
 * stat(2) of each file and its directory every poll_ms when inotify is unavailable or fails, or
 * when mode is S3L__OS_WATCH_POLL (docs/internals/os.md, "Watching files"). */
enum s3l__os_watch_mode {
    S3L__OS_WATCH_AUTO = 0, /* inotify, else polling */
    S3L__OS_WATCH_POLL,     /* polling only */
};
struct s3l__os_watch;
/* A watch of no files yet; poll_ms <= 0 is 500. *out is freed with s3l__os_watch_free.
 * S3L_ENOMEM only: a failing inotify_init1 means polling. */
int s3l__os_watch_new(enum s3l__os_watch_mode mode, int poll_ms, struct s3l__os_watch **out,
                      struct s3l_error *err);
/* Watches path (a file, which may not exist yet) and its directory; a path added twice is
 * watched once. A directory inotify cannot watch turns the watch to polling. S3L_ENOMEM. */
int s3l__os_watch_add(struct s3l__os_watch *w, const char *path, struct s3l_error *err);
/* Waits up to timeout_ms (>= 0): 1 when a watched file or directory may have changed (an
 * inotify event, or a poll found a stat differing from the last), 0 when the time passed or a
 * signal cut the wait short. Spurious 1s are possible (another file of the directory). */
int s3l__os_watch_wait(struct s3l__os_watch *w, int timeout_ms);
/* Whether the watch polls (inotify unavailable, failed, or not asked for). */
bool s3l__os_watch_polling(const struct s3l__os_watch *w);
/* NULL is a no-op. */
void s3l__os_watch_free(struct s3l__os_watch *w);

#endif
