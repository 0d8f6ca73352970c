/*
 * `s3land recover` and `gc`: maintenance of a destination (`check` is cmd_check.c).
 *   recover  commits the epochs that interrupted runs left pending (the destination does it when
 *            it opens a pipeline: same copies to the same names, then the marker);
 *   gc       removes staged files of epochs that can never commit, claiming a pipeline only
 *            when it looks dead (its checkpoint older than twice its commit interval) or with
 *            --force (issue 10 item 12), and what killed checks left under
 *            _openetl/check/ (older than an hour, or --check-age).
 * recover takes each pipeline with a pending epoch over (a new generation), so a writer of the
 * same pipeline still running is fenced: run it when no writer of that pipeline runs.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char recover_help[] =
    "Usage: s3land recover [--url URL] [--pipeline-id ID]\n"
    "\n"
    "Finishes the commits that interrupted runs left pending: for each pipeline of the\n"
    "destination (or just ID) whose checkpoint holds a pending epoch, copies its staged files to\n"
    "their final names (the same names as the interrupted run), writes its marker and records it\n"
    "as committed. `s3land write` does the same when it starts; recover does it without new data.\n"
    "It takes the pipeline over (a new generation): do not run it while a writer of the same\n"
    "pipeline runs (that writer would stop with exit code 5).\n"
    "\n"
    "  --url URL          the destination (default ./lake)\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --profile NAME, --role-arn ARN, --external-id ID, --role-session-name N,\n"
    "  --role-duration D     access: which credentials, a role on top (below)\n"
    "  --pipeline-id ID   only this pipeline\n"
    "  -q, --quiet / --json / -h, --help\n"
    "\n";

static const char gc_help[] =
    "Usage: s3land gc [--url URL] [--pipeline-id ID] [--force]\n"
    "                 [--uploads [--older-than D] [--keep FILE] [--pipe-state PATH]...]\n"
    "\n"
    "Removes staged files that can never commit. A pipeline that looks dead (its checkpoint not\n"
    "updated for twice the commit interval recorded in it; 60s assumed when it records none) is\n"
    "claimed as a writer would claim it (a new generation; a pending epoch is committed), then\n"
    "every staged file of an older generation that is not pending is removed: what a killed\n"
    "write left. A pipeline that looks live is not claimed: only what generations before its\n"
    "current one staged is removed, and gc says why it did not claim. Each pipeline is named\n"
    "with its tables (those it has markers, a pending epoch or staged files for).\n"
    "\n"
    "  --url URL          the destination (default ./lake)\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --profile NAME, --role-arn ARN, --external-id ID, --role-session-name N,\n"
    "  --role-duration D     access: which credentials, a role on top (below)\n"
    "  --pipeline-id ID   only this pipeline\n"
    "  --force            claim live pipelines too: a writer still running is fenced (it stops\n"
    "                     at its next commit with exit code 5)\n"
    "  --check-age D      remove what killed `s3land check` runs left under _openetl/check/\n"
    "                     once its newest object is D old (default 1h; a check removes its own\n"
    "                     within seconds)\n"
    "  --uploads          then abort orphaned multipart uploads (s3://; see `s3land uploads`):\n"
    "                     staging uploads of generations below a pipeline's current one that\n"
    "                     its checkpoint does not hold as pending, and other uploads older\n"
    "                     than --older-than (default 7d) that no checkpoint or `pipe` state\n"
    "                     holds and --keep FILE (upload ids, one a line) does not list. Without\n"
    "                     the right to list uploads (s3:ListBucketMultipartUploads) it does\n"
    "                     nothing. With --pipeline-id, only that pipeline's staging uploads\n"
    "                     are judged.\n"
    "  --pipe-state PATH  a `pipe` state file, or a directory of them (pipe-*.json), whose\n"
    "                     committables hold their uploads; any number of times, besides the\n"
    "                     default state directory ($XDG_STATE_HOME/s3land, else\n"
    "                     ~/.local/state/s3land), always read. A state that cannot be read\n"
    "                     makes gc --uploads refuse to run (unless its url names another\n"
    "                     destination)\n"
    "  -q, --quiet / --json / -h, --help\n"
    "\n";

enum { O_ID = 256, O_JSON, O_FORCE, O_CHECK_AGE, O_UPLOADS, O_OLDER, O_KEEP, O_PIPE_STATE };

static const struct option admin_options[] = {
    CLI_DEST_LONG_OPTIONS,
    {"pipeline-id", required_argument, NULL, O_ID},
    {"force", no_argument, NULL, O_FORCE},
    {"check-age", required_argument, NULL, O_CHECK_AGE},
    {"uploads", no_argument, NULL, O_UPLOADS},
    {"older-than", required_argument, NULL, O_OLDER},
    {"keep", required_argument, NULL, O_KEEP},
    {"pipe-state", required_argument, NULL, O_PIPE_STATE},
    CLI_S3_LONG_OPTIONS,
    CLI_SSE_LONG_OPTIONS,
    {"json", no_argument, NULL, O_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct admin {
    struct cli *c;
    const char *cmd;
    const char *id;
    struct cli_dest_args dest; /* --url or --config (the destination from a document) */
    bool help;
    char *url;
    struct s3l_store *store;
    bool gc, force, uploads;
    int64_t check_age_ns;  /* gc: check leftovers older than this are removed */
    int64_t older_than;    /* gc --uploads: orphan age, ns */
    const char *keep_path; /* gc --uploads --keep FILE */
    struct cli_strings states; /* gc --uploads --pipe-state PATH, each given */
    uint64_t count; /* recovered epochs, or removed files */
    int ex;
};

