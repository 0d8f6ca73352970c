/*
 * s3land: the command line. Dispatches to the subcommands (write, ls, schema, recover, gc, check,
 * run, validate, config-schema, connectors, sql, pipe)
 * and prints the top-level help and version. Each subcommand lives in its own cmd_*.c file.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"

static const char main_help[] =
    "Usage: %s [--quiet] [--json] COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Lands record streams (NDJSON, JSON arrays, CSV) on object storage or a local directory as\n"
    "Parquet tables, exactly once.\n"
    "\n"
    "Commands:\n"
    "  write          read inputs (files or -) and append them to a table, in committed epochs\n"
    "  ls             list tables, or a table's epochs, files, markers and row counts\n"
    "  schema         print a table's schema record\n"
    "  recover        finish commits left pending by an interrupted run\n"
    "  gc             remove staged files of epochs that can never commit (--uploads: abort\n"
    "                 orphaned multipart uploads too)\n"
    "  uploads        list pending multipart uploads under an s3:// destination, with their age\n"
    "                 and whether a checkpoint holds them\n"
    "  cat            print the lines of the NDJSON objects under --url, in the source's order\n"
    "  check          check that a destination (file:// or s3://) can be used, and as whom: the\n"
    "                 credentials, the bucket, objects, multipart, listing, conditional writes,\n"
    "                 and a scratch table under URL/_openetl/check/, all removed after\n"
    "  run            run a Pipeline document (--config FILE): its sources into their tables\n"
    "  connectors     the source kinds and sinks, and what each delivers (exactly, at least, at\n"
    "                 most once)\n"
    "  sql            print the binding of CREATE TABLE ... WITH (connector = 's3', ...)\n"
    "  pipe           stream lines (a file or stdin) into an NDJSON object sink (--sql FILE or\n"
    "                 --config FILE), checkpointing every interval, resumable (--state FILE)\n"
    "  validate       check config documents (Destination, Pipeline, Sink; docs/config.md)\n"
    "  config-schema  print the JSON Schema of a config document kind\n"
    "\n"
    "Global options (also accepted after the command):\n"
    "  -q, --quiet   no progress and no summary; errors only\n"
    "      --json    one JSON object per line on stdout for each event and the summary\n"
    "  -h, --help    this help; 'COMMAND --help' gives each command's options\n"
    "  -V, --version print the version\n"
    "\n"
    "The destination is --url URL on each command: file:///ABS/PATH, a plain directory path, or\n"
    "s3://BUCKET/PREFIX; without --url it is ./lake (file://$PWD/lake).\n"
    "\n"
    "%s"
    "\n"
    "Documentation: docs/cli.md.\n";

struct command {
    const char *name;
    int (*run)(struct cli *c, int argc, char **argv);
};

static const struct command commands[] = {
    {"write", cli_cmd_write},     {"ls", cli_cmd_ls}, {"schema", cli_cmd_schema},
    {"recover", cli_cmd_recover}, {"gc", cli_cmd_gc}, {"check", cli_cmd_check},
    {"run", cli_cmd_run}, {"connectors", cli_cmd_connectors}, {"validate", cli_cmd_validate}, {"config-schema", cli_cmd_config_schema},
    {"cat", cli_cmd_cat},
    {"sql", cli_cmd_sql}, {"pipe", cli_cmd_pipe},
    {"uploads", cli_cmd_uploads},
};

int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* A fixed threshold: blocks of 1 MiB and more (a wide record, its batch, a page) are mapped
     * and given back when freed. glibc otherwise raises the threshold to the largest block freed
     * so far, after which such blocks stay in the (per-thread) heaps: with 15 MiB records and
     * 4 lanes that doubled the resident size. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    struct cli c = {0};
    c.prog = "s3land";
    c.tty = isatty(STDERR_FILENO) == 1;
    cli_notes_init(&c); /* notes.c: reads c's --json / --quiet when a note comes */
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (cli_common_flag(&c, argv[i]))
            continue;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf(main_help, c.prog, cli_exit_codes_help);
            return CLI_EX_OK;
        }
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            printf("s3land %s\n", s3l_version());
            return CLI_EX_OK;
        }
        fprintf(stderr, "%s: unknown option %s\nTry '%s --help'.\n", c.prog, argv[i], c.prog);
        return CLI_EX_USAGE;
    }
    if (i >= argc) {
        fprintf(stderr,
                "%s: a command is needed (write, run, ls, schema, recover, gc, check, validate,\n"
                "config-schema, connectors, sql, pipe)\n"
                "Try '%s --help'.\n",
                c.prog, c.prog);
        return CLI_EX_USAGE;
    }
    if (strcmp(argv[i], "help") == 0) {
        printf(main_help, c.prog, cli_exit_codes_help);
        return CLI_EX_OK;
    }
    for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
        if (strcmp(argv[i], commands[k].name) == 0)
            return commands[k].run(&c, argc - i, argv + i);
    fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help'.\n", c.prog, argv[i], c.prog);
    return CLI_EX_USAGE;
}
