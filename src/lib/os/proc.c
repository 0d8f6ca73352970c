/*
 * os: reading a small file whole, and running a program with its output captured. The
 * credentials providers need both (a shared config file, a web identity token, credential_process);
 * like the rest of os/, every failure names its syscall and the path or program.
 */
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "util/util.h"

int s3l__os_read_file(const char *path, size_t max, struct s3l_buf *out, struct s3l_error *err)
{
    int fd = -1, rc = s3l__os_open_read(path, &fd, err);
    if (rc != 0)
        return rc;
    /* Room for the whole file at once: a buffer that grew by realloc would leave copies of a
     * secret in freed memory. */
    struct s3l__os_stat st;
    if ((rc = s3l__os_fstat(fd, path, &st, err)) == 0 && st.size > max)
        rc = s3l_error_set(err, S3L_ETOO_LARGE, "%s is over %zu bytes", path, max);
    if (rc == 0 && (rc = s3l_buf_reserve(out, (size_t)st.size + 1)) != 0)
        s3l_error_set(err, rc, "out of memory reading %s", path);
    if (rc != 0) {
        close(fd);
        return rc;
    }
    uint8_t chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = s3l__os_fail(err, errno, "read", path);
            break;
        }
        if (n == 0)
            break;
        if (out->len + (size_t)n > max) {
            rc = s3l_error_set(err, S3L_ETOO_LARGE, "%s is over %zu bytes", path, max);
            break;
        }
        if ((rc = s3l_buf_append(out, chunk, (size_t)n)) != 0)
            break;
    }
    close(fd);
    OPENSSL_cleanse(chunk, sizeof(chunk)); /* the file may hold a secret (a token, a key) */
    return rc;
}

/* Reads what is ready on fd into b (at most max bytes kept); *open turns false at end of file. */
static int drain(int fd, struct s3l_buf *b, size_t max, bool *open, const char *prog,
                 struct s3l_error *err)
{
    uint8_t chunk[4096];
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n < 0)
        return s3l__os_fail(err, errno, "read", prog);
    if (n == 0) {
        *open = false;
        return 0;
    }
    int rc = 0;
    if (b->len + (size_t)n > max)
        rc = s3l_error_set(err, S3L_ETOO_LARGE, "%s wrote over %zu bytes", prog, max);
    else
        rc = s3l_buf_append(b, chunk, (size_t)n);
    OPENSSL_cleanse(chunk, sizeof(chunk));
    return rc;
}

static void child(char *const argv[], int out_w, int err_w)
{
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, 0);
    dup2(out_w, 1);
    dup2(err_w, 2);
    execvp(argv[0], argv);
    _exit(127);
}

int s3l__os_run(char *const argv[], size_t max, struct s3l_buf *out, struct s3l_buf *errout,
                int *status, struct s3l_error *err)
{
    int po[2], pe[2];
    if (pipe(po) != 0)
        return s3l__os_fail(err, errno, "pipe", argv[0]);
    if (pipe(pe) != 0) {
        int e = errno;
        close(po[0]), close(po[1]);
        return s3l__os_fail(err, e, "pipe", argv[0]);
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return s3l__os_fail(err, e, "fork", argv[0]);
    }
    if (pid == 0)
        child(argv, po[1], pe[1]);
    close(po[1]), close(pe[1]);
    bool o_open = true, e_open = true;
    int rc = 0;
    while (rc == 0 && (o_open || e_open)) {
        struct pollfd fds[2] = {{o_open ? po[0] : -1, POLLIN, 0}, {e_open ? pe[0] : -1, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno != EINTR)
                rc = s3l__os_fail(err, errno, "poll", argv[0]);
            continue;
        }
        if (o_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
            rc = drain(po[0], out, max, &o_open, argv[0], err);
        if (rc == 0 && e_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
            rc = drain(pe[0], errout, max, &e_open, argv[0], err);
    }
    close(po[0]), close(pe[0]);
    if (rc != 0)
        kill(pid, SIGKILL); /* it writes more than we take: stop it rather than wait forever */
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR)
            return rc ? rc : s3l__os_fail(err, errno, "waitpid", argv[0]);
    }
    if (rc != 0)
        return rc;
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    return 0;
}
