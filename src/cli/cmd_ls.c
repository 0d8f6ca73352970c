/*
 * `s3land ls` and `s3land schema`: what a destination holds. Tables come from their schema
 * records; a table's epochs from its markers; its files from the table directory, each with the
 * row count read from its own Parquet footer (include/s3l/pq_footer.h, through the store, so the
 * count is the file's, not what a marker claims) and whether a marker covers it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char ls_help[] =
    "Usage: s3land ls [--url URL] [--table TABLE [--namespace NS]] [--committed]\n"
    "\n"
    "Without --table: every table of the destination (those with a schema record), with its\n"
    "committed files, rows, bytes and epochs.\n"
    "With --table: the table's epochs (one marker per pipeline and epoch: generation, files,\n"
    "rows) and its data files, each with its size, its row count read from its Parquet footer,\n"
    "and whether a marker covers it (committed) or not (an epoch still being committed).\n"
    "\n"
    "  --url URL          the destination (default ./lake)\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --profile NAME, --role-arn ARN, --external-id ID, --role-session-name N,\n"
    "  --role-duration D     access: which credentials, a role on top (below)\n"
    "  --table NAME       the table to show\n"
    "  --namespace NAME   the table's namespace\n"
    "  --committed        only files that a marker covers\n"
    "  -q, --quiet        only the listing, no totals\n"
    "  --json             one JSON object per line: {\"table\"...}, {\"marker\"...},\n"
    "                     {\"file\"...}\n"
    "  -h, --help         this help\n"
    "\n";

static const char schema_help[] =
    "Usage: s3land schema [--url URL] --table TABLE [--namespace NS]\n"
    "\n"
    "Prints the table's schema record (URL/_openetl/schemas/T.json): every column with its\n"
    "Arrow type, nullability and key flag. With --json, the record as one JSON line.\n"
    "\n"
    "  --url URL          the destination (default ./lake)\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --profile NAME, --role-arn ARN, --external-id ID, --role-session-name N,\n"
    "  --role-duration D     access: which credentials, a role on top (below)\n"
    "  --table NAME / --namespace NAME   the table\n"
    "  --json / -h, --help\n"
    "\n";

enum { O_URL = 256, O_TABLE, O_NS, O_COMMITTED, O_JSON };

static const struct option ls_options[] = {
    {"url", required_argument, NULL, O_URL},
    {"table", required_argument, NULL, O_TABLE},
    {"namespace", required_argument, NULL, O_NS},
    {"committed", no_argument, NULL, O_COMMITTED},
    CLI_S3_LONG_OPTIONS,
    {"json", no_argument, NULL, O_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct ls_args {
    const char *url, *table, *ns;
    struct cli_s3 s3;
    bool committed, help;
};

static int parse(struct cli *c, const char *cmd, int argc, char **argv, struct ls_args *a)
{
    memset(a, 0, sizeof(*a));
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "qh", ls_options, NULL)) != -1) {
        switch (opt) {
        case O_URL:
            a->url = optarg;
            break;
        case O_TABLE:
            a->table = optarg;
            break;
        case O_NS:
            a->ns = optarg;
            break;
        case O_COMMITTED:
            a->committed = true;
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
        default: {
            int ex = cli_s3_option(c, cmd, opt, &a->s3);
            if (ex < 0)
                return cli_bad_option(c, cmd, ls_options, argv[optind - 1]);
            if (ex > 0)
                return ex;
            break;
        }
        }
    }
    if (optind < argc)
        return cli_usage(c, cmd, "unexpected argument %s", argv[optind]);
    return 0;
}

/* ---- Row counts from footers, read through the store ---- */

struct store_file {
    struct s3l_store *s;
    const char *key;
};

static int read_range(void *ctx, uint64_t off, void *buf, size_t len, struct s3l_error *err)
{
    struct store_file *f = ctx;
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = s3l_store_get(f->s, f->key, off, len, len, &data, &n, NULL, err);
    if (rc == 0 && n != len)
        rc = s3l_error_set(err, S3L_ECORRUPT, "%s: short read at offset %llu", f->key,
                           (unsigned long long)off);
    if (rc == 0)
        memcpy(buf, data, len);
    s3l_free(data);
    return rc;
}