/* The store of --url and the S3 flags, or of --config's Destination (with a Pipeline there, the
 * credentials the runner would use: docs.c). */
static int open_store(struct admin *a)
{
    struct cli_dest_args *d = &a->dest;
    if (!d->config)
        return cli_open_store(a->c, d->url_arg, &d->s3, false, &a->store, &a->url);
    int ex = cli_dest_args_check(a->c, a->cmd, d);
    return ex ? ex
              : cli_docs_open_store(a->c, a->cmd, d->config, &d->secrets, false, &a->store,
                                    &a->url);
}

static int parse(struct admin *a, int argc, char **argv)
{
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "qh", admin_options, NULL)) != -1) {
        switch (opt) {
        case O_ID:
            a->id = optarg;
            break;
        case O_JSON:
            a->c->json = true;
            break;
        case O_FORCE:
        case O_UPLOADS:
        case O_OLDER:
        case O_KEEP:
        case O_PIPE_STATE:
            if (!a->gc)
                return cli_usage(a->c, a->cmd, "%s is an option of gc only", argv[optind - 1]);
            if (opt == O_FORCE)
                a->force = true;
            else if (opt == O_UPLOADS)
                a->uploads = true;
            else if (opt == O_KEEP)
                a->keep_path = optarg;
            else if (opt == O_PIPE_STATE && cli_strings_add(&a->states, optarg) != 0)
                return cli_fail(a->c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
            else if (opt == O_OLDER && !cli_parse_age(optarg, &a->older_than))
                return cli_usage(a->c, a->cmd, "--older-than %s: expected a duration like 7d or "
                                 "2h", optarg);
            break;
        case O_CHECK_AGE:
            if (!a->gc)
                return cli_usage(a->c, a->cmd, "--check-age is an option of gc only");
            if (!cli_parse_duration(optarg, &a->check_age_ns))
                return cli_usage(a->c, a->cmd, "--check-age %s: expected a duration (30s, 1h)",
                                 optarg);
            break;
        case 'q':
            a->c->quiet = true;
            break;
        case 'h':
            a->help = true;
            return 0;
        default: {
            int ex = cli_dest_option(a->c, a->cmd, opt, &a->dest);
            if (ex < 0)
                return cli_bad_option(a->c, a->cmd, admin_options, argv[optind - 1]);
            if (ex > 0)
                return ex;
            break;
        }
        }
    }
    if (optind < argc)
        return cli_usage(a->c, a->cmd, "unexpected argument %s", argv[optind]);
    if (!a->uploads && (a->keep_path || a->states.n ||
                        a->older_than != S3L_DEST_UPLOADS_DEFAULT_AGE_NS))
        return cli_usage(a->c, a->cmd, "--older-than, --keep and --pipe-state go with --uploads");
    return 0;
}

