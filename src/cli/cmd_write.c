/*
 * `s3land write`: parses the options into struct s3l_pipeline_options, runs the pipeline, and
 * reports: progress on a terminal (rows, bytes, rows/s), the committed input offsets of stdin at
 * every commit (stdin cannot be replayed: a caller resumes from them), and a final summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char write_help[] =
    "Usage: s3land write [OPTIONS] --table TABLE [INPUT...]\n"
    "\n"
    "Appends the records of each INPUT (a file, or - for stdin; stdin when none is given) to\n"
    "TABLE as Parquet files, in epochs that commit exactly once. A rerun of the same command\n"
    "lands only what was appended to the inputs since; a finished command rerun adds nothing.\n"
    "An INPUT s3://BUCKET/PREFIX or file:///DIR/PREFIX is the NDJSON objects under the prefix\n"
    "(.gz/.zst decompressed), read with the destination's S3 settings; a rerun lands only the\n"
    "objects put since, a killed run resumes mid-object, a replaced object is refused.\n"
    "\n"
    "Destination:\n"
    "  --url URL              file:///ABS/PATH, a directory path, or s3://BUCKET/PREFIX\n"
    "                         (default: ./lake)\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --config FILE          the destination of a config file's Destination document (or of\n"
    "                         its Pipeline's): URL, connection, keys, compression and sizes;\n"
    "                         --url and the s3:// flags are refused with it\n"
    "  --secrets-dir DIR      where { secret: NAME } values are read from\n"
    "  --profile NAME, --role-arn ARN, --external-id ID, --role-session-name N,\n"
    "  --role-duration D     access: which credentials, a role on top (below)\n"
    "  --sse AES256|aws:kms   s3://: server-side encryption of every object written or copied\n"
    "                         (data files, markers, checkpoints; default: the bucket's)\n"
    "  --sse-kms-key-id ID    s3://: the KMS key of --sse aws:kms (default: aws/s3)\n"
    "  --storage-class C      s3://: data files' storage class (STANDARD, STANDARD_IA,\n"
    "                         ONEZONE_IA, INTELLIGENT_TIERING, GLACIER_IR, ...); _openetl/\n"
    "                         stays STANDARD\n"
    "  --table NAME           the table (required)\n"
    "  --namespace NAME       a namespace: the table lives under URL/NAMESPACE/TABLE\n"
    "  --disposition append   the only disposition; replace and merge are refused (plain files\n"
    "                         cannot replace or merge atomically: use a table format for that)\n"
    "Input:\n"
    "  --input-format F       ndjson (one JSON object per line), json (one array of objects)\n"
    "                         or csv (RFC 4180 with a header row; fields separated by ',', or\n"
    "                         by ';', tab or '|' when the header has no ',', as detected)\n"
    "                         or debezium (Debezium change events, one per line: rows with\n"
    "                         _openetl_op, _openetl_seq and _openetl_id; see docs/cli.md)\n"
    "                         (default: from the inputs' extensions, .ndjson .jsonl .json\n"
    "                         .csv .tsv; else ndjson)\n"
    "  --csv-delimiter C      CSV: fields are separated by C, one character (tab: \\t or tab;\n"
    "                         not '\"', CR or LF), instead of the one detected from the header\n"
    "  --schema FILE          declared schema: a JSON list of columns, e.g.\n"
    "                         [{\"name\": \"ts\", \"type\": \"timestamp[us, tz=UTC]\",\n"
    "                           \"nullable\": true, \"key\": false}]\n"
    "                         (default: inferred from the first --infer-rows records)\n"
    "  --infer-rows N         records sampled to infer a schema (default 1000; fewer when\n"
    "                         they pass min(memory / 2, 16MiB))\n"
    "  --nested-as-json       inference: objects and arrays become json text columns (default:\n"
    "                         struct and list)\n"
    "  --max-record-size SIZE longest accepted record (default 16MiB)\n"
    "  --bad-records MODE     fail (default: the epoch holding a bad record is not committed),\n"
    "                         skip (drop and count), or dead-letter (write them with their\n"
    "                         reasons under URL/_openetl/deadletter/TABLE/)\n"
    "  --timestamp-unit U     us (default) or ns for inferred timestamps (a declared schema\n"
    "                         gives its own unit)\n"
    "  --type-changes MODE    refuse (default: a changed column type stops with exit 4) or\n"
    "                         allow (update the table's schema record)\n"
    "Files:\n"
    "  --compression C        zstd (default), snappy, gzip or none\n"
    "  --compression-level N  codec level (default: zstd 3, gzip 6)\n"
    "  --file-size SIZE       a data file closes at this size (default 256MiB)\n"
    "  --row-group-size SIZE  target row group size in bytes (default 128MiB; the memory budget\n"
    "                         may end a row group earlier)\n"
    "  --row-group-rows N     also end a row group at N rows (default: no limit)\n"
    "  --memory SIZE          memory for buffered row groups, all lanes together (default 48MiB)\n"
    "  --lanes N              threads that encode in parallel (default 1)\n"
    "  --follow               after the end of a file, wait for more and read it as it is\n"
    "                         appended (inotify, else a stat every 500ms), until SIGINT or\n"
    "                         SIGTERM; a line without its line end yet waits for it; stdin\n"
    "                         waits anyway (see docs/cli.md: rotation, copytruncate)\n"
    "Commits:\n"
    "  --epoch-rows N         commit every N rows (default 1000000; 0: only by time and at end)\n"
    "  --commit-interval D    commit at least every D: 500ms, 30s, 5m (default 60s; 0: never by\n"
    "                         time)\n"
    "  --pipeline-id UUID     the pipeline's id (default: derived from the URL, the table and\n"
    "                         the inputs' real paths, so a rerun is the same pipeline)\n"
    "  --stdin-offset N       stdin starts at byte N of the original stream: bytes the pipeline\n"
    "                         already committed are dropped (default: stdin starts where the\n"
    "                         last commit left it); an N past the committed offset is refused\n"
    "Output:\n"
    "  -q, --quiet            errors only (stdin's committed offsets are still printed)\n"
    "  --json                 one JSON object per line on stdout: progress and commit events,\n"
    "                         the summary\n"
    "  -h, --help             this help\n"
    "\n"
    "Sizes take B, K/KiB, M/MiB, G/GiB (1024-based) or KB, MB, GB (1000-based).\n"
    "SIGINT or SIGTERM stops the run: what was read is committed, then it exits 130 or 143\n"
    "(a second signal ends it at once).\n"
    "stdin cannot be replayed: rows read after the last commit are lost on a crash. At every\n"
    "commit s3land prints 'committed: - offset N'; resume with\n"
    "  tail -c +$((N+1)) FILE | s3land write ... --stdin-offset N -\n"
    "(a commit that became durable just before a crash may not have been printed: with\n"
    "--stdin-offset the bytes it holds are dropped, not landed twice).\n"
    "\n";

enum {
    OPT_URL = 256,
    OPT_TABLE,
    OPT_NAMESPACE,
    OPT_SCHEMA,
    OPT_FORMAT,
    OPT_COMPRESSION,
    OPT_LEVEL,
    OPT_FILE_SIZE,
    OPT_RG_SIZE,
    OPT_RG_ROWS,
    OPT_MEMORY,
    OPT_EPOCH_ROWS,
    OPT_INTERVAL,
    OPT_LANES,
    OPT_PIPELINE_ID,
    OPT_TYPE_CHANGES,
    OPT_TS_UNIT,
    OPT_BAD,
    OPT_DISPOSITION,
    OPT_MAX_RECORD,
    OPT_INFER_ROWS,
    OPT_JSON,
    OPT_NESTED_JSON,
    OPT_ENDPOINT,
    OPT_REGION,
    OPT_PATH_STYLE,
    OPT_STDIN_OFFSET,
    OPT_CSV_DELIMITER,
    OPT_CONFIG,
    OPT_SECRETS_DIR,
    OPT_SSE, /* encryption and storage class: sse_option */
    OPT_SSE_KMS_KEY_ID,
    OPT_STORAGE_CLASS,
    OPT_FOLLOW,
};

