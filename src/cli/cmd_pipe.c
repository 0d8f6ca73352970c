/*
 * `s3land pipe`: streams the lines of a file or of stdin into one NDJSON object sink of the
 * raw-object connector (issue 13, item 5), through the public sink API
 * (include/s3l/ndjson_sink.h), as a stream engine would drive it. The sink is bound by SQL
 * (--sql FILE, s3l_config_add_sql) or by a Sink document (--config FILE).
 *
 * Every --commit-interval the interval is checkpointed: the two-phase sink prepares the
 * interval's upload, the state file records the committable with the input offset it covers (the
 * commit point), then the committable is committed and the state says so; the text sink puts its
 * buffer as a part, then the state records the offset. The state file (--state, or one per
 * statement under $XDG_STATE_HOME/s3land/) is written atomically (s3l_sink_state_save). On a
 * restart pipe first commits the committables the state holds (idempotent: settled by a HEAD of
 * the key), then resumes the input at the recorded offset: a file by seeking, stdin by dropping
 * the bytes before it (--stdin-offset says where the resent stream starts, as for write).
 * docs/cli.md ("pipe") has the guarantees; the state's format is in docs/internals/sink.md.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "pipe.h"
#include "s3l/store.h"

static const char pipe_help[] =
    "Usage: s3land pipe (--sql FILE | --config FILE) [--state FILE] [--commit-interval D]\n"
    "                   [--stdin-offset N] [OPTIONS] [INPUT]\n"
    "\n"
    "Streams the lines of INPUT (a file; '-' or none: stdin) into the NDJSON object sink that\n"
    "FILE binds: SQL (CREATE TABLE t (line STRING) WITH (connector = 's3', bucket = ...); see\n"
    "`s3land sql --help`) or a kind: Sink document (docs/config.md). delivery_guarantee\n"
    "'exactly_once' selects the two-phase sink (one object per checkpoint, published by\n"
    "CompleteMultipartUpload), anything else the rolling text sink (part objects).\n"
    "\n"
    "Every interval the sink is checkpointed (two-phase: prepare, the state file, commit; text:\n"
    "the buffered part is put, then the state file), and the checkpoint is printed: its id, its\n"
    "records and the input offset it covers. A restart with the same state first commits what\n"
    "the state holds, then resumes the input at the recorded offset. Exit 0 only once the last\n"
    "interval is committed.\n"
    "\n"
    "  --sql FILE             the binding, as SQL ('-': stdin); one sink\n"
    "  --config FILE          the binding, as a Sink document (YAML or JSON)\n"
    "  --secrets-dir DIR      where a Sink document's { secret: NAME } files are\n"
    "  --state FILE           the state file (default: $XDG_STATE_HOME/s3land/, else\n"
    "                         ~/.local/state/s3land/, pipe-<SHA-256 of FILE's text>.json)\n"
    "  --commit-interval D    checkpoint this often (default 1m; 500ms, 30s, 2m)\n"
    "  --stdin-offset N       stdin starts at byte N of the original stream: bytes the state\n"
    "                         already covers are dropped; N past them is refused (exit 2)\n"
    "  -q, --quiet            errors only     --json   one JSON event a line on stdout\n"
    "\n"
    "S3: the binding's region and endpoint_override (path-style then) unless --region or\n"
    "--endpoint say otherwise; the credentials as for write:\n"
    "%s%s"
    "Exit codes: 0 done, every interval committed; 1 usage, an invalid binding, a second sink\n"
    "beside a two-phase sink, a state file of another statement; 2 the input (missing, shorter\n"
    "than the recorded offset, a line over 16 MiB); 3 the store; 6 a store without what the sink\n"
    "needs (put-if-absent, staged uploads); 8 access refused; 130/143 stopped by a signal after\n"
    "committing.\n";

/* ---- arguments ---- */

enum { O_SQL = 1, O_CONFIG, O_STATE, O_INTERVAL, O_STDIN_OFFSET, O_SECRETS_DIR, O_JSON };