static int footer_rows(struct s3l_store *s, const char *key, uint64_t size, int64_t *rows,
                       struct s3l_error *err)
{
    struct store_file f = {s, key};
    struct s3l_pq_footer_options o;
    s3l_pq_footer_options_init(&o);
    o.name = key;
    struct s3l_pq_footer *ft = NULL;
    int rc = s3l_pq_footer_read(read_range, &f, size, &o, &ft, err);
    if (rc == 0)
        *rows = ft->num_rows;
    s3l_pq_footer_free(ft);
    return rc;
}

/* ---- ls of one table ---- */

/* A listed data file, kept until the listing ends: a store may not take other calls from inside
 * its listing callback (the S3 backend holds its connection while it lists). */
struct listed_file {
    char *key;
    uint64_t size;
    bool committed;
};

struct table_ls {
    struct cli *c;
    FILE *out; /* the listing, printed on stdout only when the whole of it was read */
    struct s3l_store *s;
    const char *table;
    bool print; /* one line per file and marker (the detailed view) */
    struct listed_file *listed;
    size_t n_listed, cap_listed;
    uint64_t files, bytes, rows, uncommitted, markers, marker_rows;
    int rc;
    struct s3l_error err;
};

static int on_marker(void *ctx, const struct s3l_dest_marker *m)
{
    struct table_ls *t = ctx;
    t->markers++;
    t->marker_rows += m->rows;
    if (!t->print)
        return 0; /* the table overview only counts epochs */
    if (t->c->json) {
        cli_emit_json_to(t->out,
                         json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "marker", m->key,
                                   "table", t->table, "pipeline", m->pipeline, "epoch",
                                   (json_int_t)m->epoch, "generation", (json_int_t)m->generation,
                                   "files", (json_int_t)m->n_files, "rows", (json_int_t)m->rows,
                                   "deadletter_files", (json_int_t)m->n_deadletter));
        return 0;
    }
    fprintf(t->out, "  epoch %llu  pipeline %s  generation %llu  %zu file%s  %llu row%s",
            (unsigned long long)m->epoch, m->pipeline, (unsigned long long)m->generation,
            m->n_files, m->n_files == 1 ? "" : "s", (unsigned long long)m->rows,
            m->rows == 1 ? "" : "s");
    if (m->n_deadletter)
        fprintf(t->out, "  %zu dead-letter file%s", m->n_deadletter,
                m->n_deadletter == 1 ? "" : "s");
    fprintf(t->out, "\n");
    return 0;
}

static int on_file(void *ctx, const struct s3l_object_info *info, bool committed)
{
    struct table_ls *t = ctx;
    if (t->n_listed == t->cap_listed) {
        size_t cap = t->cap_listed ? t->cap_listed * 2 : 64;
        struct listed_file *p = s3l_realloc(t->listed, cap * sizeof(*p));
        if (!p)
            return S3L_ENOMEM;
        t->listed = p;
        t->cap_listed = cap;
    }
    struct listed_file *f = &t->listed[t->n_listed];
    if (!(f->key = s3l_strdup(info->key)))
        return S3L_ENOMEM;
    f->size = info->size;
    f->committed = committed;
    t->n_listed++;
    return 0;
}

/* Reads each listed file's row count from its footer, counts and prints it. */
static void show_file(struct table_ls *t, const struct listed_file *f)
{
    int64_t rows = -1;
    struct s3l_error e = {0};
    int rc = footer_rows(t->s, f->key, f->size, &rows, &e);
    if (rc && !t->rc) {
        t->rc = rc;
        t->err = e;
    }
    t->files++;
    t->bytes += f->size;
    if (rows > 0)
        t->rows += (uint64_t)rows;
    t->uncommitted += !f->committed;
    if (!t->print)
        return;
    if (t->c->json) {
        cli_emit_json_to(t->out, json_pack("{s:s, s:s, s:I, s:I, s:b}", "file", f->key, "table",
                                           t->table, "size", (json_int_t)f->size, "rows",
                                           (json_int_t)rows, "committed", f->committed));
        return;
    }
    char sz[32];
    fprintf(t->out, "  %s  %s  %lld row%s%s\n", f->key, cli_fmt_bytes(f->size, sz, sizeof(sz)),
            (long long)rows, rows == 1 ? "" : "s", f->committed ? "" : "  (not committed yet)");
}