/* "60s", "1500ms", "1h": a commit interval as --commit-interval takes it. */
static const char *fmt_interval(uint64_t ms, char *buf, size_t cap)
{
    if (ms % 3600000 == 0)
        snprintf(buf, cap, "%lluh", (unsigned long long)(ms / 3600000));
    else if (ms % 60000 == 0)
        snprintf(buf, cap, "%llum", (unsigned long long)(ms / 60000));
    else if (ms % 1000 == 0)
        snprintf(buf, cap, "%llus", (unsigned long long)(ms / 1000));
    else
        snprintf(buf, cap, "%llums", (unsigned long long)ms);
    return buf;
}

/* "2026-12-01T22:40:01Z (12s ago)": when the checkpoint was last updated. */
static const char *fmt_updated(const struct s3l_dest_gc_report *r, char *buf, size_t cap)
{
    time_t t = (time_t)(r->updated_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char iso[32];
    strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
    long long age = (long long)((r->now_ns - r->updated_ns) / 1000000000);
    snprintf(buf, cap, "%s (%llds ago)", iso, age);
    return buf;
}

/*
 * Why gc did or did not claim the pipeline, as one clause after "claimed"/"not claimed: ". The
 * rule is s3l_dest_gc_pipeline's: claimed when the checkpoint is older than twice its interval.
 */
static void gc_reason(const struct s3l_dest_gc_report *r, char *buf, size_t cap)
{
    char when[64], iv[32], twice[32];
    fmt_updated(r, when, sizeof(when));
    fmt_interval(r->interval_ms, iv, sizeof(iv));
    fmt_interval(r->interval_ms * 2, twice, sizeof(twice));
    const char *assumed = r->interval_recorded ? "" : " (none recorded: the default is assumed)";
    if (!r->exists)
        snprintf(buf, cap, "it has no checkpoint");
    else if (r->claimed && !r->forced)
        snprintf(buf, cap, "its checkpoint was last updated %s, more than twice its commit "
                 "interval %s%s ago", when, iv, assumed);
    else if (r->claimed)
        snprintf(buf, cap, "with --force, though its checkpoint was updated %s: a writer still "
                 "running is fenced (exit code 5 at its next commit)", when);
    else if (r->interval_ms == 0)
        snprintf(buf, cap, "its writer commits by rows only (commit interval 0), so the age of its "
                 "checkpoint (updated %s) does not tell whether it runs; gc claims it only with "
                 "--force, which fences a running writer (exit code 5)", when);
    else
        snprintf(buf, cap, "its checkpoint was updated %s, less than twice its commit interval "
                 "%s%s ago, so its writer may be running; gc claims it once the checkpoint is %s "
                 "old, or now with --force, which fences a running writer (exit code 5)",
                 when, iv, assumed, twice);
}

/* Prints (or emits) the outcome of gc for one pipeline. */
static void gc_print(struct admin *a, const char *id, const struct cli_strings *tables,
                     const struct s3l_dest_gc_report *r)
{
    char reason[640];
    gc_reason(r, reason, sizeof(reason));
    if (a->c->json) {
        json_t *tj = json_array();
        for (size_t i = 0; tj && i < tables->n; i++)
            json_array_append_new(tj, json_string(tables->v[i]));
        cli_emit_json(json_pack("{s:s, s:s, s:o, s:I, s:b, s:b, s:b, s:I, s:b, s:I, s:I, s:s}",
                                "event", "gc", "pipeline", id, "tables", tj, "removed",
                                (json_int_t)r->removed, "claimed", r->claimed, "forced",
                                r->forced, "live", r->live, "commit_interval_ms",
                                (json_int_t)r->interval_ms, "interval_recorded",
                                r->interval_recorded, "checkpoint_updated_ms",
                                (json_int_t)(r->updated_ns / 1000000), "generation",
                                (json_int_t)r->generation, "reason", reason));
        return;
    }
    if (a->c->quiet)
        return;
    printf("pipeline %s (%s", id, tables->n == 0 ? "no table" : tables->n == 1 ? "table" : "tables");
    for (size_t i = 0; i < tables->n; i++)
        printf("%s%s", i ? ", " : " ", tables->v[i]);
    if (!r->exists)
        printf("): no checkpoint; removed %llu stale temp file%s\n",
               (unsigned long long)r->removed, r->removed == 1 ? "" : "s");
    else if (r->claimed)
        printf("): claimed generation %llu, %s; %sremoved %llu staged file%s\n",
               (unsigned long long)r->generation, reason,
               r->recovered ? "committed its pending epoch; " : "",
               (unsigned long long)r->removed, r->removed == 1 ? "" : "s");
    else
        printf("): not claimed: %s; removed %llu staged file%s of older generations\n", reason,
               (unsigned long long)r->removed, r->removed == 1 ? "" : "s");
}

/* gc of one pipeline: s3l_dest_gc_pipeline, named with its tables. */
static int gc_one(struct admin *a, const char *id, struct s3l_error *err)
{
    /* gc names each pipeline with its tables (asked before gc removes what it staged). */
    struct cli_strings tables = {0};
    int rc = s3l_dest_pipeline_tables(a->store, id, cli_strings_add, &tables, err);
    if (rc == S3L_ENOMEM && !err->code)
        s3l_error_set(err, rc, "out of memory listing the tables of pipeline %s", id);
    struct s3l_dest_gc_report r;
    if (rc == 0)
        rc = s3l_dest_gc_pipeline(a->store, id, a->force, &r, err);
    if (rc == 0) {
        a->count += r.removed;
        gc_print(a, id, &tables, &r);
    }
    cli_strings_free(&tables);
    return rc;
}

/* recover or gc one pipeline. */
static int one_pipeline(void *ctx, const char *id)
{
    struct admin *a = ctx;
    struct s3l_error err = {0};
    bool pending = false;
    int rc = 0;
    if (a->gc) {
        rc = gc_one(a, id, &err);
    } else {
        rc = s3l_pipeline_peek(a->store, id, NULL, &pending, NULL, &err);
        if (rc == 0 && !pending)
            return 0;
        struct s3l_dest_options o = {0};
        o.version = S3L_DEST_OPTIONS_VERSION;
        o.pipeline_id = id;
        struct s3l_dest *d = NULL;
        if (rc == 0)
            rc = s3l_dest_open(a->store, &o, &d, &err);
        if (rc == 0) {
            uint64_t epoch = s3l_dest_committed_epoch(d);
            a->count++;
            if (a->c->json)
                cli_emit_json(json_pack("{s:s, s:s, s:I}", "event", "recovered", "pipeline", id,
                                        "epoch", (json_int_t)epoch));
            else if (!a->c->quiet)
                printf("pipeline %s: committed pending epoch %llu\n", id,
                       (unsigned long long)epoch);
        }
        s3l_dest_free(d);
    }
    if (rc) {
        s3l_error_prefix(&err, "pipeline %s", id);
        int ex = cli_fail(a->c, rc, &err, S3L_SIDE_DESTINATION);
        if (!a->ex)
            a->ex = ex;
    }
    return 0;
}

/* gc: what killed checks left under _openetl/check/ (s3l_dest_gc_check_leftovers). */
static int gc_check_leftovers(struct admin *a, struct s3l_error *err)
{
    uint64_t n = 0;
    int rc = s3l_dest_gc_check_leftovers(a->store, a->check_age_ns, &n, err);
    if (rc)
        return rc;
    char age[32];
    fmt_interval((uint64_t)(a->check_age_ns / 1000000), age, sizeof(age));
    if (a->c->json)
        cli_emit_json(json_pack("{s:s, s:I, s:I}", "event", "gc_check", "removed",
                                (json_int_t)n, "older_than_ms",
                                (json_int_t)(a->check_age_ns / 1000000)));
    else if (!a->c->quiet && n > 0)
        printf("check leftovers (%s): removed %llu object%s older than %s\n",
               s3l_dest_scratch_prefix(), (unsigned long long)n, n == 1 ? "" : "s", age);
    return 0;
}

/*
 * gc: the hidden temp files of killed writers anywhere in the destination (s3l_store_sweep: on
 * file:// those no live process holds, changed more than a second ago; other stores have none).
 * A pipeline's gc sweeps too, but a destination only `pipe` writes (its NDJSON objects) has no
 * pipeline, and its killed intervals' temp files stayed (found by a break-it run).
 */
static int gc_temps(struct admin *a, struct s3l_error *err)
{
    uint64_t n = 0;
    int rc = cli_sweep_stale(a->store, "", &n, err);
    if (rc)
        return rc;
    if (a->c->json)
        cli_emit_json(json_pack("{s:s, s:I}", "event", "gc_temps", "removed", (json_int_t)n));
    else if (!a->c->quiet && n > 0)
        printf("temp files of killed writers: removed %llu\n", (unsigned long long)n);
    return 0;
}

static int recover_or_gc(struct cli *c, int argc, char **argv, bool gc)
{
    struct admin a = {0};
    a.c = c;
    a.cmd = gc ? "gc" : "recover";
    a.gc = gc;
    a.check_age_ns = S3L_DEST_CHECK_LEFTOVER_AGE_NS;
    a.older_than = S3L_DEST_UPLOADS_DEFAULT_AGE_NS;
    int ex = parse(&a, argc, argv);
    if (ex || a.help) {
        if (a.help) {
            fputs(gc ? gc_help : recover_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_access_help, stdout);
            fputs(cli_sse_help, stdout);
            fputs(cli_exit_codes_help, stdout);
        }
        cli_strings_free(&a.states);
        return ex;
    }
    struct cli_strings keep = {0};
    struct cli_holds holds = {0};
    if (a.keep_path)
        ex = cli_keep_file(c, a.cmd, a.keep_path, &keep);
    if (ex == 0)
        ex = open_store(&a);
    /* Before anything is done: a state gc cannot read may hold an upload (issue 13 item 6). */
    if (ex == 0 && a.uploads)
        ex = cli_pipe_holds(c, a.cmd, a.url, &a.states, &holds);
    /* gc --uploads without the right to list uploads does nothing at all (issue 13 item 6). */
    if (ex == 0 && a.uploads)
        ex = cli_uploads_probe(c, a.store, a.url);
    if (ex == 0) {
        struct s3l_error err = {0};
        /* The ids are collected first: a store may not take other calls from inside its
         * listing callback (the S3 backend holds its connection while it lists). */
        struct cli_strings ids = {0};
        int rc = a.id ? cli_strings_add(&ids, a.id)
                      : s3l_pipeline_list(a.store, cli_strings_add, &ids, &err);
        if (rc == S3L_ENOMEM && !err.code)
            s3l_error_set(&err, rc, "out of memory listing the pipelines of %s", a.url);
        for (size_t i = 0; rc == 0 && i < ids.n; i++)
            one_pipeline(&a, ids.v[i]);
        cli_strings_free(&ids);
        if (rc == 0 && gc && !a.id)
            rc = gc_check_leftovers(&a, &err);
        if (rc == 0 && gc && !a.id)
            rc = gc_temps(&a, &err);
        ex = rc ? cli_fail(c, rc, &err, S3L_SIDE_DESTINATION) : a.ex;
    }
    if (ex == 0 && !c->quiet && !c->json) {
        if (gc)
            printf("gc: removed %llu staged file%s\n", (unsigned long long)a.count,
                   a.count == 1 ? "" : "s");
        else if (a.count == 0)
            printf("recover: nothing pending\n");
    }
    /* After the claims of dead pipelines: their writers' uploads are of older generations now. */
    if (ex == 0 && a.uploads)
        ex = cli_uploads_run(c, a.store, a.url, true, a.older_than, &keep, &holds, a.id);
    cli_holds_free(&holds);
    cli_strings_free(&a.states);
    cli_strings_free(&keep);
    s3l_store_free(a.store);
    s3l_free(a.url);
    return ex;
}

int cli_cmd_recover(struct cli *c, int argc, char **argv)
{
    return recover_or_gc(c, argc, argv, false);
}

int cli_cmd_gc(struct cli *c, int argc, char **argv)
{
    return recover_or_gc(c, argc, argv, true);
}