static int parse_args(struct cli *c, int argc, char **argv, struct args *a, bool *help)
{
    static const struct option opts[] = {
        {"sql", required_argument, NULL, O_SQL},
        {"config", required_argument, NULL, O_CONFIG},
        {"state", required_argument, NULL, O_STATE},
        {"commit-interval", required_argument, NULL, O_INTERVAL},
        {"stdin-offset", required_argument, NULL, O_STDIN_OFFSET},
        {"secrets-dir", required_argument, NULL, O_SECRETS_DIR},
        {"json", no_argument, NULL, O_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        CLI_S3_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int opt;
    uint64_t n;
    while ((opt = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
        int r = cli_s3_option(c, "pipe", opt, &a->s3);
        if (r >= 0) {
            if (r)
                return r;
            continue;
        }
        switch (opt) {
        case O_SQL:
        case O_CONFIG:
            if (a->n_sql + a->n_config == MAX_SINKS)
                return cli_usage(c, "pipe", "more than %d --sql and --config files", MAX_SINKS);
            if (opt == O_SQL)
                a->sql[a->n_sql++] = optarg;
            else
                a->config[a->n_config++] = optarg;
            break;
        case O_STATE:
            a->state = optarg;
            break;
        case O_INTERVAL:
            if (!cli_parse_duration(optarg, &a->interval_ns) || a->interval_ns <= 0)
                return cli_usage(c, "pipe", "--commit-interval %s: expected a duration above 0 "
                                            "(500ms, 30s, 2m)", optarg);
            break;
        case O_STDIN_OFFSET:
            if (!cli_parse_u64(optarg, &n) || n > INT64_MAX)
                return cli_usage(c, "pipe", "--stdin-offset %s: expected a byte offset (0 or "
                                            "more)", optarg);
            a->stdin_offset = (int64_t)n;
            break;
        case O_SECRETS_DIR:
            a->secrets.dir = optarg;
            break;
        case O_JSON:
        case 'q':
            cli_common_flag(c, opt == 'q' ? "--quiet" : "--json");
            break;
        case 'h':
            *help = true;
            return 0;
        default:
            return cli_bad_option(c, "pipe", opts, argv[optind - 1]);
        }
    }
    if (optind < argc)
        a->input = argv[optind++];
    if (optind < argc)
        return cli_usage(c, "pipe", "unexpected argument %s (one INPUT)", argv[optind]);
    if (!a->n_sql && !a->n_config)
        return cli_usage(c, "pipe", "the sink's binding is needed: --sql FILE or --config FILE");
    if (a->stdin_offset >= 0 && a->input && strcmp(a->input, "-") != 0)
        return cli_usage(c, "pipe", "--stdin-offset is for stdin; a file resumes from the state");
    return 0;
}

/* ---- the binding ---- */

/* "FILE #N": where a sink was stated (its statement or document number). */
static void where(const struct s3l_config_doc *d, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s #%zu", d->file, d->index);
}

/* The seed's rule (issue 13, item 3): a two-phase sink is the only sink of its pipeline. */
static int one_sink(struct cli *c, const struct s3l_config *cfg, const struct s3l_config_doc **out)
{
    const struct s3l_config_doc *sinks[2] = {NULL, NULL}, *twopc = NULL;
    size_t n = 0;
    for (size_t i = 0; i < s3l_config_count(cfg); i++) {
        const struct s3l_config_doc *d = s3l_config_doc(cfg, i);
        char w[600];
        where(d, w, sizeof(w));
        if (d->kind != S3L_CONFIG_SINK)
            return cli_usage(c, "pipe", "%s is a %s document; pipe takes Sink documents",
                             w, d->kind == S3L_CONFIG_PIPELINE ? "Pipeline" : "Destination");
        if (n < 2)
            sinks[n] = d;
        n++;
        if (!twopc && cli_sink_exactly_once(d->sink))
            twopc = d;
    }
    if (n == 0)
        return cli_usage(c, "pipe", "no sink: the files bind none");
    if (n == 1) {
        *out = sinks[0];
        return 0;
    }
    const struct s3l_config_doc *other = twopc == sinks[0] ? sinks[1] : sinks[0];
    char w1[600], w2[600];
    if (!twopc) {
        where(sinks[0], w1, sizeof(w1));
        where(sinks[1], w2, sizeof(w2));
        return cli_usage(c, "pipe", "two sinks, %s (%s) and %s (%s): pipe streams into one "
                                    "sink; run a pipe for each", sinks[0]->name, w1,
                         sinks[1]->name, w2);
    }
    where(twopc, w1, sizeof(w1));
    where(other, w2, sizeof(w2));
    return cli_usage(c, "pipe",
                     "sink %s (%s) beside the two-phase sink %s (%s, delivery_guarantee "
                     "'exactly_once') is refused: the two-phase sink stages its handle (the "
                     "interval's multipart upload) in the checkpoint it owns, so it must be the "
                     "only sink of its pipeline; give the other sink a pipe of its own",
                     other->name, w2, twopc->name, w1);
}

/* Loads the files into cfg and hashes their text (the state file's default name). */
static int load_binding(struct pipe *p, struct s3l_config *cfg)
{
    struct args *a = p->a;
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    if (!h || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(h);
        return cli_fail(p->c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    }
    struct cli_secret_src *src = &a->secrets;
    struct s3l_config_secrets sec = {cli_secret_lookup, src};
    struct s3l_config_options co = {S3L_CONFIG_OPTIONS_VERSION, &sec};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < a->n_sql + a->n_config; i++) {
        bool sql = i < a->n_sql;
        const char *f = sql ? a->sql[i] : a->config[i - a->n_sql];
        char *text = NULL;
        size_t len = 0;
        int ex = cli_sql_read(p->c, "pipe", f, &text, &len);
        if (ex) {
            EVP_MD_CTX_free(h);
            return ex;
        }
        EVP_DigestUpdate(h, text, len);
        struct s3l_error err = {0};
        if (sql)
            rc = s3l_config_add_sql(cfg, text, len, strcmp(f, "-") ? f : "stdin", &co, &err);
        else
            rc = s3l_config_add_text(cfg, text, len, f, &co, &err);
        free(text);
        if (rc == S3L_ENOMEM) {
            EVP_MD_CTX_free(h);
            return cli_fail(p->c, rc, &err, S3L_SIDE_CONFIG);
        }
    }
    uint8_t md[32];
    unsigned mdn = 0;
    EVP_DigestFinal_ex(h, md, &mdn);
    EVP_MD_CTX_free(h);
    if (rc) {
        cli_sql_problems(p->c, cfg);
        return CLI_EX_USAGE;
    }
    cli_pipe_hex(md, sizeof(md), p->st.sha);
    return one_sink(p->c, cfg, &p->doc);
}

/* ---- the store and the sink ---- */

static int open_store(struct pipe *p)
{
    const struct s3l_config_sink *k = p->doc->sink;
    struct cli_s3 *s3 = &p->a->s3;
    const char *bucket = k->bucket.value;
    bool local = strncmp(bucket, "file://", 7) == 0;
    size_t n = strlen(bucket) + 8;
    p->url = malloc(n);
    if (!p->url)
        return cli_fail(p->c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    snprintf(p->url, n, "%s%s", local ? "" : "s3://", bucket);
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    so.create = local;
    if (!local) {
        if (!s3->region)
            s3->region = k->region.value;
        if (!s3->endpoint && k->endpoint_override.value) {
            s3->endpoint = k->endpoint_override.value;
            if (!s3->path_style)
                s3->path_style = 1; /* the seed: endpoint_override means path-style */
        }
        int ex = cli_access_resolve(p->c, &s3->access, &s3->region, &s3->endpoint);
        if (ex)
            return ex;
        cli_s3_store_options(s3, &so);
        if (k->access_key_id.value && k->secret_access_key.value) {
            memset(&s3->cfg, 0, sizeof(s3->cfg));
            s3->cfg.version = S3L_S3_CONFIG_VERSION;
            s3->cfg.path_style = s3->path_style;
            s3->cfg.access_key = k->access_key_id.value;
            s3->cfg.secret_key = k->secret_access_key.value;
            s3->cfg.session_token = k->session_token.value;
            cli_s3_trace(&s3->cfg);
            s3->opts.client = &s3->cfg;
            so.s3 = &s3->opts;
        }
    }
    struct s3l_error err = {0};
    int rc = s3l_store_open(p->url, &so, &p->store, &err);
    return rc ? cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION) : 0;
}

static int open_sink(struct pipe *p, bool restore)
{
    const struct s3l_config_sink *k = p->doc->sink;
    struct s3l_sink_options o = {0};
    o.version = S3L_SINK_OPTIONS_VERSION;
    o.store = p->store;
    o.delivery = p->twopc ? S3L_SINK_EXACTLY_ONCE : S3L_SINK_AT_MOST_ONCE;
    o.key_prefix = k->key_prefix.value;
    o.rollover_bytes = k->rollover_bytes;
    o.rollover_interval_ms = k->rollover_interval_ns / 1000000;
    o.content_type = k->content_type.value;
    /* run() refused a bad name before any I/O. */
    (void)s3l_sink_compression_parse(k->compression.value, &o.compression, NULL);
    o.part_size = k->part_size;
    o.restore = restore;
    struct s3l_error err = {0};
    int rc = s3l_sink_open(&o, &p->sink, &err);
    if (rc)
        return cli_fail(p->c, rc, &err, rc == S3L_EINVALID_CONFIG ? S3L_SIDE_CONFIG
                                                                  : S3L_SIDE_DESTINATION);
    return 0;
}

/* file://: the temp files of killed intervals in the key prefix's directory (kp[0..n)), those no
 * live process holds and changed more than a second ago (s3l_store_sweep's rule). */
static int sweep_orphans(struct pipe *p, const char *kp, size_t n)
{
    char prefix[1200];
    snprintf(prefix, sizeof(prefix), "%.*s%s", (int)n, kp, n ? "/" : "");
    uint64_t removed = 0;
    struct s3l_error err = {0};
    int rc = cli_sweep_stale(p->store, prefix, &removed, &err);
    if (rc && !p->c->quiet)
        fprintf(stderr, "%s: note: the temp files a killed run left under %s could not be "
                        "removed (%s); `gc` removes them\n", p->c->prog, *prefix ? prefix : "/",
                err.message);
    else if (removed && !p->c->quiet)
        fprintf(stderr, "%s: removed %llu temp file(s) a killed run left (never committed: "
                        "their records are read again)\n", p->c->prog,
                (unsigned long long)removed);
    return 0;
}

/* The listing's uploads (key, then upload id), kept to be aborted after it: a store takes no
 * other call from inside its listing callback. */
static int collect_upload(void *ctx, const struct s3l_pending_upload *u)
{
    int rc = cli_strings_add(ctx, u->key);
    return rc ? rc : cli_strings_add(ctx, u->upload_id);
}

/*
 * The uploads a killed run of this state left that no checkpoint holds: its interval's multipart
 * upload, begun at the interval's first record and never prepared, or prepared but killed before
 * the state recorded it. Nothing can publish them (their records are read again from the
 * recorded offset), so the restart aborts every upload of that run (keys
 * "<key_prefix>/sub0-<run>-", the run the state names) once the state's own committable is
 * committed. On file:// such an upload is a hidden temp file in the key prefix's directory: the
 * store's sweep removes those no live process holds (a killed interval's stayed, gc did not see
 * them either: found by a break-it run). A store that refuses the listing (no
 * s3:ListBucketMultipartUploads) is told, and pipe goes on: those uploads stay for
 * `gc --uploads` or the bucket's lifecycle rule.
 */
static int abort_orphans(struct pipe *p, const char *run)
{
    const struct s3l_config_sink *k = p->doc->sink;
    if (!*run)
        return 0;
    char prefix[1200];
    const char *kp = k->key_prefix.value ? k->key_prefix.value : "";
    size_t n = strlen(kp);
    while (n && kp[n - 1] == '/')
        n--;
    if (strncmp(p->url, "s3://", 5) != 0)
        return sweep_orphans(p, kp, n);
    snprintf(prefix, sizeof(prefix), "%.*s%ssub0-%s-", (int)n, kp, n ? "/" : "", run);
    /* Through the sink's own store: its client, credentials and ListMultipartUploads paging. */
    struct cli_strings ups = {0};
    struct s3l_error err = {0};
    int rc = s3l_store_list_uploads(p->store, prefix, collect_upload, &ups, &err);
    size_t aborted = 0;
    for (size_t i = 0; rc == 0 && i + 1 < ups.n; i += 2) /* a gone upload is aborted already */
        if ((rc = s3l_store_staged_abort(p->store, ups.v[i], ups.v[i + 1], &err)) == 0)
            aborted++;
    cli_strings_free(&ups);
    if (rc == S3L_ENOMEM && !err.message[0])
        s3l_error_set(&err, rc, "out of memory");
    if (rc && !p->c->quiet)
        fprintf(stderr, "%s: note: the uploads run %s left under %s could not be listed or "
                        "aborted (%s); they stay for `gc --uploads` or the bucket's lifecycle "
                        "rule\n", p->c->prog, run, prefix, err.message);
    else if (aborted && !p->c->quiet)
        fprintf(stderr, "%s: aborted %zu upload(s) the killed run %s left (never committed: "
                        "their records are read again)\n", p->c->prog, aborted, run);
    return 0;
}

/* ---- checkpoints ---- */

static void report(struct pipe *p, const char *event)
{
    struct cli *c = p->c;
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:I, s:I, s:I, s:I, s:s, s:s}", "event", event,
                                "checkpoint", (json_int_t)p->st.checkpoint, "records",
                                (json_int_t)p->iv_records, "offset", (json_int_t)p->st.offset,
                                "records_total", (json_int_t)p->st.records, "input",
                                p->st.input, "factory", p->st.factory));
    else if (!c->quiet)
        fprintf(stderr, "%s: checkpoint %llu, %llu record%s, input %s offset %llu\n", event,
                (unsigned long long)p->st.checkpoint, (unsigned long long)p->iv_records,
                p->iv_records == 1 ? "" : "s", p->st.input, (unsigned long long)p->st.offset);
}

