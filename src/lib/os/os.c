/*
 * POSIX implementation of the os module: thin wrappers that retry EINTR, map errno to the error
 * taxonomy and name the syscall and path in every message. Durability rules (fsync of the file,
 * then of the directory after rename/link/unlink) are the callers'; see docs/internals/store.md.
 */
#include "os/os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

int s3l__os_code(int e)
{
    switch (e) {
    case EACCES:
    case EPERM:
    case EROFS:
        return S3L_EPERMISSION_DENIED;
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
        return S3L_ENO_SPACE;
    case ENOENT:
    case ENOTDIR:
        return S3L_ENOT_FOUND;
    case EEXIST:
        return S3L_EEXISTS;
    case ENAMETOOLONG:
        return S3L_EINVALID_ARGUMENT;
    case ENOMEM:
        return S3L_ENOMEM;
    default:
        return S3L_EIO;
    }
}

int s3l__os_fail(struct s3l_error *err, int e, const char *syscall, const char *path)
{
    return s3l_error_set_errno(err, s3l__os_code(e), e, "%s %s", syscall, path);
}

static void fill_stat(const struct stat *s, struct s3l__os_stat *st)
{
    st->size = (uint64_t)s->st_size;
    st->mtime_ns = (int64_t)s->st_mtim.tv_sec * 1000000000 + s->st_mtim.tv_nsec;
    st->ctime_ns = (int64_t)s->st_ctim.tv_sec * 1000000000 + s->st_ctim.tv_nsec;
    st->ino = (uint64_t)s->st_ino;
    st->dev = (uint64_t)s->st_dev;
    st->is_dir = S_ISDIR(s->st_mode);
    st->is_reg = S_ISREG(s->st_mode);
}

int s3l__os_stat(const char *path, struct s3l__os_stat *st, struct s3l_error *err)
{
    struct stat s;
    if (stat(path, &s) != 0)
        return s3l__os_fail(err, errno, "stat", path);
    fill_stat(&s, st);
    return 0;
}

int s3l__os_fstat(int fd, const char *path, struct s3l__os_stat *st, struct s3l_error *err)
{
    struct stat s;
    if (fstat(fd, &s) != 0)
        return s3l__os_fail(err, errno, "fstat", path);
    fill_stat(&s, st);
    return 0;
}

int s3l__os_mkdirs(const char *path, struct s3l_error *err)
{
    struct stat s;
    if (stat(path, &s) == 0) {
        if (S_ISDIR(s.st_mode))
            return 0;
        return s3l__os_fail(err, ENOTDIR, "mkdir", path);
    }
    size_t n = strlen(path);
    char *p = s3l_strdup(path);
    if (!p)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory creating the directories of %s", path);
    int rc = 0;
    /* Create each missing component from the top; fsync its parent so the entry is durable. */
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) == 0) {
            /* The new entry lives in the parent: fsync it ("/" when p is "/x"). */
            char *slash = strrchr(p, '/');
            if (slash == p) {
                rc = s3l__os_fsync_dir("/", err);
            } else if (slash) {
                *slash = '\0';
                rc = s3l__os_fsync_dir(p, err);
                *slash = '/';
            }
        } else if (errno != EEXIST) {
            rc = s3l__os_fail(err, errno, "mkdir", p);
        }
        p[i] = saved;
    }
    s3l_free(p);
    return rc;
}

int s3l__os_create_excl(const char *path, int *fd, struct s3l_error *err)
{
    int f;
    do
        f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    while (f < 0 && errno == EINTR);
    if (f < 0)
        return s3l__os_fail(err, errno, "open", path);
    *fd = f;
    return 0;
}

int s3l__os_open_read(const char *path, int *fd, struct s3l_error *err)
{
    int f;
    do
        f = open(path, O_RDONLY | O_CLOEXEC);
    while (f < 0 && errno == EINTR);
    if (f < 0)
        return s3l__os_fail(err, errno, "open", path);
    *fd = f;
    return 0;
}