static const struct option write_options[] = {
    {"url", required_argument, NULL, OPT_URL},
    {"table", required_argument, NULL, OPT_TABLE},
    {"namespace", required_argument, NULL, OPT_NAMESPACE},
    {"schema", required_argument, NULL, OPT_SCHEMA},
    {"input-format", required_argument, NULL, OPT_FORMAT},
    {"csv-delimiter", required_argument, NULL, OPT_CSV_DELIMITER},
    {"compression", required_argument, NULL, OPT_COMPRESSION},
    {"compression-level", required_argument, NULL, OPT_LEVEL},
    {"file-size", required_argument, NULL, OPT_FILE_SIZE},
    {"row-group-size", required_argument, NULL, OPT_RG_SIZE},
    {"row-group-rows", required_argument, NULL, OPT_RG_ROWS},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"epoch-rows", required_argument, NULL, OPT_EPOCH_ROWS},
    {"commit-interval", required_argument, NULL, OPT_INTERVAL},
    {"lanes", required_argument, NULL, OPT_LANES},
    {"pipeline-id", required_argument, NULL, OPT_PIPELINE_ID},
    {"type-changes", required_argument, NULL, OPT_TYPE_CHANGES},
    {"timestamp-unit", required_argument, NULL, OPT_TS_UNIT},
    {"bad-records", required_argument, NULL, OPT_BAD},
    {"disposition", required_argument, NULL, OPT_DISPOSITION},
    {"max-record-size", required_argument, NULL, OPT_MAX_RECORD},
    {"infer-rows", required_argument, NULL, OPT_INFER_ROWS},
    {"stdin-offset", required_argument, NULL, OPT_STDIN_OFFSET},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"secrets-dir", required_argument, NULL, OPT_SECRETS_DIR},
    {"nested-as-json", no_argument, NULL, OPT_NESTED_JSON},
    {"follow", no_argument, NULL, OPT_FOLLOW},
    {"endpoint", required_argument, NULL, OPT_ENDPOINT},
    {"region", required_argument, NULL, OPT_REGION},
    {"path-style", optional_argument, NULL, OPT_PATH_STYLE},
    CLI_ACCESS_LONG_OPTIONS,
    {"sse", required_argument, NULL, OPT_SSE},
    {"sse-kms-key-id", required_argument, NULL, OPT_SSE_KMS_KEY_ID},
    {"storage-class", required_argument, NULL, OPT_STORAGE_CLASS},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct write_args {
    struct s3l_pipeline_options o;
    const char *schema_file;
    char *url;
    bool format_given; /* --input-format was given (o.input_format starts as "ndjson") */
    const char *config; /* --config FILE: the destination from a document */
    struct cli_secret_src secrets;
    struct cli_docs docs;
    struct cli_run_plan plan;
    struct cli_access access; /* --profile, --role-arn ... (access.c) */
    struct s3l_s3_config s3cfg;         /* s3:// without --config: write_s3_options */
    struct s3l_s3_store_options s3opts; /* o.s3 then points here */
};

