/*
 * Helpers shared by the s3land subcommands: parsing sizes and durations, mapping library errors
 * to exit codes, and printing errors and JSON events.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

const char cli_exit_codes_help[] =
    "Exit codes:\n"
    "  0  success (also: nothing new to write)\n"
    "  1  usage: bad command line, options, URL or schema file\n"
    "  2  input: an input is missing, unreadable, an empty stdin, malformed\n"
    "     (the message names file, line and column), over --max-record-size, or changed\n"
    "     since the last commit (rotated, truncated, rewritten)\n"
    "  3  destination: the store failed (missing bucket, unreachable endpoint, no space,\n"
    "     I/O, corrupt state)\n"
    "  4  schema drift: a column's type differs from the table's schema record\n"
    "  5  fenced: a newer run of the same pipeline took over (generation fencing)\n"
    "  6  refused: not supported (replace/merge disposition, a backend not built in)\n"
    "  7  internal error or out of memory\n"
    "  8  access: the store refused the credentials or the access (AUTH_INVALID,\n"
    "     AUTH_EXPIRED, PERMISSION_DENIED), whichever step met it\n"
    "  130, 143  write stopped by SIGINT or SIGTERM, after committing what it read\n";

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

/* The library parses sizes and durations, so options and config documents agree. */
bool cli_parse_size(const char *s, uint64_t *out) { return s3l_parse_size(s, out); }
int cli_parse_size_ex(const char *s, uint64_t *out) { return s3l_parse_size_ex(s, out); }

bool cli_parse_duration(const char *s, int64_t *out_ns) { return s3l_parse_duration(s, out_ns); }

/* A duration with an optional d (days) suffix, else cli_parse_duration's units (--older-than). */
bool cli_parse_age(const char *s, int64_t *ns)
{
    size_t n = strlen(s);
    if (n > 1 && s[n - 1] == 'd') {
        uint64_t days = 0;
        char buf[32];
        if (n - 1 >= sizeof(buf))
            return false;
        memcpy(buf, s, n - 1);
        buf[n - 1] = '\0';
        if (!cli_parse_u64(buf, &days) || days > 100000)
            return false;
        *ns = (int64_t)days * 86400LL * 1000000000LL;
        return true;
    }
    return cli_parse_duration(s, ns) && *ns >= 0;
}

int cli_exit_for(int code, enum s3l_pipeline_side side)
{
    switch (code) {
    case S3L_EOK:
        return CLI_EX_OK;
    case S3L_EINVALID_ARGUMENT:
    case S3L_EINVALID_CONFIG:
        return CLI_EX_USAGE;
    case S3L_EINVALID_INPUT:
        return CLI_EX_INPUT;
    case S3L_ESCHEMA_DRIFT:
        return CLI_EX_DRIFT;
    case S3L_EFENCED:
        return CLI_EX_FENCED;
    case S3L_EUNSUPPORTED:
        return CLI_EX_REFUSED;
    case S3L_ENOMEM:
    case S3L_EINTERNAL:
        return CLI_EX_INTERNAL;
    case S3L_EAUTH_INVALID:
    case S3L_EAUTH_EXPIRED:
    case S3L_EPERMISSION_DENIED:
        /* An input file we may not read is the input's fault; any other refusal is access. */
        return side == S3L_SIDE_INPUT ? CLI_EX_INPUT : CLI_EX_ACCESS;
    default:
        /* NOT_FOUND, IO, TRANSIENT, TOO_LARGE ...: the side decides. */
        return side == S3L_SIDE_INPUT    ? CLI_EX_INPUT
               : side == S3L_SIDE_CONFIG ? CLI_EX_USAGE
                                         : CLI_EX_DEST;
    }
}

void cli_emit_json_to(FILE *f, void *json_value)
{
    json_t *v = json_value;
    if (!v)
        return;
    char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text) {
        fputs(text, f);
        fputc('\n', f);
        fflush(f);
        json_free_t jfree;
        json_get_alloc_funcs(NULL, &jfree); /* the free matching jansson's allocator */
        jfree(text);
    }
    json_decref(v);
}

void cli_emit_json(void *json_value)
{
    cli_emit_json_to(stdout, json_value);
}

int cli_fail(struct cli *c, int code, const struct s3l_error *err, enum s3l_pipeline_side side)
{
    int ex = cli_exit_for(code, side);
    const char *msg = err && err->message[0] ? err->message : s3l_strerror(code);
    if (c->json) {
        cli_emit_json(json_pack("{s:s, s:s, s:s, s:i}", "event", "error", "code",
                                s3l_error_name(code), "message", msg, "exit", ex));
    }
    fprintf(stderr, "%s: error: %s [%s]\n", c->prog, msg, s3l_error_name(code));
    return ex;
}

