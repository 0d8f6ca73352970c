/*
 * s3land cat --url URL: prints the lines of the NDJSON objects under URL (s3:// or file://)
 * through the object source (include/s3l/object_source.h), in the source's order: objects by
 * s3l_object_key_compare (part-2 before part-10; a two-phase sink's objects by run, then
 * checkpoint), each line once, blank lines dropped, every line ended by one LF. Only committed
 * objects are listed: pending multipart uploads are not objects, and names under _openetl/ (a
 * table destination's metadata) are never read. Nothing is parsed: a line is printed as stored.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char cat_help[] =
    "Usage: s3land cat --url URL [OPTIONS]\n"
    "\n"
    "Prints the lines of the NDJSON objects under URL (s3://BUCKET/PREFIX or file:///DIR) in\n"
    "the object source's order: numbers in names compare as numbers (part-2 before part-10), a\n"
    "two-phase sink's objects (sub<N>-<run>-<ckpt>.ndjson) in run and checkpoint order. Objects\n"
    "ending in .gz or .zst are decompressed. Pending multipart uploads are not objects and are\n"
    "never shown; keys under _openetl/ are never read. Needs s3:ListBucket and s3:GetObject.\n"
    "\n"
    "Options:\n"
    "  --url URL             where the objects are (required)\n"
    "  --chunk-size SIZE     bytes per ranged GetObject (default 1MiB, at least 4KiB)\n"
    "  --max-record-size SIZE  longest line (default 16MiB); a longer one is an error naming\n"
    "                        the object and the line, and cat goes on after it (exit 2 at the\n"
    "                        end)\n"
    "  --json                a summary object on stderr at the end (objects, lines, bytes)\n"
    "  -h, --help            this help\n"
    "\n";

enum { O_URL = 1, O_CHUNK, O_MAX_RECORD, O_JSON };
static const struct option cat_options[] = {
    {"url", required_argument, NULL, O_URL},
    {"chunk-size", required_argument, NULL, O_CHUNK},
    {"max-record-size", required_argument, NULL, O_MAX_RECORD},
    {"json", no_argument, NULL, O_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    CLI_S3_LONG_OPTIONS,
    {NULL, 0, NULL, 0},
};

struct cat_args {
    const char *url;
    uint64_t chunk, max_record;
    bool help;
    struct cli_s3 s3;
};

static int size_arg(struct cli *c, const char *name, const char *v, uint64_t *out)
{
    if (cli_parse_size_ex(v, out) != 0 || *out == 0 || *out > (1ull << 30))
        return cli_usage(c, "cat", "--%s: expected a size from 1 byte to 1GiB (e.g. 1MiB), got %s",
                         name, v);
    return 0;
}

static int parse(struct cli *c, int argc, char **argv, struct cat_args *a)
{
    memset(a, 0, sizeof(*a));
    optind = 1;
    opterr = 0;
    int opt, ex = 0;
    while (ex == 0 && (opt = getopt_long(argc, argv, "qh", cat_options, NULL)) != -1) {
        switch (opt) {
        case O_URL:
            a->url = optarg;
            break;
        case O_CHUNK:
            ex = size_arg(c, "chunk-size", optarg, &a->chunk);
            if (ex == 0 && a->chunk < S3L_OBJECT_SOURCE_CHUNK_MIN)
                ex = cli_usage(c, "cat", "--chunk-size: at least 4KiB, got %s", optarg);
            break;
        case O_MAX_RECORD:
            ex = size_arg(c, "max-record-size", optarg, &a->max_record);
            break;
        case O_JSON:
            c->json = true;
            break;
        case 'q':
            c->quiet = true;
            break;
        case 'h':
            a->help = true;
            return 0;
        default:
            ex = cli_s3_option(c, "cat", opt, &a->s3);
            if (ex < 0)
                return cli_bad_option(c, "cat", cat_options, argv[optind - 1]);
            break;
        }
    }
    if (ex)
        return ex;
    if (optind < argc)
        return cli_usage(c, "cat", "unexpected argument %s", argv[optind]);
    if (!a->url)
        return cli_usage(c, "cat", "--url URL is needed: where the objects are");
    return 0;
}

struct cat_totals {
    uint64_t lines, bytes, bad;
};

/* Every line to stdout; a bad line is reported and skipped, anything else stops. */
static int print_lines(struct cli *c, struct s3l_object_source *src, struct cat_totals *t)
{
    int first_bad = 0;
    for (;;) {
        struct s3l_object_line line;
        struct s3l_error err = {0};
        int rc = s3l_object_source_next(src, &line, &err);
        if (rc == 0)
            break;
        if (rc == S3L_EINVALID_INPUT && !s3l_object_source_failed(src)) {
            fflush(stdout);
            fprintf(stderr, "%s: error: %s [%s]\n", c->prog, err.message, s3l_error_name(rc));
            t->bad++;
            first_bad = first_bad ? first_bad : rc;
            continue;
        }
        if (rc < 0) {
            fflush(stdout);
            return cli_fail(c, rc, &err, S3L_SIDE_INPUT);
        }
        if (fwrite(line.data, 1, line.len, stdout) != line.len || putchar('\n') == EOF) {
            struct s3l_error e = {0};
            s3l_error_set(&e, S3L_EIO, "cat: writing to stdout failed");
            return cli_fail(c, S3L_EIO, &e, S3L_SIDE_NONE);
        }
        t->lines++;
        t->bytes += line.len + 1;
    }
    if (fflush(stdout) != 0) {
        struct s3l_error e = {0};
        s3l_error_set(&e, S3L_EIO, "cat: writing to stdout failed");
        return cli_fail(c, S3L_EIO, &e, S3L_SIDE_NONE);
    }
    return first_bad ? cli_exit_for(first_bad, S3L_SIDE_INPUT) : 0;
}

int cli_cmd_cat(struct cli *c, int argc, char **argv)
{
    struct cat_args a;
    int ex = parse(c, argc, argv, &a);
    if (ex || a.help) {
        if (a.help) {
            fputs(cat_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_access_help, stdout);
            fputs(cli_exit_codes_help, stdout);
        }
        return ex;
    }
    struct s3l_store *store = NULL;
    char *url = NULL;
    ex = cli_open_store(c, a.url, &a.s3, false, &store, &url);
    if (ex)
        return ex;
    struct s3l_object_source_options so = {
        .version = S3L_OBJECT_SOURCE_OPTIONS_VERSION,
        .store = store,
        .chunk_bytes = (size_t)a.chunk,
        .max_record_bytes = (size_t)a.max_record,
    };
    struct s3l_object_source *src = NULL;
    struct s3l_error err = {0};
    int rc = s3l_object_source_open(&so, &src, &err);
    struct cat_totals t = {0};
    if (rc) {
        s3l_error_prefix(&err, "cat %s", url);
        ex = cli_fail(c, rc, &err, S3L_SIDE_INPUT);
    } else {
        ex = print_lines(c, src, &t);
    }
    if (c->json && rc == 0) {
        json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:i}", "event", "cat", "url", url,
                              "objects", (json_int_t)s3l_object_source_count(src), "lines",
                              (json_int_t)t.lines, "bad_lines", (json_int_t)t.bad, "exit", ex);
        cli_emit_json_to(stderr, j);
    }
    s3l_object_source_free(src);
    s3l_store_free(store);
    s3l_free(url);
    return ex;
}