/*
 * s3:// without --config: the S3 options in full, so that the client gets what the CLI read from
 * the environment for it (the trace; the region and endpoint are in o already,
 * cli_access_resolve) as the library reads no environment. The encryption flags go along, as
 * the pipeline takes them from o only when o.s3 is NULL.
 */
static void write_s3_options(struct write_args *a)
{
    a->s3cfg.version = S3L_S3_CONFIG_VERSION;
    a->s3cfg.path_style = a->o.path_style;
    a->s3cfg.credentials = a->access.creds;
    cli_s3_trace(&a->s3cfg);
    a->s3opts.version = S3L_S3_STORE_OPTIONS_VERSION;
    a->s3opts.client = &a->s3cfg;
    a->s3opts.sse = a->o.sse;
    a->s3opts.sse_kms_key_id = a->o.sse_kms_key_id;
    a->s3opts.storage_class = a->o.storage_class;
    a->o.s3 = &a->s3opts;
}

/* --sse, --sse-kms-key-id, --storage-class: 0 when opt is one of them (checked later, by
 * sse_check), -1 when it is not. */
static int sse_option(struct write_args *a, int opt, const char *v)
{
    if (opt == OPT_SSE)
        a->o.sse = v;
    else if (opt == OPT_SSE_KMS_KEY_ID)
        a->o.sse_kms_key_id = v;
    else if (opt == OPT_STORAGE_CLASS)
        a->o.storage_class = v;
    else
        return -1;
    return 0;
}

/* The three together against the S3 API's lists (s3l_s3_sse_check): 0 or CLI_EX_USAGE. */
static int sse_check(struct cli *c, const struct write_args *a)
{
    struct s3l_error e = {0};
    if (s3l_s3_sse_check(a->o.sse, a->o.sse_kms_key_id, a->o.storage_class, &e) != 0)
        return cli_usage(c, "write", "%s", e.message);
    return 0;
}

#define NOT_MINE (-1) /* not an option of this group: set_option tries the next group */

