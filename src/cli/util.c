/*
 * Helpers shared by the s3land subcommands: parsing sizes and durations, mapping library errors
 * to exit codes, and printing errors and JSON events.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
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
    "  2  input: an input is missing, unreadable, empty where data is needed, malformed\n"
    "     (the message names file, line and column), over --max-record-size, or changed\n"
    "     since the last commit (rotated, truncated, rewritten)\n"
    "  3  destination: the store refused or failed (permission, no space, I/O, corrupt state)\n"
    "  4  schema drift: a column's type differs from the table's schema record\n"
    "  5  fenced: a newer run of the same pipeline took over (generation fencing)\n"
    "  6  refused: not supported (replace/merge disposition, a backend not built in)\n"
    "  7  internal error or out of memory\n"
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

bool cli_parse_size(const char *s, uint64_t *out)
{
    return cli_parse_size_ex(s, out) == 0;
}

int cli_parse_size_ex(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {
        {"", 1},
        {"b", 1},
        {"k", 1ULL << 10},
        {"kib", 1ULL << 10},
        {"kb", 1000ULL},
        {"m", 1ULL << 20},
        {"mib", 1ULL << 20},
        {"mb", 1000000ULL},
        {"g", 1ULL << 30},
        {"gib", 1ULL << 30},
        {"gb", 1000000000ULL},
        {"t", 1ULL << 40},
        {"tib", 1ULL << 40},
        {"tb", 1000000000000ULL},
    };
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    bool overflow = errno == ERANGE;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            if (overflow || __builtin_mul_overflow((uint64_t)v, units[i].mult, out))
                return 1;
            return 0;
        }
    }
    return -1;
}

bool cli_parse_duration(const char *s, int64_t *out_ns)
{
    static const struct {
        const char *suffix;
        int64_t mult;
    } units[] = {
        {"", 1000000000LL},   {"s", 1000000000LL},    {"ms", 1000000LL},
        {"m", 60000000000LL}, {"min", 60000000000LL}, {"h", 3600000000000LL},
    };
    if (!s || !isdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 0)
        return false;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcasecmp(end, units[i].suffix) == 0)
            return !__builtin_mul_overflow((int64_t)v, units[i].mult, out_ns);
    return false;
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
    default:
        /* NOT_FOUND, PERMISSION_DENIED, IO, TOO_LARGE ...: the side decides. */
        return side == S3L_SIDE_INPUT    ? CLI_EX_INPUT
               : side == S3L_SIDE_CONFIG ? CLI_EX_USAGE
                                         : CLI_EX_DEST;
    }
}

void cli_emit_json(void *json_value)
{
    json_t *v = json_value;
    if (!v)
        return;
    char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        free(text);
    }
    json_decref(v);
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
        return -1;
    }
}

int cli_open_store(struct cli *c, const char *url_arg, struct cli_s3 *s3, bool create,
                   struct s3l_store **store, char **url)
{
    struct s3l_error err = {0};
    int rc = cli_default_url(url_arg, url, &err);
    if (rc == 0) {
        struct s3l_store_options so = {0};
        so.version = S3L_STORE_OPTIONS_VERSION;
        so.create = create;
        cli_s3_store_options(s3, &so);
        rc = s3l_store_open(*url, &so, store, &err);
    }
    return rc ? cli_fail(c, rc, &err, S3L_SIDE_DESTINATION) : 0;
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
    if (s->path_style == 0)
        return; /* the client decides; the environment gives the rest */
    memset(&s->cfg, 0, sizeof(s->cfg));
    s->cfg.version = S3L_S3_CONFIG_VERSION;
    s->cfg.path_style = s->path_style;
    memset(&s->opts, 0, sizeof(s->opts));
    s->opts.version = S3L_S3_STORE_OPTIONS_VERSION;
    s->opts.client = &s->cfg;
    so->s3 = &s->opts;
}
