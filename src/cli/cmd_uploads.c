/*
 * `s3land uploads` and the uploads part of `s3land gc --uploads` (issue 13 item 6): the pending
 * multipart uploads under a destination, with their age and whether a checkpoint holds them, and
 * the abort of the orphans (s3l_dest_uploads gives the rule). A killed writer's upload is never
 * completed nor aborted by anyone else, and its parts stay stored until it is aborted. The
 * committables of `pipe` state files (the default state directory, --pipe-state) hold their
 * uploads: a state that cannot be read makes both commands refuse, since it may hold one.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "pipe.h"
#include "s3l/store.h"

static const char uploads_help[] =
    "Usage: s3land uploads [--url URL] [--older-than D] [--keep FILE] [--pipe-state PATH]...\n"
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
    "  --pipe-state PATH  a `pipe` state file, or a directory of them (pipe-*.json), whose\n"
    "                     committables hold their uploads; any number of times. The default\n"
    "                     state directory ($XDG_STATE_HOME/s3land, else ~/.local/state/s3land)\n"
    "                     is always read. A state that cannot be read is an error (unless its\n"
    "                     url names another destination)\n"
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

/* ---- pipe state files: their committables hold their uploads ---- */

static int hold_add(struct cli_holds *h, const char *key, const char *id, const char *why)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 8;
        struct s3l_dest_upload_hold *v = realloc(h->v, cap * sizeof(*v));
        if (!v)
            return S3L_ENOMEM;
        h->v = v;
        h->cap = cap;
    }
    struct s3l_dest_upload_hold *d = &h->v[h->n];
    d->key = key ? strdup(key) : NULL;
    d->upload_id = strdup(id);
    d->why = strdup(why);
    if ((key && !d->key) || !d->upload_id || !d->why) {
        free((char *)d->key);
        free((char *)d->upload_id);
        free((char *)d->why);
        return S3L_ENOMEM;
    }
    h->n++;
    return 0;
}

void cli_holds_free(struct cli_holds *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free((char *)h->v[i].key);
        free((char *)h->v[i].upload_id);
        free((char *)h->v[i].why);
    }
    free(h->v);
    memset(h, 0, sizeof(*h));
}

/* n bytes of s without the trailing slashes. */
static size_t trimmed(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/')
        n--;
    return n;
}

/*
 * Where a state's sink root r (its "url") lies against the destination's root g: 0 another
 * destination (neither is the other nor under it); 1 the same bucket or directory tree, with
 * *rel (free) the committable key k relative to g, or NULL when k is not under g; -1 out of
 * memory.
 */
static int relate(const char *g, const char *r, const char *k, char **rel)
{
    size_t gn = trimmed(g), rn = trimmed(r);
    *rel = NULL;
    if (gn == rn && strncmp(g, r, gn) == 0) {
        *rel = strdup(k);
    } else if (rn < gn && strncmp(g, r, rn) == 0 && g[rn] == '/') {
        const char *sub = g + rn + 1; /* the destination's prefix in the sink's root */
        size_t sn = gn - rn - 1;
        if (strncmp(k, sub, sn) != 0 || k[sn] != '/')
            return 1; /* the same bucket, a key outside this destination */
        *rel = strdup(k + sn + 1);
    } else if (gn < rn && strncmp(r, g, gn) == 0 && r[gn] == '/') {
        size_t n = (rn - gn - 1) + 1 + strlen(k) + 1;
        if ((*rel = malloc(n)))
            snprintf(*rel, n, "%.*s/%s", (int)(rn - gn - 1), r + gn + 1, k);
    } else {
        return 0;
    }
    return *rel ? 1 : -1;
}