/* Where the table is: the destination, the table, the pipeline id and the disposition. */
static int set_where_option(struct cli *c, struct write_args *a, int opt, const char *v)
{
    struct s3l_pipeline_options *o = &a->o;
    switch (opt) {
    case OPT_URL:
        o->url = v;
        return 0;
    case OPT_ENDPOINT:
        o->endpoint = v;
        return 0;
    case OPT_REGION:
        o->region = v;
        return 0;
    case OPT_PATH_STYLE:
        if (!cli_parse_path_style(v, &o->path_style))
            return cli_usage(c, "write", "--path-style=%s: expected yes, no or auto", v);
        return 0;
    case OPT_TABLE:
        o->table = v;
        return 0;
    case OPT_NAMESPACE:
        o->ns = v;
        return 0;
    case OPT_SCHEMA:
        a->schema_file = v;
        return 0;
    case OPT_PIPELINE_ID:
        if (!s3l_uuid_valid(v))
            return cli_usage(c, "write",
                             "--pipeline-id %s: expected a UUID "
                             "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
                             v);
        o->pipeline_id = v;
        return 0;
    case OPT_DISPOSITION:
        if (strcmp(v, "append") == 0)
            o->disposition = S3L_DISPOSITION_APPEND;
        else if (strcmp(v, "replace") == 0)
            o->disposition = S3L_DISPOSITION_REPLACE;
        else if (strcmp(v, "merge") == 0)
            o->disposition = S3L_DISPOSITION_MERGE;
        else
            return cli_usage(c, "write",
                             "--disposition %s: expected append (replace and merge are refused)",
                             v);
        return 0;
    default:
        return NOT_MINE;
    }
}

/* What is read and written: the input format and the Parquet file settings. */
static int set_file_option(struct cli *c, struct write_args *a, int opt, const char *v)
{
    struct s3l_pipeline_options *o = &a->o;
    uint64_t n = 0;
    switch (opt) {
    case OPT_FORMAT:
        if (strcmp(v, "ndjson") && strcmp(v, "json") && strcmp(v, "csv") && strcmp(v, "debezium"))
            return cli_usage(c, "write",
                             "--input-format %s: expected ndjson, json, csv or debezium", v);
        o->input_format = v;
        a->format_given = true;
        return 0;
    case OPT_CSV_DELIMITER: {
        struct s3l_error e = {0};
        if (s3l_csv_delimiter_parse(v, &o->csv_delimiter, &e) != 0)
            return cli_usage(c, "write", "--csv-delimiter: %s", e.message);
        return 0;
    }
    case OPT_COMPRESSION:
        if (!cli_parse_codec(v, &o->codec))
            return cli_usage(c, "write", "--compression %s: expected zstd, snappy, gzip or none",
                             v);
        return 0;
    case OPT_LEVEL:
        if (!cli_parse_u64(v, &n) || n > 22)
            return cli_usage(c, "write", "--compression-level %s: expected 0..22", v);
        o->codec_level = (int)n;
        return 0;
    case OPT_FILE_SIZE:
        if (cli_parse_size_ex(v, &n) > 0)
            return cli_usage(c, "write", "--file-size %s: too large", v);
        if (!cli_parse_size(v, &n) || n < 4096)
            return cli_usage(c, "write",
                             "--file-size %s: expected a size of at least 4KiB (such as 256MiB)",
                             v);
        o->file_size = n;
        return 0;
    case OPT_RG_SIZE:
        if (!cli_parse_size(v, &n) || n < 1024 || n > SIZE_MAX / 2)
            return cli_usage(c, "write", "--row-group-size %s: expected a size such as 64MiB", v);
        o->row_group_bytes = (size_t)n;
        return 0;
    case OPT_RG_ROWS:
        if (!cli_parse_u64(v, &o->row_group_rows))
            return cli_usage(c, "write", "--row-group-rows %s: expected a row count", v);
        return 0;
    case OPT_TS_UNIT:
        if (strcmp(v, "us") && strcmp(v, "ns"))
            return cli_usage(c, "write", "--timestamp-unit %s: expected us or ns", v);
        o->timestamp_unit = strcmp(v, "ns") == 0 ? S3L_UNIT_NANO : S3L_UNIT_MICRO;
        return 0;
    case OPT_TYPE_CHANGES:
        if (strcmp(v, "allow") && strcmp(v, "refuse"))
            return cli_usage(c, "write", "--type-changes %s: expected allow or refuse", v);
        o->allow_type_changes = strcmp(v, "allow") == 0;
        return 0;
    case OPT_INFER_ROWS:
        if (!cli_parse_u64(v, &n) || n < 1 || n > 10000000)
            return cli_usage(c, "write", "--infer-rows %s: expected 1..10000000", v);
        o->infer_rows = (size_t)n;
        return 0;
    case OPT_MAX_RECORD:
        if (!cli_parse_size(v, &n) || n < 16 || n > (1ULL << 31))
            return cli_usage(c, "write", "--max-record-size %s: expected a size from 16B to 2GiB",
                             v);
        o->max_record_size = (size_t)n;
        return 0;
    default:
        return NOT_MINE;
    }
}