/* Commits the state's pending committable (a restart's recovery, and each checkpoint's
 * second step), then records that nothing is pending. */
static int commit_pending(struct pipe *p)
{
    if (!p->st.cmt)
        return 0;
    struct s3l_error err = {0};
    int rc = s3l_sink_commit(p->sink, p->st.cmt, p->st.cmt_len, &err);
    if (rc)
        return cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION);
    s3l_free(p->st.cmt);
    p->st.cmt = NULL;
    p->st.cmt_len = 0;
    return cli_pipe_save_state(p);
}

/* Ends the begun interval: two-phase, prepare, the state (the commit point), commit; text, the
 * part put, then the state. */
static int checkpoint(struct pipe *p)
{
    if (!p->begun)
        return 0;
    struct s3l_error err = {0};
    uint8_t *c = NULL;
    size_t n = 0;
    int rc = p->twopc ? s3l_sink_prepare(p->sink, p->ckpt, &c, &n, &err)
                      : s3l_sink_flush(p->sink, &err);
    if (rc)
        return cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION);
    if (!p->twopc) { /* the text sink's prepare gives nothing to keep: it was flushed */
        rc = s3l_sink_prepare(p->sink, p->ckpt, &c, &n, &err);
        s3l_free(c);
        c = NULL;
        if (rc)
            return cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION);
    }
    p->begun = false;
    p->st.cmt = c;
    p->st.cmt_len = n;
    p->st.offset = p->offset;
    p->st.checkpoint = p->ckpt++;
    p->st.records += p->iv_records;
    int ex = cli_pipe_save_state(p);
    if (!ex)
        ex = commit_pending(p);
    if (ex)
        return ex;
    p->n_ckpts++;
    report(p, "committed");
    p->iv_records = 0;
    return 0;
}