/* One state file: its committable's hold when it is of this destination. 0 or the exit code. */
static int one_state(struct cli *c, const char *cmd, const char *url, const char *path,
                     struct cli_holds *out)
{
    struct cli_pipe_state_view v;
    char why[600];
    int bad = cli_pipe_state_view(path, &v, why, sizeof(why));
    char *rel = NULL;
    int related = v.url ? relate(url, v.url, bad ? "" : (v.cmt.key ? v.cmt.key : ""), &rel) : 1;
    int ex = 0, rc = related < 0 ? S3L_ENOMEM : 0;
    if (rc == 0 && bad && related) {
        struct s3l_error err = {0};
        s3l_error_set(&err, S3L_ECORRUPT, "%s: pipe state %s cannot be read (%s): it may hold an "
                      "upload, so %s; repair it, or remove it if no pipe will resume from it", cmd,
                      path, why, strcmp(cmd, "gc") == 0 ? "gc --uploads aborts nothing"
                                                        : "uploads cannot say what is held");
        ex = cli_fail(c, S3L_ECORRUPT, &err, S3L_SIDE_CONFIG);
    } else if (rc == 0 && !bad && related && v.cmt.kind == S3L_COMMITTABLE_MULTIPART &&
               (rel || !v.url)) {
        char w[700];
        snprintf(w, sizeof(w), "held by pipe state %s (the committable of its checkpoint %llu)",
                 path, (unsigned long long)v.checkpoint);
        /* A state without its url (written before pipe recorded it): held by the id alone. */
        rc = hold_add(out, v.url ? rel : NULL, v.cmt.upload_id, w);
    }
    free(rel);
    free(v.url);
    cli_pipe_state_view_cleanup(&v);
    if (rc)
        ex = cli_fail(c, rc, NULL, S3L_SIDE_CONFIG);
    return ex;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The pipe-*.json files of directory dir, in name order; a missing dir has none when
 * missing_ok. 0 or the exit code. */
static int one_dir(struct cli *c, const char *cmd, const char *url, const char *dir,
                   bool missing_ok, struct cli_holds *out)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (missing_ok && errno == ENOENT)
            return 0;
        return cli_usage(c, cmd, "--pipe-state %s: cannot be read (opendir: %s)", dir,
                         strerror(errno));
    }
    struct cli_strings names = {0};
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)))
        if (fnmatch("pipe-*.json", e->d_name, FNM_PERIOD) == 0)
            rc = cli_strings_add(&names, e->d_name);
    closedir(d);
    int ex = rc ? cli_fail(c, rc, NULL, S3L_SIDE_CONFIG) : 0;
    if (names.n)
        qsort(names.v, names.n, sizeof(*names.v), by_name);
    for (size_t i = 0; ex == 0 && i < names.n; i++) {
        size_t n = strlen(dir) + strlen(names.v[i]) + 2;
        char *path = malloc(n);
        if (!path) {
            ex = cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
            break;
        }
        snprintf(path, n, "%s/%s", dir, names.v[i]);
        ex = one_state(c, cmd, url, path, out);
        free(path);
    }
    cli_strings_free(&names);
    return ex;
}

int cli_pipe_holds(struct cli *c, const char *cmd, const char *url,
                   const struct cli_strings *paths, struct cli_holds *out)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    char dir[4096] = "";
    if (xdg && *xdg == '/') /* as pipe names its default state (cli_pipe_state_path) */
        snprintf(dir, sizeof(dir), "%s/s3land", xdg);
    else if (home && *home)
        snprintf(dir, sizeof(dir), "%s/.local/state/s3land", home);
    int ex = *dir ? one_dir(c, cmd, url, dir, true, out) : 0;
    for (size_t i = 0; ex == 0 && paths && i < paths->n; i++) {
        struct stat st;
        if (stat(paths->v[i], &st) != 0)
            ex = cli_usage(c, cmd, "--pipe-state %s: cannot be read (stat: %s)", paths->v[i],
                           strerror(errno));
        else if (S_ISDIR(st.st_mode))
            ex = one_dir(c, cmd, url, paths->v[i], false, out);
        else
            ex = one_state(c, cmd, url, paths->v[i], out);
    }
    return ex;
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
                    int64_t older_than, const struct cli_strings *keep,
                    const struct cli_holds *holds, const char *pipeline)
{
    struct s3l_dest_uploads_options o = {0};
    o.holds = holds ? holds->v : NULL;
    o.n_holds = holds ? holds->n : 0;
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

enum { U_URL = 256, U_OLDER, U_KEEP, U_JSON, U_PIPE_STATE };

static const struct option uploads_options[] = {
    {"url", required_argument, NULL, U_URL},
    {"older-than", required_argument, NULL, U_OLDER},
    {"keep", required_argument, NULL, U_KEEP},
    {"pipe-state", required_argument, NULL, U_PIPE_STATE},
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
    struct cli_strings states = {0};
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
        else if (opt == U_PIPE_STATE && cli_strings_add(&states, optarg) != 0)
            ex = cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
        else if (opt == U_PIPE_STATE)
            continue;
        else if (opt == U_JSON)
            c->json = true;
        else if (opt == 'q')
            c->quiet = true;
        else if (opt == 'h') {
            fputs(uploads_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_exit_codes_help, stdout);
            cli_strings_free(&states);
            return 0;
        } else if (opt != U_OLDER) {
            ex = cli_s3_option(c, "uploads", opt, &s3);
            if (ex < 0) {
                cli_strings_free(&states);
                return cli_bad_option(c, "uploads", uploads_options, argv[optind - 1]);
            }
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
    struct cli_holds holds = {0};
    if (ex == 0)
        ex = cli_pipe_holds(c, "uploads", url, &states, &holds);
    if (ex == 0)
        ex = cli_uploads_run(c, store, url, false, older, &keep, &holds, NULL);
    cli_holds_free(&holds);
    cli_strings_free(&states);
    cli_strings_free(&keep);
    s3l_store_free(store);
    s3l_free(url);
    return ex;
}