/* How the run goes: memory, epochs, lanes, bad records, the stdin offset. */
static int set_run_option(struct cli *c, struct write_args *a, int opt, const char *v)
{
    struct s3l_pipeline_options *o = &a->o;
    uint64_t n = 0;
    int64_t ns = 0;
    int rc;
    switch (opt) {
    case OPT_MEMORY:
        rc = cli_parse_size_ex(v, &n);
        if (rc > 0 || (rc == 0 && n > SIZE_MAX / 2))
            return cli_usage(c, "write", "--memory %s: too large (at most %lluGiB)", v,
                             (unsigned long long)(SIZE_MAX / 2 >> 30));
        if (rc < 0 || n < (1u << 20))
            return cli_usage(c, "write", "--memory %s: expected a size of at least 1MiB", v);
        o->memory = (size_t)n;
        return 0;
    case OPT_EPOCH_ROWS:
        if (!cli_parse_u64(v, &o->epoch_rows))
            return cli_usage(c, "write", "--epoch-rows %s: expected a row count", v);
        return 0;
    case OPT_INTERVAL:
        if (!cli_parse_duration(v, &ns))
            return cli_usage(c, "write",
                             "--commit-interval %s: expected a duration such as 30s or 500ms",
                             v);
        o->commit_interval_ns = ns;
        return 0;
    case OPT_LANES:
        if (!cli_parse_u64(v, &n) || n < 1 || n > 64)
            return cli_usage(c, "write", "--lanes %s: expected 1..64", v);
        o->lanes = (unsigned)n;
        return 0;
    case OPT_BAD:
        if (strcmp(v, "fail") == 0)
            o->bad_records = S3L_BAD_RECORDS_FAIL;
        else if (strcmp(v, "skip") == 0)
            o->bad_records = S3L_BAD_RECORDS_SKIP;
        else if (strcmp(v, "dead-letter") == 0)
            o->bad_records = S3L_BAD_RECORDS_DEAD_LETTER;
        else
            return cli_usage(c, "write", "--bad-records %s: expected fail, skip or dead-letter", v);
        return 0;
    case OPT_STDIN_OFFSET:
        if (!cli_parse_u64(v, &n) || n > (uint64_t)INT64_MAX)
            return cli_usage(c, "write", "--stdin-offset %s: expected a byte offset (0 or more)",
                             v);
        o->stdin_offset = (int64_t)n;
        return 0;
    default:
        return NOT_MINE;
    }
}

/* One option's value into a; returns 0 or CLI_EX_USAGE after printing why. */
static int set_option(struct cli *c, struct write_args *a, int opt, const char *v)
{
    int rc = set_where_option(c, a, opt, v);
    if (rc == NOT_MINE)
        rc = set_file_option(c, a, opt, v);
    if (rc == NOT_MINE)
        rc = set_run_option(c, a, opt, v);
    return rc == NOT_MINE ? cli_usage(c, "write", "unexpected option") : rc;
}

/* ---- The input format ----------------------------------------------------------------------- */

/* The format a file name's extension gives (case-insensitive), or NULL; *compressed when it
 * ends in .gz, .zst or .zstd, and then the format is the extension before that one. */
static const char *format_of_name(const char *path, bool *compressed)
{
    static const struct {
        const char *ext, *format;
    } known[] = {{".ndjson", "ndjson"},
                 {".jsonl", "ndjson"},
                 {".json", "json"},
                 {".csv", "csv"},
                 {".tsv", "csv"}};
    static const char *const packed[] = {".gz", ".zst", ".zstd"};
    size_t n = strlen(path);
    *compressed = false;
    for (size_t i = 0; i < sizeof(packed) / sizeof(*packed); i++) {
        size_t k = strlen(packed[i]);
        if (n > k && strcasecmp(path + n - k, packed[i]) == 0) {
            *compressed = true;
            n -= k; /* the format is the extension before: x.ndjson.gz, x.csv.zst */
            break;
        }
    }
    for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++) {
        size_t k = strlen(known[i].ext);
        if (n > k && strncasecmp(path + n - k, known[i].ext, k) == 0)
            return known[i].format;
    }
    return NULL;
}