/* One line (with its "\n", or the input's last bytes without one) into the sink. */
static int put_line(struct pipe *p, const char *line, size_t len)
{
    struct s3l_error err = {0};
    int rc = 0;
    if (!p->begun) {
        rc = s3l_sink_begin(p->sink, p->ckpt, &err);
        p->begun = rc == 0;
        p->iv_start_ns = cli_pipe_now_ns();
    }
    if (rc == 0)
        rc = s3l_sink_write(p->sink, line, len, &err);
    if (rc)
        return cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION);
    p->offset += len;
    p->iv_records++;
    return 0;
}

static int wait_ms(const struct pipe *p)
{
    if (!p->begun)
        return 1000;
    int64_t left = p->iv_start_ns + p->a->interval_ns - cli_pipe_now_ns();
    return left <= 0 ? 0 : left > 1000000000 ? 1000 : (int)(left / 1000000) + 1;
}

static bool due(const struct pipe *p)
{
    return p->begun && cli_pipe_now_ns() - p->iv_start_ns >= p->a->interval_ns;
}

/* The stream, line by line, checkpointing when an interval is due and at the end. */
static int stream(struct pipe *p, struct reader *r)
{
    for (;;) {
        int rc = cli_pipe_next_line(r, wait_ms(p));
        int ex = 0;
        if (rc == R_LINE)
            ex = put_line(p, r->line, r->line_len);
        else if (rc == R_IDLE && !p->twopc) {
            struct s3l_error err = {0};
            int prc = s3l_sink_poll(p->sink, &err); /* the text sink's rollover_interval */
            if (prc)
                ex = cli_fail(p->c, prc, &err, S3L_SIDE_DESTINATION);
        } else if (rc < 0) {
            struct s3l_error e = {0};
            if (rc == -EFBIG)
                s3l_error_set(&e, S3L_ETOO_LARGE, "input %s line %llu (offset %llu): over 16 MiB "
                                                  "without a newline", r->name,
                              (unsigned long long)r->line_no + 1, (unsigned long long)p->offset);
            else
                s3l_error_set_errno(&e, S3L_EIO, -rc, "reading input %s", r->name);
            ex = cli_fail(p->c, e.code, &e, S3L_SIDE_INPUT);
        }
        if (ex)
            return ex;
        if (rc == R_END || cli_stop_signal)
            return checkpoint(p);
        if (due(p) && (ex = checkpoint(p)) != 0)
            return ex;
    }
}

