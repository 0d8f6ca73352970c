/*
 * `s3land uploads` and the uploads part of `s3land gc --uploads` (issue 13 item 6): the pending
 * multipart uploads under a destination, with their age and whether a checkpoint holds them, and
 * the abort of the orphans (s3l_dest_uploads gives the rule). A killed writer's upload is never
 * completed nor aborted by anyone else, and its parts stay stored until it is aborted.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"
#include "s3l/sys/store.h"

static const char uploads_help[] =
    "Usage: s3land uploads [--url URL] [--older-than D] [--keep FILE]\n"
    "\n"
    "Lists the pending multipart uploads under the destination (s3:// only: a local destination\n"
    "has none), each with its key, upload id, age and what holds it: a checkpoint (a file of a\n"
    "pending epoch, or a writer of the pipeline's current generation), --keep, or nothing; and\n"
    "whether `s3land gc --uploads` with the same options would abort it. Needs\n"
    "s3:ListBucketMultipartUploads.\n"
    "\n"
    "  --url URL          the destination (default ./lake)\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --older-than D     uploads held by nothing are orphans from this age (default 7d; 30s,\n"
    "                     15m, 2h, 7d)\n"
    "  --keep FILE        upload ids to keep (one a line; # comments): committables only an\n"
    "                     engine's checkpoints know\n"
    "  -q, --quiet / --json / -h, --help\n"
    "\n";

int cli_keep_file(struct cli *c, const char *cmd, const char *path, struct cli_strings *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cli_usage(c, cmd, "--keep %s: cannot be read", path);
    char line[1024];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *p = line + strspn(line, " \t");
        p[strcspn(p, " \t\r\n#")] = '\0';
        if (*p)
            rc = cli_strings_add(out, p);
    }
    fclose(f);
    if (rc)
        return cli_fail(c, rc, NULL, S3L_SIDE_DESTINATION);
    return 0;
}

struct listing {
    struct cli *c;
    bool gc;
    uint64_t n[3];   /* by class */
    uint64_t aborted;
};

static const char *class_name(enum s3l_dest_upload_class k)
{
    return k == S3L_DEST_UPLOAD_HELD ? "held" : k == S3L_DEST_UPLOAD_YOUNG ? "young" : "orphan";
}

static int on_upload(void *ctx, const struct s3l_dest_upload *u)
{
    struct listing *l = ctx;
    l->n[u->cls]++;
    l->aborted += u->aborted;
    int64_t now = (int64_t)time(NULL);
    long long age = u->initiated_ns ? (long long)(now - u->initiated_ns / 1000000000) : -1;
    if (l->c->json) {
        cli_emit_json(json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:b}", "event", "upload",
                                "key", u->key, "upload_id", u->upload_id, "initiated_ms",
                                (json_int_t)(u->initiated_ns / 1000000), "age_s", (json_int_t)age,
                                "class", class_name(u->cls), "why", u->why, "aborted",
                                u->aborted));
        return 0;
    }
    if (l->c->quiet)
        return 0;
    char when[40] = "at an unknown time";
    if (u->initiated_ns) {
        time_t t = (time_t)(u->initiated_ns / 1000000000);
        struct tm tm;
        gmtime_r(&t, &tm);
        char iso[24];
        strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(when, sizeof(when), "%s (%llds ago)", iso, age);
    }
    const char *what = l->gc ? (u->aborted ? "aborted" : "kept")
                             : (u->cls == S3L_DEST_UPLOAD_ORPHAN ? "orphan" : "kept");
    printf("%s  upload %s  started %s  %s: %s\n", u->key, u->upload_id, when, what, u->why);
    return 0;
}

