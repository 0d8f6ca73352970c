/*
 * twopc_engine: a stream engine in miniature around the two-phase sink (include/s3l/ndjson_sink.h),
 * so that shell tests run it a process per run, kill it anywhere and run it again. It emits the
 * sequence-numbered records 1..N, one per line ("<seq, 12 digits> " padded with 'x' to
 * --record-bytes, newline included), checkpointing every --interval records:
 *
 *   begin(ckpt), write the interval's records, prepare(ckpt)  -> committable bytes
 *   save the state: offset after the interval, ckpt, the committable pending   (the checkpoint)
 *   commit(committable); save the state without it                            (notify-complete)
 *
 * At start it loads the state (--state FILE; none: offset 1, checkpoint 0), commits every
 * committable it holds (recovery: "recovered K"), then resumes at the saved offset with the next
 * checkpoint id. The state file is text ("offset O", "ckpt C", "pending HEX" lines), written to a
 * temp file, fsynced and renamed. Output lines: "prepared C KEY
 * RECORDS UPLOADID" (or "prepared C empty"), "committed C", "done". --empty-every E makes every
 * E-th checkpoint an empty interval. --abort-ckpt C: checkpoint C is prepared then abandoned
 * (abort(committable); its records are replayed in the next one) to show an abort does not fail
 * the job. Exit status 1 with the error on stderr when a call fails. Crash points come from
 * tests/support/crash_store.c (S3L_CRASH_POINT=after_prepare|before_commit|mid_complete[:n]).
 * Usage: twopc_engine --url URL --state FILE --records N --interval K [--record-bytes B]
 *        [--prefix P] [--part-size BYTES] [--subtask I --parallelism N] [--endpoint URL]
 *        [--region R] [--empty-every E] [--abort-ckpt C]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash_store.h"
#include "s3l/ndjson_sink.h"
#include "s3_env.h"
#include "s3l/store.h"

#define MAX_PENDING 64

struct state {
    unsigned long long offset, ckpt;
    int n_pending;
    uint8_t *pending[MAX_PENDING];
    size_t pending_len[MAX_PENDING];
};

static int die(const char *what, const struct s3l_error *err)
{
    fprintf(stderr, "twopc_engine: %s: %s (%s)\n", what, err->message, s3l_error_name(err->code));
    return 1;
}

static int load(const char *path, struct state *st)
{
    memset(st, 0, sizeof(*st));
    st->offset = 1;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[65536];
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "offset %llu", &st->offset) == 1 ||
            sscanf(line, "ckpt %llu", &st->ckpt) == 1)
            continue;
        if (strncmp(line, "pending ", 8) == 0 && st->n_pending < MAX_PENDING) {
            const char *h = line + 8;
            size_t n = strcspn(h, "\n") / 2;
            uint8_t *b = malloc(n ? n : 1);
            for (size_t i = 0; i < n; i++)
                sscanf(h + 2 * i, "%2hhx", &b[i]);
            st->pending[st->n_pending] = b;
            st->pending_len[st->n_pending++] = n;
        }
    }
    fclose(f);
    return 0;
}

static int save(const char *path, const struct state *st)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "offset %llu\nckpt %llu\n", st->offset, st->ckpt);
    for (int i = 0; i < st->n_pending; i++) {
        fputs("pending ", f);
        for (size_t j = 0; j < st->pending_len[i]; j++)
            fprintf(f, "%02x", st->pending[i][j]);
        fputc('\n', f);
    }
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static void drop_pending(struct state *st)
{
    for (int i = 0; i < st->n_pending; i++)
        free(st->pending[i]);
    st->n_pending = 0;
}

/* The record of sequence number seq, B bytes with its newline. */
static size_t record(unsigned long long seq, size_t b, char *out)
{
    int n = snprintf(out, b + 1, "%012llu ", seq);
    size_t len = b > (size_t)n + 1 ? b : (size_t)n + 1;
    memset(out + n, 'x', len - 1 - (size_t)n);
    out[len - 1] = '\n';
    return len;
}

struct opts {
    const char *url, *state;
    unsigned long long records, interval, empty_every, abort_ckpt;
    size_t record_bytes;
};