/* The run's summary: also after a stop by SIGINT or SIGTERM (exit 130 or 143), which ends
 * the run cleanly after its last checkpoint (it printed none before; found by a break-it run). */
static void summary(struct pipe *p, int ex)
{
    struct cli *c = p->c;
    bool stopped = cli_stop_signal && ex == 128 + (int)cli_stop_signal;
    if (c->json) {
        cli_emit_json(json_pack("{s:s, s:b, s:I, s:I, s:I, s:s, s:s, s:s, s:b}", "event", "end",
                                "ok", ex == 0, "checkpoints", (json_int_t)p->n_ckpts, "records",
                                (json_int_t)p->records, "offset", (json_int_t)p->st.offset,
                                "factory", p->st.factory, "url", p->url ? p->url : "", "state",
                                p->state_path, "stopped", stopped));
        return;
    }
    if (c->quiet || (ex && !stopped))
        return;
    const char *kp = p->doc->sink->key_prefix.value;
    fprintf(stderr, "pipe: %llu record%s from %s in %llu checkpoint%s into %s at %s/%s; input "
                    "offset %llu; state %s%s\n",
            (unsigned long long)p->records, p->records == 1 ? "" : "s", p->st.input,
            (unsigned long long)p->n_ckpts, p->n_ckpts == 1 ? "" : "s", p->st.factory, p->url,
            kp ? kp : "", (unsigned long long)p->st.offset, p->state_path,
            !stopped                    ? ""
            : cli_stop_signal == SIGINT ? " (stopped by SIGINT: what was read is checkpointed)"
                                        : " (stopped by SIGTERM: what was read is checkpointed)");
}