/*
 * Without --input-format, the format comes from the inputs' extensions; inputs without a known
 * one (stdin among them) are read in that format too, and ndjson is the default when no input
 * has one (x.ndjson.gz is ndjson). Inputs whose extensions disagree are usage errors.
 */
static int choose_format(struct cli *c, struct s3l_pipeline_options *o, bool given)
{
    const char *chosen = NULL, *from = NULL;
    for (size_t i = 0; i < o->n_inputs; i++) {
        bool compressed; /* read by the library, which takes it from the name too */
        const char *f = format_of_name(o->inputs[i], &compressed);
        if (!f || given)
            continue;
        if (chosen && strcmp(chosen, f) != 0)
            return cli_usage(c, "write",
                             "inputs %s (%s) and %s (%s) differ in format by their extensions: "
                             "give --input-format, or write them in separate runs",
                             from, chosen, o->inputs[i], f);
        if (!chosen)
            chosen = f, from = o->inputs[i];
    }
    if (!given && chosen)
        o->input_format = chosen;
    return 0;
}

/* Says which delimiter the CSV reader detected in each input file's header, when it is not ','.
 * Regular files only: reading a pipe or a device here would take its bytes from the run. A file
 * that cannot be read is left for the run to report. */
static void note_csv_delimiters(struct cli *c, const struct s3l_pipeline_options *o)
{
    if (c->quiet || !o->input_format || strcmp(o->input_format, "csv") != 0 || o->csv_delimiter)
        return; /* not CSV, or --csv-delimiter given: nothing is detected */
    for (size_t i = 0; i < o->n_inputs; i++) {
        if (strcmp(o->inputs[i], "-") == 0)
            continue; /* stdin cannot be read twice */
        struct stat st;
        if (stat(o->inputs[i], &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        int fd = open(o->inputs[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        size_t len = strlen(o->inputs[i]);
        bool gz = len > 3 && strcasecmp(o->inputs[i] + len - 3, ".gz") == 0, compressed;
        format_of_name(o->inputs[i], &compressed);
        struct s3l_reader_options ro = {
            .version = S3L_READER_OPTIONS_VERSION,
            .format = S3L_INPUT_CSV,
            .name = o->inputs[i],
            .max_record_bytes = o->max_record_size,
            .compression = !compressed ? S3L_INPUT_PLAIN : gz ? S3L_INPUT_GZIP : S3L_INPUT_ZSTD};
        struct s3l_reader *rd = NULL;
        struct s3l_error err = {0};
        struct s3l_record rec;
        char d = 0;
        if (s3l_reader_open(fd, &ro, &rd, &err) == 0 && s3l_reader_next(rd, &rec, &err) >= 0)
            d = s3l_reader_csv_delimiter(rd);
        s3l_reader_free(rd);
        close(fd);
        if (!d || d == ',')
            continue;
        char text[2] = {d, 0};
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:s}", "event", "csv_delimiter", "input",
                                    o->inputs[i], "delimiter", text));
        else
            fprintf(stderr,
                    "note: %s: CSV fields separated by %s (detected from the header "
                    "row)\n",
                    o->inputs[i],
                    d == '\t'  ? "tabs"
                    : d == ';' ? "';'"
                               : "'|'");
    }
}

/* stdin (any input that is not a regular file) cannot be replayed: said once, at the start
 * (issue 12, item 5; `run` refuses such a source unless delivery.require accepts it). */
static void note_at_most_once(struct cli *c, const struct s3l_pipeline_options *o)
{
    for (size_t i = 0; i < o->n_inputs; i++) {
        struct stat st;
        bool in = strcmp(o->inputs[i], "-") == 0;
        /* a directory is no input at all: its error comes next, without this note first */
        if (!in && (stat(o->inputs[i], &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
            continue;
        if (c->json)
            cli_emit_json(json_pack("{s:s, s:s, s:s}", "event", "delivery", "input",
                                    o->inputs[i], "delivery", "at_most_once"));
        else if (!c->quiet)
            fprintf(stderr,
                    "note: %s cannot be replayed: at most once (rows read after the last "
                    "commit are lost on a crash; resume from the committed offset printed)\n",
                    in ? "stdin" : o->inputs[i]);
        return;
    }
}

static int parse_args(struct cli *c, struct write_args *a, int argc, char **argv, bool *help)
{
    s3l_pipeline_options_init(&a->o);
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "qh", write_options, NULL)) != -1) {
        if (opt == 'h') {
            *help = true;
            return 0;
        }
        if (opt == OPT_NESTED_JSON || opt == OPT_CONFIG || opt == OPT_SECRETS_DIR ||
            opt == OPT_FOLLOW) {
            if (opt == OPT_NESTED_JSON)
                a->o.nested_as_json = true;
            else if (opt == OPT_FOLLOW)
                a->o.follow = true;
            else if (opt == OPT_CONFIG)
                a->config = optarg;
            else
                a->secrets.dir = optarg;
            continue;
        }
        if (opt == 'q' || opt == OPT_JSON) {
            cli_common_flag(c, opt == 'q' ? "--quiet" : "--json");
            continue;
        }
        if (opt == '?' || opt == ':')
            return cli_bad_option(c, "write", write_options, argv[optind - 1]);
        if (sse_option(a, opt, optarg) == 0)
            continue;
        int ax = cli_access_option(c, "write", opt, &a->access);
        if (ax > 0)
            return ax;
        if (ax == 0)
            continue;
        int rc = set_option(c, a, opt, optarg);
        if (rc)
            return rc;
    }
    /* Options may also follow the inputs: getopt_long permutes unless POSIXLY_CORRECT. */
    if (!a->o.table)
        return cli_usage(c, "write", "--table is required");
    if (sse_check(c, a) != 0)
        return CLI_EX_USAGE;
    /* The codec's own range (zstd 1..22, gzip/zlib 1..9), known once both options are read. */
    int lv = a->o.codec_level;
    if (lv && a->o.codec == S3L_CODEC_GZIP && lv > 9)
        return cli_usage(c, "write", "--compression-level %d: gzip takes 1..9", lv);
    if (lv && (a->o.codec == S3L_CODEC_SNAPPY || a->o.codec == S3L_CODEC_NONE))
        return cli_usage(c, "write", "--compression-level %d: %s has no levels", lv,
                         a->o.codec == S3L_CODEC_SNAPPY ? "snappy" : "none");
    static const char *stdin_only[] = {"-"};
    if (optind < argc) {
        a->o.inputs = (const char *const *)(argv + optind);
        a->o.n_inputs = (size_t)(argc - optind);
    } else if (isatty(STDIN_FILENO)) {
        /* Reading a terminal is almost never what was meant (and would wait forever). */
        return cli_usage(c, "write", "no input: give files, or - with data piped to stdin");
    } else {
        a->o.inputs = stdin_only;
        a->o.n_inputs = 1;
    }
    size_t n_stdin = 0;
    for (size_t i = 0; i < a->o.n_inputs; i++)
        n_stdin += strcmp(a->o.inputs[i], "-") == 0;
    if (n_stdin > 1)
        return cli_usage(c, "write", "stdin (-) can be given once only");
    int rc = choose_format(c, &a->o, a->format_given);
    if (rc == 0 && a->o.csv_delimiter && strcmp(a->o.input_format, "csv") != 0)
        return cli_usage(c, "write",
                         "--csv-delimiter applies to CSV input only, and the input format is %s "
                         "(give --input-format csv, or name the inputs .csv)",
                         a->o.input_format);
    return rc;
}

/* ---- The command ----------------------------------------------------------------------------- */

static int load_schema(struct cli *c, const char *path, struct s3l_schema **out)
{
    struct s3l_error err = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        s3l_error_set_errno(&err, S3L_EINVALID_CONFIG, errno, "--schema %s", path);
        return cli_fail(c, err.code, &err, S3L_SIDE_CONFIG);
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len + 4096 > cap) {
            char *p = realloc(text, cap = cap ? cap * 2 : 8192);
            if (!p) {
                rc = s3l_error_set(&err, S3L_ENOMEM, "reading --schema %s", path);
                break;
            }
            text = p;
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
        if (len > (16u << 20)) {
            rc = s3l_error_set(&err, S3L_EINVALID_CONFIG, "--schema %s is over 16 MiB", path);
            break;
        }
    }
    fclose(f);
    if (rc == 0)
        rc = s3l_schema_from_json(text ? text : "", len, out, &err);
    if (rc == 0 && s3l_schema_n_fields(*out) == 0) {
        s3l_schema_free(*out);
        *out = NULL;
        rc = s3l_error_set(&err, S3L_EINVALID_CONFIG,
                           "declares no column (expected a JSON list of columns, "
                           "[{\"name\": ..., \"type\": ...}, ...])");
    }
    free(text);
    if (rc) {
        s3l_error_prefix(&err, "--schema %s", path);
        return cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
    }
    return 0;
}