/* One checkpoint interval: records offset.. (none when empty), prepared and checkpointed. */
static int one_interval(struct s3l_sink *s, const struct opts *o, struct state *st, bool empty,
                        char *buf)
{
    struct s3l_error err = {0};
    unsigned long long ckpt = st->ckpt + 1, end = st->offset;
    if (s3l_sink_begin(s, ckpt, &err) != 0)
        return die("begin", &err);
    for (; !empty && end < st->offset + o->interval && end <= o->records; end++) {
        size_t n = record(end, o->record_bytes, buf);
        if (s3l_sink_write(s, buf, n, &err) != 0)
            return die("write", &err);
    }
    uint8_t *c = NULL;
    size_t clen = 0;
    if (s3l_sink_prepare(s, ckpt, &c, &clen, &err) != 0)
        return die("prepare", &err);
    struct s3l_committable d;
    if (s3l_committable_decode(c, clen, &d, &err) != 0)
        return die("decode", &err);
    if (d.kind == S3L_COMMITTABLE_EMPTY)
        printf("prepared %llu empty\n", ckpt);
    else
        printf("prepared %llu %s %llu %s\n", ckpt, d.key, (unsigned long long)d.records,
               d.upload_id);
    s3l_committable_cleanup(&d);
    fflush(stdout);
    if (ckpt == o->abort_ckpt) { /* abandoned: dropped; its records go into the next one */
        if (s3l_sink_abort(s, c, clen, &err) != 0)
            return die("abort", &err);
        printf("aborted %llu\n", ckpt);
        free(c);
        st->ckpt = ckpt;
        return save(o->state, st) ? die("save state", &err) : 0;
    }
    st->ckpt = ckpt;
    st->offset = end;
    st->pending[0] = c;
    st->pending_len[0] = clen;
    st->n_pending = 1;
    if (save(o->state, st) != 0)
        return die("save state", &err);
    if (s3l_sink_commit(s, c, clen, &err) != 0)
        return die("commit", &err);
    drop_pending(st);
    if (save(o->state, st) != 0)
        return die("save state", &err);
    printf("committed %llu\n", ckpt);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.record_bytes = 100};
    struct s3l_store_options so = {.version = S3L_STORE_OPTIONS_VERSION, .create = true};
    struct s3l_sink_options so2 = {.version = S3L_SINK_OPTIONS_VERSION,
                                   .delivery = S3L_SINK_EXACTLY_ONCE};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--url"))
            o.url = v;
        else if (!strcmp(a, "--state"))
            o.state = v;
        else if (!strcmp(a, "--records"))
            o.records = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--interval"))
            o.interval = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--record-bytes"))
            o.record_bytes = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--empty-every"))
            o.empty_every = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--abort-ckpt"))
            o.abort_ckpt = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--prefix"))
            so2.key_prefix = v;
        else if (!strcmp(a, "--part-size"))
            so2.part_size = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--subtask"))
            so2.subtask = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--parallelism"))
            so2.parallelism = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--endpoint"))
            so.endpoint = v;
        else if (!strcmp(a, "--region"))
            so.region = v;
        else {
            fprintf(stderr, "twopc_engine: unknown option %s\n", a);
            return 2;
        }
    }
    if (!o.url || !o.state || !o.interval || o.record_bytes < 14 || o.record_bytes > 1 << 20) {
        fprintf(stderr, "twopc_engine: --url, --state, --records, --interval needed\n");
        return 2;
    }
    struct state st;
    load(o.state, &st);
    /* Linking crash_store.c (its constructor arms S3L_CRASH_POINT) takes a reference to it. */
    if (getenv("S3L_CRASH_POINT"))
        fprintf(stderr, "twopc_engine: crash point %s armed (%llu ops)\n",
                getenv("S3L_CRASH_POINT"), (unsigned long long)s3l_test_crash_ops());
    struct s3l_error err = {0};
    struct s3l_store *store = NULL;
    struct s3l_test_s3_store env; /* the environment, read as the CLI reads it */
    if (s3l_test_s3_store_env(&env) != 0) {
        perror("S3LAND_TRACE");
        return 1;
    }
    so.s3 = &env.s3; /* --endpoint and --region above win over the environment's */
    if (s3l_store_open(o.url, &so, &store, &err) != 0)
        return die("open store", &err);
    so2.store = store;
    struct s3l_sink *s = NULL;
    if (s3l_sink_open(&so2, &s, &err) != 0)
        return die("open sink", &err);
    if (st.n_pending) { /* recovery: what the restored checkpoint holds is committed again */
        struct s3l_committable_bytes g[MAX_PENDING];
        for (int i = 0; i < st.n_pending; i++)
            g[i] = (struct s3l_committable_bytes){st.pending[i], st.pending_len[i]};
        size_t done = 0;
        if (s3l_sink_commit_group(s, g, (size_t)st.n_pending, &done, &err) != 0)
            return die("recovery commit", &err);
        printf("recovered %d\n", st.n_pending);
        drop_pending(&st);
        if (save(o.state, &st) != 0)
            return die("save state", &err);
    }
    char *buf = malloc(o.record_bytes + 1);
    while (st.offset <= o.records) {
        bool empty = o.empty_every && (st.ckpt + 1) % o.empty_every == 0;
        if (one_interval(s, &o, &st, empty, buf) != 0)
            return 1;
    }
    free(buf);
    if (s3l_sink_close(s, &err) != 0)
        return die("close", &err);
    printf("done\n");
    s3l_sink_free(s);
    s3l_store_free(store);
    return 0;
}