/* After the binding: the state, the store, the sink, recovery, the stream. */
static int run(struct pipe *p)
{
    bool found = false;
    const struct s3l_config_sink *k = p->doc->sink;
    enum s3l_sink_compression comp;
    struct s3l_error cerr = {0};
    if (s3l_sink_compression_parse(k->compression.value, &comp, &cerr)) /* before any I/O */
        return cli_fail(p->c, S3L_EINVALID_CONFIG, &cerr, S3L_SIDE_CONFIG);
    if (p->twopc && comp != S3L_SINK_COMPRESSION_NONE)
        return cli_fail(p->c, S3L_EINVALID_CONFIG,
                        &(struct s3l_error){.message = "compression is the text sink's option: "
                                                       "the two-phase sink (delivery_guarantee "
                                                       "'exactly_once') writes plain .ndjson "
                                                       "objects; drop compression or the "
                                                       "guarantee"},
                        S3L_SIDE_CONFIG);
    int ex = cli_pipe_state_path(p);
    if (!ex)
        ex = cli_pipe_load_state(p, &found);
    if (!ex)
        ex = open_store(p);
    if (!ex)
        ex = open_sink(p, found);
    if (!ex && p->st.cmt) { /* a checkpoint whose commit may not have happened */
        ex = commit_pending(p);
        if (!ex)
            report(p, "recovered");
    }
    /* The state names the earlier run until its leftovers are gone; then this run, before
     * its first upload. */
    if (!ex && found && p->twopc)
        ex = abort_orphans(p, p->st.run);
    if (ex)
        return ex;
    snprintf(p->st.run, sizeof(p->st.run), "%s", s3l_sink_run_id(p->sink));
    p->ckpt = p->st.checkpoint + 1;
    uint64_t before = p->st.records;
    struct reader r = {.fd = -1};
    ex = cli_pipe_open_input(p, &r);
    if (!ex)
        ex = cli_pipe_save_state(p); /* from the start: a kill leaves a state naming this run */
    if (!ex)
        ex = stream(p, &r);
    p->records = p->st.records - before;
    if (!ex && !p->twopc) {
        struct s3l_error err = {0};
        int rc = s3l_sink_close(p->sink, &err);
        if (rc)
            ex = cli_fail(p->c, rc, &err, S3L_SIDE_DESTINATION);
    }
    if (r.fd > 2)
        close(r.fd);
    free(r.line);
    if (!ex && cli_stop_signal)
        ex = 128 + (int)cli_stop_signal;
    return ex;
}

