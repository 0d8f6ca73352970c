/*
 * s3land pipe's state file and input (cmd_pipe.c is the command). The state, one JSON object
 * written atomically through s3l_sink_state_save: {"version": 1, "statement_sha256", "factory",
 * "input", "offset", "checkpoint", "records", "run", "url", "committables": [hex]}; the input,
 * read in
 * chunks, a line at a time, resumed at the state's offset. gc --uploads reads states too
 * (cli_pipe_state_view).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pipe.h"

int64_t cli_pipe_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cli_pipe_state_path(struct pipe *p)
{
    if (p->a->state) {
        snprintf(p->state_path, sizeof(p->state_path), "%s", p->a->state);
        return 0;
    }
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/')
        snprintf(p->state_path, sizeof(p->state_path), "%s/s3land/pipe-%s.json", xdg, p->st.sha);
    else if (home && *home)
        snprintf(p->state_path, sizeof(p->state_path), "%s/.local/state/s3land/pipe-%s.json",
                 home, p->st.sha);
    else
        return cli_usage(p->c, "pipe", "neither $XDG_STATE_HOME nor $HOME is set: give --state");
    return 0;
}

void cli_pipe_hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    out[2 * n] = 0;
}

static int unhex(const char *s, uint8_t **out, size_t *len)
{
    size_t n = strlen(s);
    if (n % 2 || strspn(s, "0123456789abcdef") != n)
        return -1;
    uint8_t *b = malloc(n / 2 + 1);
    if (!b)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        b[i] = (uint8_t)v;
    }
    *out = b;
    *len = n / 2;
    return 0;
}

/* Writes the state (the commit point of a checkpoint). Returns 0 or the exit code. */
int cli_pipe_save_state(struct pipe *p)
{
    struct state *st = &p->st;
    json_t *cm = json_array();
    char *h = st->cmt ? malloc(2 * st->cmt_len + 1) : NULL;
    if (h) {
        cli_pipe_hex(st->cmt, st->cmt_len, h);
        json_array_append_new(cm, json_string(h));
    }
    free(h);
    if (st->cmt && json_array_size(cm) != 1) { /* never a state that forgets its committable */
        json_decref(cm);
        return cli_fail(p->c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    }
    /* url: the sink's store root, by which gc --uploads tells the states of its destination. */
    json_t *o = json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:s, s:o}", "version", 1,
                          "statement_sha256", st->sha, "factory", st->factory, "input",
                          st->input, "offset", (json_int_t)st->offset, "checkpoint",
                          (json_int_t)st->checkpoint, "records", (json_int_t)st->records, "run",
                          st->run, "url", p->url ? p->url : "", "committables", cm);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    if (!text)
        return cli_fail(p->c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    struct s3l_error err = {0};
    int rc = s3l_sink_state_save(p->state_path, text, strlen(text), &err);
    json_free_t jfree;
    json_get_alloc_funcs(NULL, &jfree); /* the free matching jansson's allocator */
    jfree(text);
    if (rc)
        return cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION);
    return 0;
}

/* Reads an existing state into p->st; *found false when there is none. */
int cli_pipe_load_state(struct pipe *p, bool *found)
{
    uint8_t *data = NULL;
    size_t len = 0;
    struct s3l_error err = {0};
    *found = false;
    int rc = s3l_sink_state_load(p->state_path, STATE_MAX, &data, &len, &err);
    if (rc == S3L_ENOT_FOUND)
        return 0;
    if (rc)
        return cli_fail(p->c, rc, &err, S3L_SIDE_CONFIG);
    json_error_t je;
    json_t *o = json_loadb((const char *)data, len, 0, &je);
    s3l_free(data);
    json_int_t ver = 0, off = -1, ck = -1, rec = -1;
    const char *sha = NULL, *fac = NULL, *in = NULL, *run = NULL;
    json_t *cm = NULL;
    if (!o || json_unpack(o, "{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:o}", "version", &ver,
                          "statement_sha256", &sha, "factory", &fac, "input", &in, "offset",
                          &off, "checkpoint", &ck, "records", &rec, "run", &run, "committables",
                          &cm) != 0 ||
        ver != 1 || off < 0 || ck < 0 || rec < 0 || !json_is_array(cm) ||
        json_array_size(cm) > 1 || (json_array_size(cm) == 1 &&
                                    (!json_is_string(json_array_get(cm, 0)) ||
                                     unhex(json_string_value(json_array_get(cm, 0)), &p->st.cmt,
                                           &p->st.cmt_len) != 0))) {
        json_decref(o);
        return cli_usage(p->c, "pipe", "%s: not a pipe state file (version 1), or damaged",
                         p->state_path);
    }
    int ex = 0;
    if (strcmp(fac, p->st.factory) != 0)
        ex = cli_usage(p->c, "pipe", "%s is the state of a %s, not of this %s: give another "
                                     "--state", p->state_path, fac, p->st.factory);
    else if (strcmp(in, p->st.input) != 0)
        ex = cli_usage(p->c, "pipe", "%s is the state of input %s, not %s: give another --state",
                       p->state_path, in, p->st.input);
    if (!ex) {
        p->st.offset = (uint64_t)off;
        p->st.checkpoint = (uint64_t)ck;
        p->st.records = (uint64_t)rec;
        snprintf(p->st.run, sizeof(p->st.run), "%s", run);
        *found = true;
    }
    (void)sha; /* a state named on the command line may follow an edited statement */
    json_decref(o);
    return ex;
}

