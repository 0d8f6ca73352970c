/*
 * os: waiting for followed files to change (the runner's follow mode, docs/internals/os.md
 * "Watching files"). A watch holds the files a run follows. With inotify(7) it watches each
 * file's directory for IN_MODIFY, IN_CREATE, IN_MOVED_FROM, IN_MOVED_TO, IN_MOVE_SELF,
 * IN_DELETE and IN_DELETE_SELF (a write to the file, a rotation's rename and the new file at the
 * path, a new file a glob may match), so a wait ends as soon as one happens. When inotify is not
 * there or fails (no inotify on the file system, the per-user limit of instances or watches
 * reached, EMFILE), or when the caller asks for it, it polls instead: every poll_ms it stats
 * each file and its directory and reports a change of size, mtime, ctime, identity or presence.
 *
 * A wait never decides anything itself: it tells the caller to look again, and the caller reads
 * what is there. So a spurious wake-up (an event for another file of the directory) costs one
 * look, and a missed one costs at most the caller's timeout.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "os/os.h"
#include "util/util.h"

#define WATCH_MASK                                                                                 \
    (IN_MODIFY | IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF | IN_DELETE |            \
     IN_DELETE_SELF)

/* What a poll compares: a file's or directory's stat, or that it is missing. */
struct snap {
    bool exists;
    struct s3l__os_stat st;
};

struct watched {
    char *path; /* the file */
    char *dir;  /* its directory */
    struct snap file, parent;
};

struct s3l__os_watch {
    int fd; /* the inotify instance; -1 when polling */
    int poll_ms;
    int64_t last_poll_ns; /* monotonic */
    struct watched *v;
    size_t n, cap;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void take(const char *path, struct snap *s)
{
    struct s3l_error e = {0};
    memset(s, 0, sizeof(*s));
    s->exists = s3l__os_stat(path, &s->st, &e) == 0;
}

static bool same(const struct snap *a, const struct snap *b)
{
    const struct s3l__os_stat *x = &a->st, *y = &b->st;
    return a->exists == b->exists && x->dev == y->dev && x->ino == y->ino &&
           x->size == y->size && x->mtime_ns == y->mtime_ns && x->ctime_ns == y->ctime_ns;
}

/* Takes new snapshots of every file and directory; true when one differs from the last. */
static bool poll_changed(struct s3l__os_watch *w)
{
    bool changed = false;
    for (size_t i = 0; i < w->n; i++) {
        struct snap f, d;
        take(w->v[i].path, &f);
        take(w->v[i].dir, &d);
        if (!same(&f, &w->v[i].file) || !same(&d, &w->v[i].parent))
            changed = true;
        w->v[i].file = f;
        w->v[i].parent = d;
    }
    return changed;
}

/* Leaves inotify for polling (a watch that could not be added: every file is then polled). */
static void to_polling(struct s3l__os_watch *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    w->last_poll_ns = mono_ns();
}

int s3l__os_watch_new(enum s3l__os_watch_mode mode, int poll_ms, struct s3l__os_watch **out,
                      struct s3l_error *err)
{
    struct s3l__os_watch *w = s3l_calloc(1, sizeof(*w));
    if (!w)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory watching the inputs");
    w->poll_ms = poll_ms > 0 ? poll_ms : 500;
    w->fd = -1;
    w->last_poll_ns = mono_ns();
    if (mode == S3L__OS_WATCH_AUTO)
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC); /* -1: polling */
    *out = w;
    return 0;
}

int s3l__os_watch_add(struct s3l__os_watch *w, const char *path, struct s3l_error *err)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->v[i].path, path) == 0)
            return 0;
    if (s3l__array_reserve(&w->v, &w->cap, w->n + 1, sizeof(*w->v), 8))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory watching %s", path);
    struct watched *e = &w->v[w->n];
    memset(e, 0, sizeof(*e));
    e->path = s3l_strdup(path);
    const char *slash = strrchr(path, '/');
    e->dir = slash ? s3l_strndup(path, slash == path ? 1 : (size_t)(slash - path))
                   : s3l_strdup(".");
    if (!e->path || !e->dir) {
        s3l_free(e->path);
        s3l_free(e->dir);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory watching %s", path);
    }
    take(e->path, &e->file);
    take(e->dir, &e->parent);
    w->n++;
    /* inotify_add_watch returns the same descriptor for a directory watched already. ENOSPC
     * (max_user_watches), EACCES, a file system without inotify: poll every file instead. */
    if (w->fd >= 0 && inotify_add_watch(w->fd, e->dir, WATCH_MASK) < 0)
        to_polling(w);
    return 0;
}

bool s3l__os_watch_polling(const struct s3l__os_watch *w)
{
    return w->fd < 0;
}

/* Sleeps ns; false when a signal cut it short (not resumed: a stop is seen at once). */
static bool nap_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    return nanosleep(&ts, NULL) == 0;
}

int s3l__os_watch_wait(struct s3l__os_watch *w, int timeout_ms)
{
    if (timeout_ms < 0)
        timeout_ms = 0;
    if (w->fd >= 0) {
        struct pollfd p = {w->fd, POLLIN, 0};
        int r = poll(&p, 1, timeout_ms);
        if (r <= 0) {
            if (r < 0 && errno != EINTR)
                to_polling(w); /* cannot happen with a valid descriptor; poll from now on */
            return 0;
        }
        /* Drains the queued events: what changed is looked at by the caller, not here. */
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool any = false;
        for (;;) {
            ssize_t got = read(w->fd, buf, sizeof(buf));
            if (got > 0) {
                any = true;
                continue;
            }
            if (got < 0 && errno == EINTR)
                continue;
            break; /* EAGAIN: drained */
        }
        if (!any) /* readable but nothing read (an error): poll from now on */
            to_polling(w);
        return any ? 1 : 0;
    }
    int64_t end = mono_ns() + (int64_t)timeout_ms * 1000000LL;
    for (;;) {
        int64_t now = mono_ns();
        int64_t due = w->last_poll_ns + (int64_t)w->poll_ms * 1000000LL;
        if (now >= due) {
            w->last_poll_ns = now;
            if (poll_changed(w))
                return 1;
            continue;
        }
        if (now >= end)
            return 0;
        if (!nap_ns(S3L_MIN(due, end) - now))
            return 0; /* a signal: the caller looks at a stop request */
    }
}

void s3l__os_watch_free(struct s3l__os_watch *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    for (size_t i = 0; i < w->n; i++) {
        s3l_free(w->v[i].path);
        s3l_free(w->v[i].dir);
    }
    s3l_free(w->v);
    s3l_free(w);
}