int cli_uploads_run(struct cli *c, struct s3l_store *store, const char *url, bool gc,
                    int64_t older_than, const struct cli_strings *keep, const char *pipeline)
{
    struct s3l_dest_uploads_options o = {0};
    o.pipeline = pipeline;
    o.older_than_ns = older_than;
    o.keep = (const char *const *)keep->v;
    o.n_keep = keep->n;
    struct listing l = {c, gc, {0, 0, 0}, 0};
    struct s3l_error err = {0};
    int rc = s3l_dest_uploads(store, &o, gc, on_upload, &l, &err);
    if (rc == S3L_EUNSUPPORTED) {
        if (!c->quiet && !c->json)
            printf("%s: a local destination has no multipart uploads (a killed writer leaves "
                   "hidden temp files there, which gc removes)\n", url);
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:b}", "event", "uploads", "url", url,
                                    "multipart", 0));
        return 0;
    }
    if (rc == S3L_EPERMISSION_DENIED)
        s3l_error_prefix(&err, "%s: the store refused to list multipart uploads (the policy "
                         "lacks s3:ListBucketMultipartUploads); %s", url,
                         gc ? "gc --uploads aborted nothing" : "nothing to show");
    if (rc)
        return cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "event", "uploads", "url", url,
                                "held", (json_int_t)l.n[0], "young", (json_int_t)l.n[1],
                                "orphans", (json_int_t)l.n[2], "aborted", (json_int_t)l.aborted));
    else if (!c->quiet && gc)
        printf("gc: aborted %llu orphaned upload%s, kept %llu\n", (unsigned long long)l.aborted,
               l.aborted == 1 ? "" : "s", (unsigned long long)(l.n[0] + l.n[1] + l.n[2] - l.aborted));
    else if (!c->quiet)
        printf("%llu pending upload%s: %llu held, %llu young, %llu orphan%s (gc --uploads aborts "
               "orphans)\n", (unsigned long long)(l.n[0] + l.n[1] + l.n[2]),
               l.n[0] + l.n[1] + l.n[2] == 1 ? "" : "s", (unsigned long long)l.n[0],
               (unsigned long long)l.n[1], (unsigned long long)l.n[2], l.n[2] == 1 ? "" : "s");
    return 0;
}

static int first_only(void *ctx, const struct s3l_pending_upload *u)
{
    (void)ctx;
    (void)u;
    return 1; /* one answer is enough: the listing is allowed */
}

int cli_uploads_probe(struct cli *c, struct s3l_store *store, const char *url)
{
    struct s3l_error err = {0};
    int rc = s3l_store_list_uploads(store, "", first_only, NULL, &err);
    if (rc == S3L_EPERMISSION_DENIED) {
        s3l_error_prefix(&err, "%s: the store refused to list multipart uploads (the policy "
                         "lacks s3:ListBucketMultipartUploads); gc --uploads did nothing", url);
        return cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
    }
    return 0; /* no multipart (file://) or other failures: the run itself meets and reports them */
}

enum { U_URL = 256, U_OLDER, U_KEEP, U_JSON };

static const struct option uploads_options[] = {
    {"url", required_argument, NULL, U_URL},
    {"older-than", required_argument, NULL, U_OLDER},
    {"keep", required_argument, NULL, U_KEEP},
    CLI_S3_LONG_OPTIONS,
    {"json", no_argument, NULL, U_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cli_cmd_uploads(struct cli *c, int argc, char **argv)
{
    const char *url_arg = NULL, *keep_path = NULL;
    struct cli_s3 s3 = {0};
    int64_t older = S3L_DEST_UPLOADS_DEFAULT_AGE_NS;
    optind = 1;
    opterr = 0;
    int opt, ex = 0;
    while (ex == 0 && (opt = getopt_long(argc, argv, "qh", uploads_options, NULL)) != -1) {
        if (opt == U_URL)
            url_arg = optarg;
        else if (opt == U_OLDER && !cli_parse_age(optarg, &older))
            ex = cli_usage(c, "uploads", "--older-than %s: expected a duration like 7d or 2h",
                           optarg);
        else if (opt == U_KEEP)
            keep_path = optarg;
        else if (opt == U_JSON)
            c->json = true;
        else if (opt == 'q')
            c->quiet = true;
        else if (opt == 'h') {
            fputs(uploads_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_exit_codes_help, stdout);
            return 0;
        } else if (opt != U_OLDER) {
            ex = cli_s3_option(c, "uploads", opt, &s3);
            if (ex < 0)
                return cli_bad_option(c, "uploads", uploads_options, argv[optind - 1]);
        }
    }
    if (ex == 0 && optind < argc)
        ex = cli_usage(c, "uploads", "unexpected argument %s", argv[optind]);
    struct cli_strings keep = {0};
    if (ex == 0 && keep_path)
        ex = cli_keep_file(c, "uploads", keep_path, &keep);
    struct s3l_store *store = NULL;
    char *url = NULL;
    if (ex == 0)
        ex = cli_open_store(c, url_arg, &s3, false, &store, &url);
    if (ex == 0)
        ex = cli_uploads_run(c, store, url, false, older, &keep, NULL);
    cli_strings_free(&keep);
    s3l_store_free(store);
    s3l_free(url);
    return ex;
}