/* Fills the chunk; R_IDLE when no byte came within timeout_ms (streams only). */
static int fill(struct reader *r, int timeout_ms)
{
    if (r->stream) {
        struct pollfd pf = {r->fd, POLLIN, 0};
        int n = poll(&pf, 1, timeout_ms);
        if (n == 0 || (n < 0 && errno == EINTR))
            return R_IDLE;
    }
    ssize_t got;
    do
        got = read(r->fd, r->chunk, sizeof(r->chunk));
    while (got < 0 && errno == EINTR && !cli_stop_signal);
    if (got < 0)
        return errno == EINTR ? R_IDLE : -errno;
    r->pos = 0;
    r->len = (size_t)got;
    if (got == 0)
        r->eof = true;
    return R_LINE;
}

/* The next line into r->line (with its "\n"); at the end, the last bytes without one (R_LINE
 * with no "\n") then R_END. Negative: errno; -EFBIG: a line over MAX_LINE. */
int cli_pipe_next_line(struct reader *r, int timeout_ms)
{
    if (r->taken)
        r->line_len = 0;
    r->taken = false;
    for (;;) {
        if (r->pos == r->len) {
            if (r->eof) {
                r->taken = true;
                return r->line_len ? R_LINE : R_END;
            }
            int rc = fill(r, timeout_ms);
            if (rc != R_LINE)
                return rc; /* the partial line stays in r->line: the next call goes on */
            continue;
        }
        char *nl = memchr(r->chunk + r->pos, '\n', r->len - r->pos);
        size_t take = nl ? (size_t)(nl - (r->chunk + r->pos)) + 1 : r->len - r->pos;
        if (r->line_len + take > MAX_LINE)
            return -EFBIG;
        if (r->line_len + take > r->line_cap) {
            size_t cap = (r->line_len + take) * 2;
            char *b = realloc(r->line, cap);
            if (!b)
                return -ENOMEM;
            r->line = b;
            r->line_cap = cap;
        }
        memcpy(r->line + r->line_len, r->chunk + r->pos, take);
        r->line_len += take;
        r->pos += take;
        if (nl) {
            r->line_no++;
            r->taken = true;
            return R_LINE;
        }
    }
}

/* Opens the input at the state's offset: a file by seeking (refused when it is shorter than the
 * offset: rotated or truncated), stdin by dropping the bytes the state covers past
 * --stdin-offset. */

