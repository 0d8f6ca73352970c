/*
 * `s3land validate` and `s3land config-schema`: the config documents of docs/config.md.
 *   validate       checks Destination, Pipeline and Sink documents (YAML or JSON) with the
 *                  library's validator and prints each document's verdict; with --check-secrets
 *                  or --secrets-dir it also resolves every secret, as `run` will;
 *   config-schema  prints the JSON Schema of a kind, the one compiled into the binary (the same
 *                  bytes as schemas/KIND.schema.json).
 * Secrets are looked up here, not in the library (which reads no environment): the variable
 * S3LAND_SECRET_<NAME>, else the file NAME in --secrets-dir, one trailing newline stripped. No
 * value is ever printed: messages name the secret and the field.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char validate_help[] =
    "Usage: s3land validate [--check-secrets] [--secrets-dir DIR] FILE...\n"
    "\n"
    "Checks config documents (docs/config.md): each FILE holds one or several YAML documents\n"
    "separated by ---, or one JSON document (a name ending in .json), of kind Destination,\n"
    "Pipeline or Sink. Every document is checked against the JSON Schema of its kind (the one\n"
    "`s3land config-schema KIND` prints), then its cross references; each error names the file,\n"
    "the document (counted from 1) and the field: `spec.config.fileSize: expected a size like\n"
    "256MiB, got \"big\"`. Unknown fields are errors.\n"
    "\n"
    "  --check-secrets    also resolve every { secret: NAME }: from $S3LAND_SECRET_<NAME>, else\n"
    "                     the file NAME in --secrets-dir (one trailing newline stripped); a\n"
    "                     missing secret is an error naming it and the field, never a value\n"
    "  --secrets-dir DIR  the mounted-secret directory (implies --check-secrets)\n"
    "  -q, --quiet        errors only\n"
    "  --json             one event per document: {\"event\":\"valid\"|\"invalid\", \"file\",\n"
    "                     \"document\", \"kind\", \"name\" | \"path\", \"check\", \"message\"}, then\n"
    "                     a summary (check: read, syntax, schema, references, secrets)\n"
    "  -h, --help\n"
    "\n"
    "Exit codes: 0 every document is valid; 1 a document is invalid or a file cannot be read;\n"
    "7 out of memory.\n";

static const char schema_help[] =
    "Usage: s3land config-schema destination|pipeline|sink\n"
    "\n"
    "Prints the JSON Schema (2020-12) of a config document kind, as shipped in\n"
    "schemas/KIND.schema.json and installed under share/s3land/schemas/.\n";

/* The longest secret value read from a file (a key, a token, a certificate). */
#define SECRET_MAX (64 * 1024)

static int read_secret_file(const char *dir, const char *name, char **value, struct s3l_error *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? S3L_ENOT_FOUND
                               : s3l_error_set_errno(err, S3L_EIO, errno, "open %s", path);
    char *buf = s3l_malloc(SECRET_MAX + 1);
    if (!buf) {
        fclose(f);
        return S3L_ENOMEM;
    }
    size_t n = fread(buf, 1, SECRET_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > SECRET_MAX) {
        memset(buf, 0, SECRET_MAX + 1);
        s3l_free(buf);
        return bad ? s3l_error_set(err, S3L_EIO, "read %s failed", path)
                   : s3l_error_set(err, S3L_ETOO_LARGE, "%s is over 64 KiB", path);
    }
    /* The mounted-secret layout (Kubernetes, Docker): one trailing newline is not the value's. */
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    buf[n] = 0;
    *value = buf;
    return 0;
}

int cli_secret_lookup(void *ctx, const char *name, char **value, struct s3l_error *err)
{
    const struct cli_secret_src *src = ctx;
    char var[256];
    snprintf(var, sizeof(var), "S3LAND_SECRET_%s", name);
    const char *env = getenv(var);
    if (env) {
        *value = s3l_strdup(env);
        return *value ? 0 : S3L_ENOMEM;
    }
    if (src->dir) {
        int rc = read_secret_file(src->dir, name, value, err);
        if (rc != S3L_ENOT_FOUND)
            return rc;
        s3l_error_set(err, S3L_ENOT_FOUND, "set %s or put a file %s in %s", var, name, src->dir);
        return S3L_ENOT_FOUND;
    }
    s3l_error_set(err, S3L_ENOT_FOUND, "set %s or give --secrets-dir", var);
    return S3L_ENOT_FOUND;
}

static const char *kind_name(enum s3l_config_kind k)
{
    return k == S3L_CONFIG_DESTINATION ? "Destination" : k == S3L_CONFIG_PIPELINE ? "Pipeline"
                                                                                   : "Sink";
}