static int list_and_show_files(struct table_ls *t, bool committed_only, struct s3l_error *err)
{
    int rc = s3l_dest_list_files(t->s, t->table, committed_only, on_file, t, err);
    if (rc == S3L_ENOMEM && !err->code)
        s3l_error_set(err, rc, "out of memory listing table %s", t->table);
    for (size_t i = 0; i < t->n_listed; i++) {
        if (rc == 0)
            show_file(t, &t->listed[i]);
        s3l_free(t->listed[i].key);
    }
    s3l_free(t->listed);
    t->listed = NULL;
    t->n_listed = t->cap_listed = 0;
    return rc;
}

static int ls_table(struct cli *c, FILE *out, struct s3l_store *s, const char *url,
                    const char *tpath, bool committed_only, bool detail)
{
    struct table_ls t;
    memset(&t, 0, sizeof(t));
    t.c = c;
    t.out = out;
    t.s = s;
    t.table = tpath;
    t.print = detail;
    struct s3l_error err = {0};
    int rc = 0;
    if (detail) {
        if (!c->json)
            fprintf(out, "table %s at %s\nepochs:\n", tpath, url);
        rc = s3l_dest_list_markers(s, tpath, on_marker, &t, &err);
        if (rc == 0 && !c->json)
            fprintf(out, "files:\n");
        if (rc == 0)
            rc = list_and_show_files(&t, committed_only, &err);
    } else {
        /* The overview counts epochs too, in text and JSON alike. */
        rc = s3l_dest_list_markers(s, tpath, on_marker, &t, &err);
        if (rc == 0)
            rc = list_and_show_files(&t, true, &err);
    }
    if (rc == 0 && t.rc) {
        rc = t.rc;
        err = t.err;
    }
    if (rc)
        return cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
    char sz[32];
    if (c->json) {
        cli_emit_json_to(out, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "table", tpath, "files",
                                        (json_int_t)t.files, "rows", (json_int_t)t.rows, "bytes",
                                        (json_int_t)t.bytes, "epochs", (json_int_t)t.markers,
                                        "uncommitted_files", (json_int_t)t.uncommitted));
    } else if (detail) {
        if (!c->quiet)
            fprintf(out,
                    "total: %llu file%s, %llu row%s (from footers), %s of data files; "
                    "%llu epoch%s\n",
                    (unsigned long long)t.files, t.files == 1 ? "" : "s",
                    (unsigned long long)t.rows, t.rows == 1 ? "" : "s",
                    cli_fmt_bytes(t.bytes, sz, sizeof(sz)), (unsigned long long)t.markers,
                    t.markers == 1 ? "" : "s");
    } else {
        fprintf(out, "  %-30s %6llu %-5s %12llu %-4s %12s %6llu %s\n", tpath,
                (unsigned long long)t.files, t.files == 1 ? "file" : "files",
                (unsigned long long)t.rows, t.rows == 1 ? "row" : "rows",
                cli_fmt_bytes(t.bytes, sz, sizeof(sz)), (unsigned long long)t.markers,
                t.markers == 1 ? "epoch" : "epochs");
    }
    return CLI_EX_OK;
}

/* Whether table tpath has anything at the store: its schema record, a marker or a file (a table
 * whose schema record was removed to accept a type change still lists). */
static int table_exists(struct s3l_store *s, const char *tpath, bool *exists,
                        struct s3l_error *err)
{
    char *json = NULL;
    size_t len = 0;
    int rc = s3l_dest_read_schema(s, tpath, &json, &len, err);
    s3l_free(json);
    *exists = rc == 0;
    if (rc != S3L_ENOT_FOUND)
        return rc;
    s3l_error_clear(err);
    struct table_ls t;
    memset(&t, 0, sizeof(t));
    t.s = s;
    t.table = tpath;
    rc = s3l_dest_list_markers(s, tpath, on_marker, &t, err);
    if (rc == 0)
        rc = s3l_dest_list_files(s, tpath, false, on_file, &t, err);
    *exists = t.markers > 0 || t.n_listed > 0;
    for (size_t i = 0; i < t.n_listed; i++)
        s3l_free(t.listed[i].key);
    s3l_free(t.listed);
    return rc;
}

