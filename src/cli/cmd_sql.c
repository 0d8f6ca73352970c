/*
 * `s3land sql "STATEMENT"` (or `--file F`): the SQL binding of the raw-object connector's sinks
 * (issue 13, item 5). The statements are parsed by the library (s3l_config_add_sql) into Sink
 * documents, the same the YAML form gives, and each is printed as its binding, one JSON object a
 * line: {"table": NAME, "factory": "s3_2pc_string_sink" | "s3_text_sink", "options": {...}}.
 * Also the helpers pipe shares: reading a --sql file or a statement, and a binding as JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static const char sql_help[] =
    "Usage: s3land sql STATEMENT...\n"
    "       s3land sql --file FILE\n"
    "\n"
    "Parses the SQL binding of the NDJSON object sinks and prints each statement's binding as\n"
    "one JSON line: {\"table\", \"factory\", \"options\"}. factory is s3_2pc_string_sink (the\n"
    "two-phase sink, exactly once) when delivery_guarantee is 'exactly_once', else s3_text_sink\n"
    "(the rolling sink, at most once). Statements (separated by ;):\n"
    "\n"
    "  CREATE TABLE name (line STRING) WITH (connector = 's3', bucket = 'b',\n"
    "      key_prefix = 'events', delivery_guarantee = 'exactly_once')\n"
    "\n"
    "Options: connector ('s3', required), bucket (required; or 'file:///ABSOLUTE/PATH'),\n"
    "key_prefix, region, endpoint_override (path-style then), rollover_bytes, rollover_interval,\n"
    "part_size (5 MiB at least), commit_group, delivery_guarantee, compression, content_type.\n"
    "Sizes and durations as on the command line ('16MiB' or 16777216, '30s'). An error names the\n"
    "line, the column and the word at fault.\n"
    "\n"
    "  --file FILE   read the statements from FILE ('-': stdin)\n"
    "  -h, --help\n"
    "\n"
    "Exit codes: 0 printed; 1 a statement is invalid or FILE cannot be read; 7 out of memory.\n";

int cli_sql_read(struct cli *c, const char *cmd, const char *path, char **text, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return cli_usage(c, cmd, "%s: cannot be opened", path);
    size_t n = 0, cap = 8192, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap && cap < (16u << 20)) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        } else if (n == cap) {
            break;
        }
    }
    bool bad = ferror(f) || n >= (16u << 20);
    if (f != stdin)
        fclose(f);
    if (!buf || bad) {
        free(buf);
        return !buf ? cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG)
                    : cli_usage(c, cmd, "%s: read failed, or over 16 MiB", path);
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

bool cli_sink_exactly_once(const struct s3l_config_sink *s)
{
    return s->delivery_guarantee.value && strcmp(s->delivery_guarantee.value, "exactly_once") == 0;
}

const char *cli_sink_factory(const struct s3l_config_sink *s)
{
    return cli_sink_exactly_once(s) ? "s3_2pc_string_sink" : "s3_text_sink";
}

void *cli_sink_binding_json(const struct s3l_config_doc *d)
{
    const struct s3l_config_sink *s = d->sink;
    json_t *o = json_object();
    json_object_set_new(o, "connector", json_string(s->connector));
    const struct {
        const char *name;
        const struct s3l_config_str *v;
    } strs[] = {{"bucket", &s->bucket},
                {"key_prefix", &s->key_prefix},
                {"region", &s->region},
                {"endpoint_override", &s->endpoint_override},
                {"commit_group", &s->commit_group},
                {"delivery_guarantee", &s->delivery_guarantee},
                {"compression", &s->compression},
                {"content_type", &s->content_type}};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        if (strs[i].v->secret) /* never a secret's value: its name */
            json_object_set_new(o, strs[i].name, json_pack("{s:s}", "secret", strs[i].v->secret));
        else if (strs[i].v->value)
            json_object_set_new(o, strs[i].name, json_string(strs[i].v->value));
    }
    if (s->rollover_bytes)
        json_object_set_new(o, "rollover_bytes", json_integer((json_int_t)s->rollover_bytes));
    if (s->part_size)
        json_object_set_new(o, "part_size", json_integer((json_int_t)s->part_size));
    if (s->rollover_interval_ns) {
        char ms[32];
        snprintf(ms, sizeof(ms), "%lldms", (long long)(s->rollover_interval_ns / 1000000));
        json_object_set_new(o, "rollover_interval", json_string(ms));
    }
    return json_pack("{s:s, s:s, s:o}", "table", d->name, "factory", cli_sink_factory(s),
                     "options", o);
}

/* Prints every problem the config recorded (each names its place) on stderr. */
void cli_sql_problems(struct cli *c, const struct s3l_config *cfg)
{
    for (size_t i = 0; i < s3l_config_problem_count(cfg); i++) {
        const struct s3l_config_problem *p = s3l_config_problem(cfg, i);
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:s}", "event", "invalid", "check",
                                    s3l_config_check_name(p->check), "message", p->message));
        fprintf(stderr, "%s: error: %s\n", c->prog, p->message);
    }
}

int cli_cmd_sql(struct cli *c, int argc, char **argv)
{
    enum { O_JSON = 1 };
    static const struct option opts[] = {{"file", required_argument, NULL, 'f'},
                                         {"json", no_argument, NULL, O_JSON},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *file = NULL;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "+qhf:", opts, NULL)) != -1) {
        switch (ch) {
        case 'h':
            fputs(sql_help, stdout);
            return CLI_EX_OK;
        case 'f':
            file = optarg;
            break;
        case O_JSON:
        case 'q':
            cli_common_flag(c, ch == 'q' ? "--quiet" : "--json");
            break;
        default:
            return cli_bad_option(c, "sql", opts, argv[optind - 1]);
        }
    }
    if (!file && optind >= argc)
        return cli_usage(c, "sql", "a statement, or --file FILE, is needed");
    if (file && optind < argc)
        return cli_usage(c, "sql", "a statement and --file: give one of them");
    char *text = NULL;
    size_t len = 0;
    if (file) {
        int ex = cli_sql_read(c, "sql", file, &text, &len);
        if (ex)
            return ex;
    } else {
        /* The arguments joined by spaces, as a shell splits an unquoted statement. */
        for (int i = optind; i < argc; i++)
            len += strlen(argv[i]) + 1;
        if (!(text = malloc(len + 1)))
            return cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
        len = 0;
        for (int i = optind; i < argc; i++) {
            size_t n = strlen(argv[i]);
            if (i > optind)
                text[len++] = ' ';
            memcpy(text + len, argv[i], n);
            len += n;
        }
        text[len] = 0;
    }
    struct s3l_config *cfg = NULL;
    struct s3l_error err = {0};
    int rc = s3l_config_new(&cfg);
    if (rc == 0)
        rc = s3l_config_add_sql(cfg, text, len, file ? file : "statement", NULL, &err);
    free(text);
    int ex = CLI_EX_OK;
    if (rc == S3L_ENOMEM)
        ex = cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
    else if (rc != 0) {
        cli_sql_problems(c, cfg);
        ex = CLI_EX_USAGE;
    } else {
        for (size_t i = 0; i < s3l_config_count(cfg); i++)
            cli_emit_json(cli_sink_binding_json(s3l_config_doc(cfg, i)));
    }
    s3l_config_free(cfg);
    return ex;
}