/*
 * --config: the destination's settings from the document into a->o (write keeps the ambient
 * credentials chain: a command line runs as its user), where the document sets them.
 */
static int destination_from_config(struct cli *c, struct write_args *a)
{
    if (a->o.url || a->o.endpoint || a->o.region || a->o.path_style)
        return cli_usage(c, "write", "--config gives the destination: --url, --endpoint, "
                                     "--region and --path-style go with no --config");
    const char *files[] = {a->config};
    int ex = cli_docs_load(c, "write", files, 1, &a->secrets, NULL, false, &a->docs);
    if (ex == 0)
        ex = cli_plan_destination(c, "write", &a->docs, true, &a->plan);
    if (ex) {
        cli_docs_free(&a->docs);
        return ex;
    }
    const struct s3l_config_destination *dc = a->docs.destination->destination;
    const struct s3l_pipeline_options *p = &a->plan.o;
    a->o.url = p->url;
    a->o.s3 = p->s3;
    if (dc->compression.value)
        a->o.codec = p->codec;
    if (dc->compression_level)
        a->o.codec_level = p->codec_level;
    if (dc->file_size)
        a->o.file_size = p->file_size;
    if (dc->row_group_size)
        a->o.row_group_bytes = p->row_group_bytes;
    return 0;
}