int cli_usage(struct cli *c, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s %s: ", c->prog, cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s %s --help'.\n", c->prog, cmd);
    va_end(ap);
    return CLI_EX_USAGE;
}

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions) of a and b, for
 * names of up to 63 characters; longer ones count as far apart. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    enum { N = 64 };
    if (na >= N || nb >= N)
        return SIZE_MAX;
    size_t d[N][N];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[na][nb];
}

const char *cli_suggest_option(const struct option *opts, const char *arg)
{
    if (strncmp(arg, "--", 2) != 0)
        return NULL;
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (const struct option *o = opts; o->name; o++) {
        size_t d = edit_distance(name, n, o->name, strlen(o->name));
        if (d < best_d) {
            best_d = d;
            best = o->name;
        }
    }
    /* Close enough to be a typo: at most 2 edits, and fewer than half the name's letters. */
    return best && best_d <= 2 && best_d * 2 < n ? best : NULL;
}

int cli_bad_option(struct cli *c, const char *cmd, const struct option *opts, const char *arg)
{
    if (strncmp(arg, "--", 2) == 0) {
        size_t n = strcspn(arg + 2, "=");
        for (const struct option *o = opts; o->name; o++)
            if (strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0)
                return cli_usage(c, cmd, "%s needs a value", arg);
    }
    const char *near = cli_suggest_option(opts, arg);
    if (near)
        return cli_usage(c, cmd, "unknown option %s (did you mean --%s?)", arg, near);
    return cli_usage(c, cmd, "unknown option %s", arg);
}

bool cli_common_flag(struct cli *c, const char *arg)
{
    if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
        c->quiet = true;
        return true;
    }
    if (strcmp(arg, "--json") == 0) {
        c->json = true;
        return true;
    }
    return false;
}

int cli_strings_add(void *ctx, const char *s)
{
    struct cli_strings *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **p = s3l_realloc(l->v, cap * sizeof(*p));
        if (!p)
            return S3L_ENOMEM;
        l->v = p;
        l->cap = cap;
    }
    if (!(l->v[l->n] = s3l_strdup(s)))
        return S3L_ENOMEM;
    l->n++;
    return 0;
}

void cli_strings_free(struct cli_strings *l)
{
    for (size_t i = 0; i < l->n; i++)
        s3l_free(l->v[i]);
    s3l_free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

const char *cli_fmt_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)n);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
    return buf;
}

int cli_default_url(const char *url, char **out, struct s3l_error *err)
{
    return s3l_url_canonical(url ? url : "lake", out, err);
}

int cli_check_file_size(struct cli *c, const char *url, uint64_t file_size)
{
    /* A data file is one object: S3 stores at most 5 TiB in one (its part size is chosen from
     * the file size, s3l_s3_part_size, so 10,000 parts always hold it). */
    if (strncmp(url, "s3://", 5) == 0 && file_size > S3L_S3_MAX_OBJECT)
        return cli_usage(c, "write",
                         "--file-size %llu bytes: over S3's limit of 5 TiB (%llu bytes) per "
                         "object, and every data file is one object of the s3:// destination",
                         (unsigned long long)file_size, (unsigned long long)S3L_S3_MAX_OBJECT);
    return 0;
}

int cli_s3_option(struct cli *c, const char *cmd, int opt, struct cli_s3 *s3)
{
    switch (opt) {
    case CLI_O_ENDPOINT:
        s3->endpoint = optarg;
        return 0;
    case CLI_O_REGION:
        s3->region = optarg;
        return 0;
    case CLI_O_PATH_STYLE:
        if (!cli_parse_path_style(optarg, &s3->path_style))
            return cli_usage(c, cmd, "--path-style=%s: expected yes, no or auto", optarg);
        return 0;
    default:
    {
        int rc = cli_sse_option(c, cmd, opt, s3); /* sse.c; -1: not one of its flags */
        return rc != -1 ? rc : cli_access_option(c, cmd, opt, &s3->access);
    }
    }
}