/* Validates one file; prints its documents' verdicts. Counts into *ok and *bad. */
static int validate_file(struct cli *c, const char *path, const struct s3l_config_options *opts,
                         size_t *ok, size_t *bad, int *first_code)
{
    struct s3l_config *cfg;
    if (s3l_config_new(&cfg) != 0)
        return S3L_ENOMEM;
    struct s3l_error err = {0};
    int rc = s3l_config_add_file(cfg, path, opts, &err);
    if (rc == S3L_ENOMEM || rc == S3L_EINTERNAL) {
        s3l_config_free(cfg);
        return cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
    }
    if (s3l_config_count(cfg) == 0 && s3l_config_problem_count(cfg) == 0) {
        /* An empty file is almost always a mistake (a wrong path, a failed template). */
        (*bad)++;
        if (!*first_code)
            *first_code = S3L_EINVALID_CONFIG;
        char msg[512];
        snprintf(msg, sizeof(msg), "%s: holds no documents", path);
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "event", "invalid",
                                    "file", path, "document", (json_int_t)0, "path", "", "check",
                                    "read", "code", "INVALID_CONFIG", "message", msg));
        fprintf(stderr, "%s: error: %s [INVALID_CONFIG]\n", c->prog, msg);
    }
    for (size_t i = 0; i < s3l_config_count(cfg); i++) {
        const struct s3l_config_doc *d = s3l_config_doc(cfg, i);
        (*ok)++;
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:I, s:s, s:s}", "event", "valid", "file",
                                    d->file, "document", (json_int_t)d->index, "kind",
                                    kind_name(d->kind), "name", d->name));
        else if (!c->quiet)
            printf("%s (document %zu): %s %s: valid\n", d->file, d->index, kind_name(d->kind),
                   d->name);
    }
    for (size_t i = 0; i < s3l_config_problem_count(cfg); i++) {
        const struct s3l_config_problem *p = s3l_config_problem(cfg, i);
        (*bad)++;
        if (!*first_code)
            *first_code = p->code;
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "event", "invalid",
                                    "file", p->file, "document", (json_int_t)p->index, "path",
                                    p->path, "check", s3l_config_check_name(p->check), "code",
                                    s3l_error_name(p->code), "message", p->message));
        fprintf(stderr, "%s: error: %s [%s]\n", c->prog, p->message, s3l_error_name(p->code));
    }
    s3l_config_free(cfg);
    return 0;
}

int cli_cmd_validate(struct cli *c, int argc, char **argv)
{
    enum { O_SECRETS_DIR = 1, O_CHECK_SECRETS };
    static const struct option longopts[] = {
        {"secrets-dir", required_argument, NULL, O_SECRETS_DIR},
        {"check-secrets", no_argument, NULL, O_CHECK_SECRETS},
        {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cli_secret_src src = {NULL};
    bool check_secrets = false;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
        switch (opt) {
        case O_SECRETS_DIR:
            src.dir = optarg;
            check_secrets = true;
            break;
        case O_CHECK_SECRETS:
            check_secrets = true;
            break;
        case 'q':
            c->quiet = true;
            break;
        case 'j':
            c->json = true;
            break;
        case 'h':
            fputs(validate_help, stdout);
            return CLI_EX_OK;
        default:
            return cli_usage(c, "validate", "unknown option");
        }
    }
    if (optind >= argc)
        return cli_usage(c, "validate", "give one or more config files");
    struct s3l_config_secrets sec = {cli_secret_lookup, &src};
    struct s3l_config_options opts = {S3L_CONFIG_OPTIONS_VERSION, check_secrets ? &sec : NULL};
    size_t ok = 0, bad = 0;
    int first = 0;
    for (int i = optind; i < argc; i++) {
        int ex = validate_file(c, argv[i], &opts, &ok, &bad, &first);
        if (ex != 0)
            return ex;
    }
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:I, s:I}", "event", "summary", "valid", (json_int_t)ok,
                                "invalid", (json_int_t)bad));
    else if (!c->quiet)
        fprintf(stderr, "%zu document%s valid, %zu invalid\n", ok, ok == 1 ? "" : "s", bad);
    return bad ? cli_exit_for(first, S3L_SIDE_CONFIG) : CLI_EX_OK;
}

int cli_cmd_config_schema(struct cli *c, int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(schema_help, stdout);
        return CLI_EX_OK;
    }
    enum s3l_config_kind k = argc == 2 ? s3l_config_kind_from_name(argv[1]) : 0;
    if (!k)
        return cli_usage(c, "config-schema", "give one kind: destination, pipeline or sink");
    size_t len;
    const char *text = s3l_config_schema(k, &len);
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
        fprintf(stderr, "%s: error: writing the schema to stdout failed\n", c->prog);
        return CLI_EX_INTERNAL;
    }
    return CLI_EX_OK;
}

/* ---- connectors ---- */

static int print_kind(void *ctx, const struct s3l_source_kind *k)
{
    struct cli *c = ctx;
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:s, s:s, s:s, s:s}", "event", "connector", "name",
                                k->name, "role", "source", "delivery",
                                s3l_delivery_name(k->delivery), "needs", k->needs));
    else
        printf("%-8s %-14s %s\n", k->name, s3l_delivery_name(k->delivery), k->needs);
    return 0;
}

static int print_sink(void *ctx, const struct s3l_sink_kind *k)
{
    struct cli *c = ctx;
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:s, s:s, s:s, s:s}", "event", "connector", "name",
                                k->name, "role", "sink", "delivery",
                                s3l_sink_delivery_name(k->delivery), "needs", k->needs));
    else
        printf("sink %-18s %-14s %s\n", k->name, s3l_sink_delivery_name(k->delivery), k->needs);
    return 0;
}

int cli_cmd_connectors(struct cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (cli_common_flag(c, argv[i]))
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs("Usage: s3land connectors [--json]\n\n"
                  "Lists the source kinds, then the sinks (lines starting with `sink`), with their\n"
                  "capability records: the name, what each delivers (exactly_once, at_least_once,\n"
                  "at_most_once) and what it needs to. --json: {\"event\": \"connector\", \"name\",\n"
                  "\"role\": \"source\"|\"sink\", \"delivery\", \"needs\"} per line.\n"
                  "`run` refuses a pipeline whose weakest source delivers less than its\n"
                  "spec.delivery.require (default exactly_once).\n",
                  stdout);
            return CLI_EX_OK;
        }
        return cli_usage(c, "connectors", "unexpected argument %s", argv[i]);
    }
    s3l_source_kinds(print_kind, c);
    s3l_sink_kinds(print_sink, c);
    return CLI_EX_OK;
}