int cli_cmd_write(struct cli *c, int argc, char **argv)
{
    struct write_args a;
    memset(&a, 0, sizeof(a));
    bool help = false;
    int ex = parse_args(c, &a, argc, argv, &help);
    if (help) {
        fputs(write_help, stdout);
        fputs(cli_s3_help, stdout);
        fputs(cli_access_help, stdout);
        fputs(cli_exit_codes_help, stdout);
        return CLI_EX_OK;
    }
    if (ex)
        return ex;
    if (a.config && (ex = destination_from_config(c, &a)) != 0)
        return ex;
    struct s3l_error err = {0};
    int rc = cli_default_url(a.o.url, &a.url, &err);
    if (rc) {
        cli_docs_free(&a.docs);
        return cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
    }
    a.o.url = a.url;
    if ((ex = cli_check_file_size(c, a.url, a.o.file_size)) != 0 ||
        (strncmp(a.url, "s3://", 5) == 0 &&
         (ex = cli_access_resolve(c, &a.access, &a.o.region, &a.o.endpoint)) != 0)) {
        s3l_free(a.url);
        return ex;
    }
    a.o.credentials = a.access.creds;
    if (!a.o.s3 && strncmp(a.url, "s3://", 5) == 0)
        write_s3_options(&a);
    struct s3l_schema *schema = NULL;
    if (a.schema_file) {
        ex = load_schema(c, a.schema_file, &schema);
        if (ex) {
            s3l_free(a.url);
            return ex;
        }
        a.o.schema = schema;
    }
    struct cli_write_reporter r = {c, false, false, false, 0, 0};
    a.o.report = cli_write_on_report;
    a.o.report_ctx = &r;
    struct s3l_pipeline_stats stats;
    memset(&stats, 0, sizeof(stats));
    enum s3l_pipeline_side side = S3L_SIDE_NONE;
    a.o.stop = &cli_stop_signal;
    note_csv_delimiters(c, &a.o);
    note_at_most_once(c, &a.o);
    cli_catch_stop_signals();
    rc = s3l_pipeline_run(&a.o, &stats, &side, &err);
    cli_write_clear_progress(&r);
    ex = rc ? cli_fail(c, rc, &err, side) : CLI_EX_OK;
    struct cli_write_run run = {&a.o, a.url};
    cli_write_summary(c, &run, &stats, r.up_to_date, rc);
    if (rc == 0 && stats.stopped) {
        int sig = cli_stop_signal;
        if (!c->json)
            fprintf(stderr, "stopped by %s: what was read is committed (epoch %llu)\n",
                    sig == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long)stats.last_epoch);
        ex = 128 + sig;
    }
    s3l_schema_free(schema);
    s3l_free(a.url);
    cli_docs_free(&a.docs);
    return ex;
}