int cli_open_store(struct cli *c, const char *url_arg, struct cli_s3 *s3, bool create,
                   struct s3l_store **store, char **url)
{
    struct s3l_error err = {0};
    int rc = cli_default_url(url_arg, url, &err);
    if (rc == 0 && strncmp(*url, "s3://", 5) == 0) {
        int ex = cli_access_resolve(c, &s3->access, &s3->region, &s3->endpoint);
        if (ex != 0) {
            s3l_free(*url);
            *url = NULL;
            return ex;
        }
    }
    if (rc == 0) {
        struct s3l_store_options so = {0};
        so.version = S3L_STORE_OPTIONS_VERSION;
        so.create = create;
        cli_s3_store_options(s3, &so);
        rc = s3l_store_open(*url, &so, store, &err);
    }
    if (rc == 0)
        return 0;
    s3l_free(*url); /* no caller has a use for it after a failure (check once leaked it) */
    *url = NULL;
    return cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
}

int cli_dest_option(struct cli *c, const char *cmd, int opt, struct cli_dest_args *d)
{
    switch (opt) {
    case CLI_O_URL:
        d->url_arg = optarg;
        return 0;
    case CLI_O_CONFIG:
        d->config = optarg;
        return 0;
    case CLI_O_SECRETS_DIR:
        d->secrets.dir = optarg;
        return 0;
    default:
        return cli_s3_option(c, cmd, opt, &d->s3);
    }
}

int cli_dest_args_check(struct cli *c, const char *cmd, const struct cli_dest_args *d)
{
    if (d->config && (d->url_arg || d->s3.endpoint || d->s3.region || d->s3.path_style))
        return cli_usage(c, cmd, "--config gives the destination: --url, --endpoint, --region "
                                 "and --path-style go with no --config");
    return 0;
}

const char cli_s3_help[] =
    "S3 connection (s3:// URLs; ignored for file://):\n"
    "  --endpoint URL         an S3-compatible endpoint, http(s)://host[:port] (default:\n"
    "                         $AWS_ENDPOINT_URL_S3, then $AWS_ENDPOINT_URL, else AWS)\n"
    "  --region R             the region (default: $AWS_REGION, then $AWS_DEFAULT_REGION,\n"
    "                         else us-east-1)\n"
    "  --path-style[=yes|no|auto]  address buckets as ENDPOINT/BUCKET/KEY (yes, the value\n"
    "                         when none is given), as BUCKET.HOST/KEY (no), or decide: path-style\n"
    "                         with an endpoint, virtual-hosted on AWS (auto, the default)\n"
    "\n";

bool cli_parse_codec(const char *s, enum s3l_codec *out)
{
    static const struct {
        const char *name;
        enum s3l_codec codec;
    } codecs[] = {{"zstd", S3L_CODEC_ZSTD},
                  {"snappy", S3L_CODEC_SNAPPY},
                  {"gzip", S3L_CODEC_GZIP},
                  {"none", S3L_CODEC_NONE},
                  {"uncompressed", S3L_CODEC_NONE}};
    for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
        if (strcmp(s, codecs[i].name) == 0) {
            *out = codecs[i].codec;
            return true;
        }
    return false;
}

bool cli_parse_path_style(const char *arg, int *out)
{
    static const struct {
        const char *name;
        int value;
    } names[] = {{"yes", 1}, {"true", 1}, {"path", 1},     {"no", -1},
                 {"false", -1}, {"virtual", -1}, {"auto", 0}};
    if (!arg) {
        *out = 1;
        return true;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(arg, names[i].name) == 0) {
            *out = names[i].value;
            return true;
        }
    return false;
}

void cli_s3_store_options(struct cli_s3 *s, struct s3l_store_options *so)
{
    so->endpoint = s->endpoint;
    so->region = s->region;
    memset(&s->opts, 0, sizeof(s->opts));
    s->opts.version = S3L_S3_STORE_OPTIONS_VERSION;
    cli_sse_store_options(s, &s->opts); /* sse.c */
    memset(&s->cfg, 0, sizeof(s->cfg));
    s->cfg.version = S3L_S3_CONFIG_VERSION;
    s->cfg.path_style = s->path_style;
    s->cfg.credentials = s->access.creds;
    cli_s3_trace(&s->cfg); /* region and endpoint: so's, which cli_access_resolve filled */
    s->opts.client = &s->cfg;
    so->s3 = &s->opts;
}

const char *cli_plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

int cli_sweep_stale(struct s3l_store *store, const char *prefix, uint64_t *removed,
                    struct s3l_error *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return s3l_store_sweep(store, prefix, now - 1000000000, removed, err);
}

/* ---- Stopping on SIGINT and SIGTERM ---- */

volatile sig_atomic_t cli_stop_signal;

static void on_stop_signal(int sig)
{
    cli_stop_signal = sig;
    signal(sig, SIG_DFL);
}

void cli_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a blocking read returns and the stop is seen */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
