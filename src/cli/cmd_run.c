/*
 * `s3land run --config FILE...`: runs a Pipeline document with its Destination (docs/config.md)
 * through the same runner and exactly-once protocol as `write`: every source into its table, one
 * checkpoint and one commit per epoch for all of them, a commit every
 * spec.delivery.commit.interval (default 1m), also while a `follow` source waits for more (until
 * SIGINT or SIGTERM). A run whose sources all lack `follow` ends once
 * every source is read to its end and committed. An AUTH_EXPIRED failure restarts the attempt
 * (with backoff, at most 5 times in a row); every other failure stops with its exit code.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"

static const char run_help[] =
    "Usage: s3land run --config FILE [--config FILE]... [OPTIONS]\n"
    "\n"
    "Runs the Pipeline document of the files (docs/config.md) into the Destination it names:\n"
    "each source's files (paths or globs, relative to the document's directory, minus its\n"
    "exclude globs) land in the source's table, exactly once, with one checkpoint and one\n"
    "commit per epoch for all sources. The pipeline's id comes from the destination's URL, its\n"
    "namespace and the pipeline's metadata.name: adding sources or files keeps it, and a new\n"
    "source or file is read from its beginning. The run ends when every source is read to its\n"
    "end and committed.\n"
    "\n"
    "  --config FILE       a YAML or JSON file of documents (repeat for several files)\n"
    "  --pipeline NAME     the Pipeline to run when the files hold several\n"
    "  --secrets-dir DIR   where { secret: NAME } values are read from (the file NAME), after\n"
    "                      $S3LAND_SECRET_<NAME>\n"
    "  -q, --quiet         errors only\n"
    "  --json              one JSON object per line on stdout for each event and the summary\n"
    "  -h, --help          this help\n"
    "\n"
    "Credentials: the destination gets no ambient credentials, region or endpoint (AWS_*\n"
    "variables, profiles, instance role) unless the pipeline says spec.runner.inherit: true;\n"
    "give keys in the Destination's spec.config (accessKeyId, secretAccessKey, each may be a\n"
    "{ secret: NAME }), or a role (spec.config.aws.role), which is assumed through STS with the\n"
    "runner's own credentials (the AWS default chain); keys given win over a role.\n"
    "An AUTH_EXPIRED failure restarts the run (1 s, 2 s, 4 s ... at most 5 times in a row).\n"
    "A stream whose column changes type stops (SCHEMA_DRIFT) while the others go on; the run\n"
    "then exits 4. SIGINT or SIGTERM commits what was read, then exits 130 or 143.\n"
    "\n";

struct run_args {
    const char **configs;
    size_t n_configs;
    const char *pipeline;
    struct cli_secret_src secrets;
};

static int parse_args(struct cli *c, int argc, char **argv, struct run_args *a, bool *help)
{
    enum { O_CONFIG = 1, O_PIPELINE, O_SECRETS_DIR, O_JSON };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"pipeline", required_argument, NULL, O_PIPELINE},
        {"secrets-dir", required_argument, NULL, O_SECRETS_DIR},
        {"json", no_argument, NULL, O_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->configs = calloc((size_t)argc + 1, sizeof(*a->configs));
    if (!a->configs)
        return cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (opt) {
        case O_CONFIG:
            a->configs[a->n_configs++] = optarg;
            break;
        case O_PIPELINE:
            a->pipeline = optarg;
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
            return cli_bad_option(c, "run", longopts, argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage(c, "run", "unexpected argument %s (the inputs are in the Pipeline)",
                         argv[optind]);
    if (!a->n_configs)
        return cli_usage(c, "run", "--config FILE is required");
    return 0;
}

/* The run's summary: one JSON event with --json, else a line on stderr (none when quiet). */
static void summary(struct cli *c, const struct s3l_pipeline_options *o, const char *url,
                    const struct s3l_pipeline_stats *s, bool up_to_date, int rc)
{
    if (c->json) {
        cli_emit_json(json_pack("{s:s, s:s, s:s, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                                "s:o}",
                                "event", "summary", "url", url, "pipeline", o->name, "sources",
                                (json_int_t)o->n_sources, "ok", rc == 0, "rows",
                                (json_int_t)s->rows, "rows_bad", (json_int_t)s->rows_bad,
                                "bytes_in", (json_int_t)s->bytes_in, "bytes_out",
                                (json_int_t)s->bytes_out, "files", (json_int_t)s->files,
                                "epochs", (json_int_t)s->epochs, "staged_left",
                                (json_int_t)s->staged_left, "requests",
                                cli_requests_json(&s->requests)));
        return;
    }
    if (c->quiet || (rc != 0 && rc != S3L_ESCHEMA_DRIFT))
        return;
    if (up_to_date) {
        fprintf(stderr, "nothing new: pipeline %s at %s already holds every input record\n",
                o->name, url);
        return;
    }
    char in[32], out[32], left[64] = "";
    if (s->staged_left)
        snprintf(left, sizeof(left), ", %llu staged %s left to gc",
                 (unsigned long long)s->staged_left, cli_plural(s->staged_left, "file", "files"));
    fprintf(stderr,
            "pipeline %s: wrote %llu %s from %zu %s to %s: %llu %s, %s put to the store from %s "
            "of input, %llu %s, %.2f s%s%s\n",
            o->name, (unsigned long long)s->rows, cli_plural(s->rows, "row", "rows"),
            o->n_sources, cli_plural(o->n_sources, "source", "sources"), url,
            (unsigned long long)s->files, cli_plural(s->files, "file", "files"),
            cli_fmt_bytes(s->bytes_out, out, sizeof(out)),
            cli_fmt_bytes(s->bytes_in, in, sizeof(in)), (unsigned long long)s->epochs,
            cli_plural(s->epochs, "epoch", "epochs"), (double)s->elapsed_ns / 1e9, left,
            rc ? " (a stream stopped: see above)" : "");
}