int s3l__os_write_all(int fd, const void *data, size_t len, const char *path, struct s3l_error *err)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return s3l__os_fail(err, errno, "write", path);
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int s3l__os_pread_full(int fd, void *buf, size_t len, uint64_t offset, size_t *got,
                       const char *path, struct s3l_error *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(offset + done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return s3l__os_fail(err, errno, "read", path);
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

int s3l__os_read(int fd, void *buf, size_t len, size_t *got, const char *path,
                 struct s3l_error *err)
{
    ssize_t r;
    do {
        r = read(fd, buf, len);
    } while (r < 0 && errno == EINTR);
    *got = r > 0 ? (size_t)r : 0;
    return r < 0 ? s3l__os_fail(err, errno, "read", path) : 0;
}

bool s3l__os_wait_readable(int fd, int timeout_ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    int n = poll(&pfd, 1, timeout_ms);
    if (n < 0)
        return errno != EINTR; /* interrupted: back to the caller; else the read reports it */
    return n > 0;
}

int s3l__os_fsync(int fd, const char *path, struct s3l_error *err)
{
    if (fsync(fd) != 0)
        return s3l__os_fail(err, errno, "fsync", path);
    return 0;
}

int s3l__os_close(int fd, const char *path, struct s3l_error *err)
{
    if (close(fd) != 0 && errno != EINTR)
        return s3l__os_fail(err, errno, "close", path);
    return 0;
}

int s3l__os_seek(int fd, uint64_t off, const char *path, struct s3l_error *err)
{
    if (off > (uint64_t)INT64_MAX)
        return s3l__os_fail(err, EOVERFLOW, "lseek", path);
    if (lseek(fd, (off_t)off, SEEK_SET) >= 0)
        return 0;
    if (errno == ESPIPE)
        return 1;
    int e = errno;
    return s3l_error_set_errno(err, s3l__os_code(e), e, "lseek %s to byte offset %llu", path,
                               (unsigned long long)off);
}

int s3l__os_fsync_dir(const char *dir, struct s3l_error *err)
{
    int fd;
    do
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return s3l__os_fail(err, errno, "open", dir);
    int rc = 0;
    /* Some filesystems refuse fsync on a directory (EINVAL); there is nothing more to do then. */
    if (fsync(fd) != 0 && errno != EINVAL)
        rc = s3l__os_fail(err, errno, "fsync", dir);
    close(fd);
    return rc;
}

int s3l__os_rename(const char *from, const char *to, struct s3l_error *err)
{
    if (rename(from, to) != 0)
        return s3l__os_fail(err, errno, "rename", to);
    return 0;
}

int s3l__os_link(const char *from, const char *to, struct s3l_error *err)
{
    if (link(from, to) != 0)
        return s3l__os_fail(err, errno, "link", to);
    return 0;
}

int s3l__os_unlink(const char *path, bool missing_ok, struct s3l_error *err)
{
    if (unlink(path) != 0) {
        if (errno == ENOENT && missing_ok)
            return 0;
        return s3l__os_fail(err, errno, "unlink", path);
    }
    return 0;
}

bool s3l__os_rmdir_if_empty(const char *path)
{
    return rmdir(path) == 0;
}

int s3l__os_lock(const char *path, int *fd, struct s3l_error *err)
{
    for (;;) {
        int f;
        do
            f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        while (f < 0 && errno == EINTR);
        if (f < 0)
            return s3l__os_fail(err, errno, "open", path);
        int r;
        do
            r = flock(f, LOCK_EX);
        while (r != 0 && errno == EINTR);
        if (r != 0) {
            int e = errno;
            close(f);
            return s3l__os_fail(err, e, "flock", path);
        }
        /* The lock file may have been unlinked (by the remove of its directory's last object)
         * between our open and our flock: the lock is then on a file no one else will open.
         * Hold it only while the path still names the file we locked; else open it anew. */
        struct stat held, now;
        if (fstat(f, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino) {
            *fd = f;
            return 0;
        }
        close(f);
    }
}

void s3l__os_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}

void s3l__os_hold(int fd)
{
    while (flock(fd, LOCK_SH) != 0 && errno == EINTR) {
    }
}

bool s3l__os_abandoned(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    bool free_ = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free_;
}

bool s3l__os_abandoned_before(const char *path, int64_t before_ns)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    struct stat s;
    bool old = fstat(fd, &s) == 0 && S_ISREG(s.st_mode) &&
               (int64_t)s.st_ctim.tv_sec * 1000000000 + s.st_ctim.tv_nsec < before_ns;
    bool free_ = old && flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free_;
}

int64_t s3l__os_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t s3l__os_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void s3l__os_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int s3l__os_readdir(const char *dir, int (*cb)(void *ctx, const char *name, bool is_dir), void *ctx,
                    struct s3l_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return s3l__os_fail(err, errno, "opendir", dir);
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                rc = s3l__os_fail(err, errno, "readdir", dir);
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
            struct stat s;
            if (fstatat(dirfd(d), e->d_name, &s, 0) == 0)
                is_dir = S_ISDIR(s.st_mode);
        }
        rc = cb(ctx, e->d_name, is_dir);
        if (rc)
            break;
    }
    closedir(d);
    return rc;
}

uint64_t s3l__os_unique(void)
{
    static uint64_t counter;
    uint64_t c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    return ((uint64_t)getpid() << 32) ^ c;
}

int s3l__os_getpid(void)
{
    return (int)getpid();
}