int cli_cmd_pipe(struct cli *c, int argc, char **argv)
{
    struct args a = {0};
    a.interval_ns = 60 * (int64_t)1000000000;
    a.stdin_offset = -1;
    bool help = false;
    int ex = parse_args(c, argc, argv, &a, &help);
    if (help) {
        printf(pipe_help, cli_s3_help, cli_access_help);
        return CLI_EX_OK;
    }
    if (ex)
        return ex;
    struct pipe p = {.c = c, .a = &a};
    struct s3l_config *cfg = NULL;
    if (s3l_config_new(&cfg) != 0)
        return cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    ex = load_binding(&p, cfg);
    if (!ex) {
        p.twopc = cli_sink_exactly_once(p.doc->sink);
        p.st.factory = cli_sink_factory(p.doc->sink);
        /* A file by its absolute path, so a run from another directory finds its state. */
        const char *in = a.input ? a.input : "-";
        p.st.input = strcmp(in, "-") == 0 ? NULL : realpath(in, NULL);
        if (!p.st.input)
            p.st.input = strdup(in);
        if (!p.st.input)
            ex = cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    }
    if (!ex) {
        cli_catch_stop_signals();
        ex = run(&p);
        summary(&p, ex);
    }
    s3l_sink_free(p.sink);
    s3l_store_free(p.store);
    s3l_free(p.st.cmt);
    free(p.st.input);
    free(p.url);
    s3l_config_free(cfg);
    return ex;
}