/* The library's SCHEMA_DRIFT message names write's flag; a run's setting is the Pipeline's. */
static const char write_hint[] = "(s3land write --type-changes allow)";
static const char run_hint[] = "(typeChanges: allow in the Pipeline's spec.destination)";

/* Rewrites write's hint in msg (NUL-terminated, cap bytes) to the Pipeline's setting. */
static void drift_hint(char *msg, size_t cap)
{
    char *at = strstr(msg, write_hint);
    if (!at)
        return;
    char tail[S3L_ERROR_MESSAGE_MAX];
    snprintf(tail, sizeof(tail), "%s", at + strlen(write_hint));
    snprintf(at, cap - (size_t)(at - msg), "%s%s", run_hint, tail);
}

/* write's report callback, with a stopped stream's drift message in the Pipeline's terms. */
static void run_on_report(void *ctx, const struct s3l_pipeline_report *p)
{
    if (p->event != S3L_EVENT_STREAM_STOPPED || !p->message) {
        cli_write_on_report(ctx, p);
        return;
    }
    char msg[S3L_ERROR_MESSAGE_MAX + sizeof(run_hint)];
    snprintf(msg, sizeof(msg), "%s", p->message);
    drift_hint(msg, sizeof(msg));
    struct s3l_pipeline_report q = *p;
    q.message = msg;
    cli_write_on_report(ctx, &q);
}

/* Runs the attempt again after AUTH_EXPIRED, at most this many times in a row. */
#define AUTH_RESTARTS 5

/* The pipeline, restarted after AUTH_EXPIRED (1 s, 2 s, 4 s ... backoff); an attempt that
 * committed an epoch resets the count. */
static int run_attempts(struct cli *c, struct s3l_pipeline_options *o,
                        struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                        struct s3l_error *err)
{
    for (int tries = 0;; tries++) {
        memset(err, 0, sizeof(*err));
        int rc = s3l_pipeline_run(o, stats, side, err);
        if (rc != S3L_EAUTH_EXPIRED || cli_stop_signal)
            return rc;
        if (stats->epochs)
            tries = 0;
        if (tries >= AUTH_RESTARTS)
            return rc;
        if (!c->quiet && !c->json)
            fprintf(stderr, "note: %s: restarting the run (%d of %d)\n", err->message, tries + 1,
                    AUTH_RESTARTS);
        struct timespec ts = {(time_t)1 << tries, 0};
        nanosleep(&ts, NULL);
    }
}

int cli_cmd_run(struct cli *c, int argc, char **argv)
{
    struct run_args a;
    memset(&a, 0, sizeof(a));
    bool help = false;
    int ex = parse_args(c, argc, argv, &a, &help);
    if (help) {
        fputs(run_help, stdout);
        fputs(cli_exit_codes_help, stdout);
    }
    if (help || ex) {
        free(a.configs);
        return ex;
    }
    struct cli_docs d;
    struct cli_run_plan plan;
    memset(&plan, 0, sizeof(plan));
    ex = cli_docs_load(c, "run", a.configs, a.n_configs, &a.secrets, a.pipeline, true, &d);
    if (ex == 0)
        ex = cli_run_plan_build(c, "run", &d, &plan);
    if (ex == 0) {
        struct cli_write_reporter r = {c, false, false, false, 0, 0};
        plan.o.report = run_on_report;
        plan.o.report_ctx = &r;
        plan.o.stop = &cli_stop_signal;
        struct s3l_pipeline_stats stats;
        memset(&stats, 0, sizeof(stats));
        enum s3l_pipeline_side side = S3L_SIDE_NONE;
        struct s3l_error err = {0};
        cli_catch_stop_signals();
        int rc = run_attempts(c, &plan.o, &stats, &side, &err);
        cli_write_clear_progress(&r);
        if (rc == S3L_ESCHEMA_DRIFT)
            drift_hint(err.message, sizeof(err.message));
        ex = rc ? cli_fail(c, rc, &err, side) : CLI_EX_OK;
        summary(c, &plan.o, plan.url, &stats, r.up_to_date, rc);
        if (rc == 0 && stats.stopped) {
            int sig = cli_stop_signal;
            if (!c->json)
                fprintf(stderr, "stopped by %s: what was read is committed (epoch %llu)\n",
                        sig == SIGINT ? "SIGINT" : "SIGTERM",
                        (unsigned long long)stats.last_epoch);
            ex = 128 + sig;
        }
    }
    cli_run_plan_free(&plan);
    cli_docs_free(&d);
    free(a.configs);
    return ex;
}