int cli_cmd_ls(struct cli *c, int argc, char **argv)
{
    struct ls_args a;
    int ex = parse(c, "ls", argc, argv, &a);
    if (ex || a.help) {
        if (a.help) {
            fputs(ls_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_access_help, stdout);
            fputs(cli_exit_codes_help, stdout);
        }
        return ex;
    }
    /* The listing is built in memory and printed only when all of it was read: a failure at
     * any step prints the error alone, never a header or part of a listing before it. */
    char *buf = NULL;
    size_t buf_len = 0;
    FILE *out = open_memstream(&buf, &buf_len);
    if (!out)
        return cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_NONE);
    struct s3l_store *s = NULL;
    char *url = NULL;
    ex = cli_open_store(c, a.url, &a.s3, false, &s, &url); /* ls and schema only read */
    if (ex == 0 && a.table) {
        char *tpath = NULL;
        struct s3l_error err = {0};
        bool exists = false;
        int rc = s3l_dest_table_path(a.ns, a.table, &tpath, &err);
        if (rc)
            ex = cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
        else if ((rc = table_exists(s, tpath, &exists, &err)) != 0)
            ex = cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
        else if (!exists)
            ex = cli_fail(c, S3L_ENOT_FOUND,
                          (s3l_error_set(&err, S3L_ENOT_FOUND,
                                         "table %s not found at %s: no schema record, marker or "
                                         "file (s3land ls --url %s lists the tables)",
                                         tpath, url, url),
                           &err),
                          S3L_SIDE_DESTINATION);
        else
            ex = ls_table(c, out, s, url, tpath, a.committed, true);
        s3l_free(tpath);
    } else if (ex == 0) {
        struct cli_strings at = {0};
        struct s3l_error err = {0};
        if (!c->json)
            fprintf(out, "tables at %s:\n", url);
        int rc = s3l_dest_list_tables(s, cli_strings_add, &at, &err);
        if (rc == S3L_ENOMEM && !err.code)
            s3l_error_set(&err, rc, "out of memory listing the tables of %s", url);
        ex = rc ? cli_fail(c, rc, &err, S3L_SIDE_DESTINATION) : 0;
        for (size_t i = 0; i < at.n; i++) {
            int ex1 = rc == 0 ? ls_table(c, out, s, url, at.v[i], true, false) : 0;
            if (ex1 && !ex)
                ex = ex1;
        }
        if (rc == 0 && at.n == 0 && !c->json)
            fprintf(out, "  (none)\n");
        cli_strings_free(&at);
    }
    fclose(out);
    if (ex == 0)
        fwrite(buf, 1, buf_len, stdout);
    free(buf);
    s3l_store_free(s);
    s3l_free(url);
    return ex;
}

int cli_cmd_schema(struct cli *c, int argc, char **argv)
{
    struct ls_args a;
    int ex = parse(c, "schema", argc, argv, &a);
    if (ex || a.help) {
        if (a.help) {
            fputs(schema_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_access_help, stdout);
            fputs(cli_exit_codes_help, stdout);
        }
        return ex;
    }
    if (!a.table)
        return cli_usage(c, "schema", "--table is required");
    struct s3l_store *s = NULL;
    char *url = NULL, *tpath = NULL, *json = NULL;
    size_t len = 0;
    struct s3l_error err = {0};
    ex = cli_open_store(c, a.url, &a.s3, false, &s, &url);
    if (ex == 0) {
        int rc = s3l_dest_table_path(a.ns, a.table, &tpath, &err);
        if (rc == 0)
            rc = s3l_dest_read_schema(s, tpath, &json, &len, &err);
        if (rc == S3L_ENOT_FOUND)
            s3l_error_prefix(&err, "table %s has no schema record at %s", tpath, url);
        if (rc)
            ex = cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
    }
    if (ex == 0 && c->json) {
        json_error_t jerr;
        json_t *doc = json_loadb(json, len, 0, &jerr);
        cli_emit_json(json_pack("{s:s, s:o*}", "table", tpath, "record", doc));
    } else if (ex == 0) {
        if (!c->quiet)
            printf("table %s at %s:\n", tpath, url);
        fwrite(json, 1, len, stdout);
        if (len && json[len - 1] != '\n')
            putchar('\n');
    }
    s3l_free(json);
    s3l_free(tpath);
    s3l_store_free(s);
    s3l_free(url);
    return ex;
}