int cli_pipe_open_input(struct pipe *p, struct reader *r)
{
    struct args *a = p->a;
    uint64_t off = p->st.offset;
    r->name = p->st.input;
    if (strcmp(p->st.input, "-") == 0) {
        r->fd = STDIN_FILENO;
        r->stream = true;
        int64_t n = a->stdin_offset;
        if (n > (int64_t)off) {
            struct s3l_error e = {0};
            s3l_error_set(&e, S3L_EINVALID_INPUT,
                          "stdin starts at byte offset %lld (--stdin-offset) but the state (%s) "
                          "covers it only up to offset %llu: the bytes between would be lost; "
                          "resend from offset %llu or earlier",
                          (long long)n, p->state_path, (unsigned long long)off,
                          (unsigned long long)off);
            return cli_fail(p->c, e.code, &e, S3L_SIDE_INPUT);
        }
        uint64_t skip = n < 0 ? 0 : off - (uint64_t)n; /* without it: stdin starts at off */
        p->offset = off;
        while (skip > 0 && !cli_stop_signal) {
            int rc = fill(r, -1);
            if (rc == R_IDLE) /* a signal: the chunk was not refilled */
                continue;
            if (rc < 0 || r->eof)
                break;
            size_t k = r->len < skip ? r->len : (size_t)skip;
            r->pos = k;
            skip -= k;
        }
        return 0;
    }
    r->fd = open(p->st.input, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    struct s3l_error e = {0};
    if (r->fd < 0 || fstat(r->fd, &sb) != 0) {
        s3l_error_set_errno(&e, errno == ENOENT ? S3L_ENOT_FOUND : S3L_EIO, errno, "input %s",
                            p->st.input);
        return cli_fail(p->c, e.code, &e, S3L_SIDE_INPUT);
    }
    r->stream = !S_ISREG(sb.st_mode);
    if (!r->stream && (uint64_t)sb.st_size < off) {
        s3l_error_set(&e, S3L_EINVALID_INPUT,
                      "input %s holds %llu bytes, fewer than the offset %llu the state (%s) "
                      "recorded: it was rotated or truncated; refused, not re-read",
                      p->st.input, (unsigned long long)sb.st_size, (unsigned long long)off,
                      p->state_path);
        return cli_fail(p->c, e.code, &e, S3L_SIDE_INPUT);
    }
    if (off && (r->stream || lseek(r->fd, (off_t)off, SEEK_SET) < 0)) {
        s3l_error_set(&e, S3L_EINVALID_INPUT, "input %s cannot be resumed at offset %llu: it "
                                              "is not a regular file", p->st.input,
                      (unsigned long long)off);
        return cli_fail(p->c, e.code, &e, S3L_SIDE_INPUT);
    }
    p->offset = off;
    return 0;
}

int cli_pipe_state_view(const char *path, struct cli_pipe_state_view *v, char *why, size_t cap)
{
    memset(v, 0, sizeof(*v));
    uint8_t *data = NULL;
    size_t len = 0;
    struct s3l_error err = {0};
    int rc = s3l_sink_state_load(path, STATE_MAX, &data, &len, &err);
    if (rc) {
        snprintf(why, cap, "%s", err.message[0] ? err.message : s3l_strerror(rc));
        return -1;
    }
    json_error_t je;
    json_t *o = json_loadb((const char *)data, len, 0, &je);
    s3l_free(data);
    if (!o) {
        snprintf(why, cap, "not JSON (line %d, column %d: %s)", je.line, je.column, je.text);
        return -1;
    }
    /* The url first: a damaged state of another destination is told apart by it. */
    json_t *u = json_object_get(o, "url");
    if (json_is_string(u) && *json_string_value(u) && !(v->url = strdup(json_string_value(u)))) {
        json_decref(o);
        snprintf(why, cap, "out of memory");
        return -1;
    }
    json_int_t ver = 0, off = -1, ck = -1, rec = -1;
    const char *sha = NULL, *fac = NULL, *in = NULL, *run = NULL;
    json_t *cm = NULL;
    int bad = json_unpack_ex(o, &je, 0, "{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:o}",
                             "version", &ver, "statement_sha256", &sha, "factory", &fac, "input",
                             &in, "offset", &off, "checkpoint", &ck, "records", &rec, "run", &run,
                             "committables", &cm);
    if (bad)
        snprintf(why, cap, "not a pipe state (version 1): %s", je.text);
    else if (ver != 1)
        snprintf(why, cap, "version %lld, not 1", (long long)ver);
    else if (off < 0 || ck < 0 || rec < 0)
        snprintf(why, cap, "a negative offset, checkpoint or records");
    else if (!json_is_array(cm) || json_array_size(cm) > 1)
        snprintf(why, cap, "committables is not an array of at most one");
    bad = bad || ver != 1 || off < 0 || ck < 0 || rec < 0 || !json_is_array(cm) ||
          json_array_size(cm) > 1;
    v->checkpoint = bad ? 0 : (uint64_t)ck;
    if (!bad && json_array_size(cm) == 1) {
        json_t *h = json_array_get(cm, 0);
        uint8_t *b = NULL;
        size_t n = 0;
        if (!json_is_string(h) || unhex(json_string_value(h), &b, &n) != 0) {
            snprintf(why, cap, "committables[0] is not lowercase hex");
            bad = 1;
        } else if ((rc = s3l_committable_decode(b, n, &v->cmt, &err)) != 0) {
            snprintf(why, cap, "committables[0]: %s",
                     err.message[0] ? err.message : s3l_strerror(rc));
            bad = 1;
        }
        free(b);
    }
    json_decref(o);
    if (bad) {
        cli_pipe_state_view_cleanup(v);
        return -1;
    }
    return 0;
}

void cli_pipe_state_view_cleanup(struct cli_pipe_state_view *v)
{
    s3l_committable_cleanup(&v->cmt);
    /* The url is kept: a damaged state's destination is still told by it. */
}
