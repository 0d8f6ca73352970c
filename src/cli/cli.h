/*
 * The s3land command's internal header: exit codes, output modes and the helpers every
 * subcommand shares (size and duration parsing, error reporting, JSON events).
 *
 * The CLI is a thin client of the public API (include/s3l/s3l.h): it parses options, calls the
 * library, and turns results into messages and exit codes. It is the only place that prints.
 */
#ifndef S3L_CLI_H
#define S3L_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "s3l/s3l.h"

/* Exit codes, documented in `s3land --help` and docs/cli.md. Stable: scripts rely on them. */
enum cli_exit {
    CLI_EX_OK = 0,
    CLI_EX_USAGE = 1,    /* bad command line, options or configuration (schema file, URL) */
    CLI_EX_INPUT = 2,    /* an input is missing, unreadable, malformed, changed, or too large */
    CLI_EX_DEST = 3,     /* the destination or store failed (missing bucket, no space, I/O) */
    CLI_EX_DRIFT = 4,    /* SCHEMA_DRIFT: a column's type changed (see --type-changes) */
    CLI_EX_FENCED = 5,   /* FENCED: a newer run of the same pipeline owns it */
    CLI_EX_REFUSED = 6,  /* not supported: replace/merge disposition, a feature not built in */
    CLI_EX_INTERNAL = 7, /* out of memory or an internal error */
    CLI_EX_ACCESS = 8,   /* the store refused the credentials or the access: AUTH_INVALID,
                            AUTH_EXPIRED, PERMISSION_DENIED (from whichever step met it) */
};

struct cli {
    bool quiet; /* no progress, no summary; errors only (and stdin resume offsets) */
    bool json;  /* one JSON object per line on stdout for each event and the summary */
    bool tty;   /* stderr is a terminal: draw progress */
    const char *prog;
    /* Where the credentials of a destination taken from a config document come from, and
     * whether a role was assumed or ignored (docs.c; "" otherwise): check prints it. */
    char creds[400];
};

/* The text printed by `s3land --help` for the exit codes. */
extern const char cli_exit_codes_help[];

/* Subcommands: each returns an exit code. argv[0] is the subcommand's name. */
int cli_cmd_write(struct cli *c, int argc, char **argv);
int cli_cmd_ls(struct cli *c, int argc, char **argv);
int cli_cmd_schema(struct cli *c, int argc, char **argv);
int cli_cmd_recover(struct cli *c, int argc, char **argv);
int cli_cmd_gc(struct cli *c, int argc, char **argv);
int cli_cmd_check(struct cli *c, int argc, char **argv);
int cli_cmd_validate(struct cli *c, int argc, char **argv);
int cli_cmd_config_schema(struct cli *c, int argc, char **argv);
int cli_cmd_run(struct cli *c, int argc, char **argv);
int cli_cmd_connectors(struct cli *c, int argc, char **argv);
int cli_cmd_cat(struct cli *c, int argc, char **argv); /* cmd_cat.c */
int cli_cmd_sql(struct cli *c, int argc, char **argv);  /* cmd_sql.c */
int cli_cmd_pipe(struct cli *c, int argc, char **argv); /* cmd_pipe.c */

/* ---- The sinks' SQL binding (cmd_sql.c), shared by sql and pipe ---- */

/* Reads the file at path ("-": stdin), at most 16 MiB, into *text (NUL-terminated, free(3);
 * *len without the NUL). Returns 0 or the usage exit code after reporting. */
int cli_sql_read(struct cli *c, const char *cmd, const char *path, char **text, size_t *len);
/* Whether a Sink's delivery_guarantee selects the two-phase sink ('exactly_once'). */
bool cli_sink_exactly_once(const struct s3l_config_sink *s);
/* The factory that binding selects: "s3_2pc_string_sink" (exactly once) or "s3_text_sink". */
const char *cli_sink_factory(const struct s3l_config_sink *s);
/* A Sink document's binding as a jansson object {table, factory, options} (secrets by name). */
void *cli_sink_binding_json(const struct s3l_config_doc *d);
/* Prints the config's problems on stderr (and as "invalid" events with --json). */
void cli_sql_problems(struct cli *c, const struct s3l_config *cfg);
int cli_cmd_uploads(struct cli *c, int argc, char **argv);

/* ---- pending multipart uploads (cmd_uploads.c; `uploads` and `gc --uploads`) ---- */

struct cli_strings;
/* Reads --keep FILE: one upload id a line, blanks and # comments skipped, into out. Returns 0
 * or the exit code after reporting (a file that cannot be read is a usage error, 1). */
int cli_keep_file(struct cli *c, const char *cmd, const char *path, struct cli_strings *out);
/* Fails (exit 8, saying so) when the store refuses ListMultipartUploads, before gc --uploads
 * does anything; 0 otherwise (also for a store without multipart uploads). */
int cli_uploads_probe(struct cli *c, struct s3l_store *store, const char *url);
/* The uploads that `pipe` state files hold (their committables), for s3l_dest_uploads. */
struct cli_holds {
    struct s3l_dest_upload_hold *v; /* each string owned */
    size_t n, cap;
};
/*
 * Reads every pipe state file of the default state directory ($XDG_STATE_HOME/s3land, else
 * ~/.local/state/s3land: its pipe-*.json; a missing directory has none) and of paths (a file, or
 * a directory's pipe-*.json), and adds to out a hold for each pending committable whose key lies
 * under url (the destination's root). A state's "url" (its sink's store root) tells its
 * destination: one naming neither url nor a root above or below it is another destination's and
 * is ignored, also when damaged; a state without "url" holds its upload by the upload id alone.
 * A state that cannot be read or parsed otherwise is an error naming it and why. Returns 0 or
 * the exit code after reporting (cmd names the command in messages).
 */
int cli_pipe_holds(struct cli *c, const char *cmd, const char *url,
                   const struct cli_strings *paths, struct cli_holds *out);
/* Frees out's holds; empty afterwards. */
void cli_holds_free(struct cli_holds *h);
/* Lists (gc false) or aborts the orphans among (gc true) the pending uploads under url (only
 * pipeline's staging uploads when pipeline is not NULL) and prints each with its age and what
 * holds it (s3l_dest_uploads; holds: the pipe states', may be NULL). Returns an exit code. */
int cli_uploads_run(struct cli *c, struct s3l_store *store, const char *url, bool gc,
                    int64_t older_than, const struct cli_strings *keep,
                    const struct cli_holds *holds, const char *pipeline);

/*
 * Parses a size: digits with an optional suffix, case-insensitive: B; K, KiB, M, MiB, G, GiB,
 * T, TiB (powers of 1024); KB, MB, GB, TB (powers of 1000). "256MiB" = 268435456.
 * false on anything else or overflow. The library's s3l_parse_size, which config documents use.
 */
bool cli_parse_size(const char *s, uint64_t *out);
/* As cli_parse_size: 0 parsed, -1 not a size, 1 a size too large for 64 bits (s3l_parse_size_ex). */
int cli_parse_size_ex(const char *s, uint64_t *out);
/* Parses a duration: digits with ms, s (default), m or h: "500ms", "30s", "2m". In ns.
 * The library's s3l_parse_duration, which config documents use. */
bool cli_parse_duration(const char *s, int64_t *out_ns);
/* A duration for --older-than: cli_parse_duration's units or N days ("7d"), >= 0. In ns. */
bool cli_parse_age(const char *s, int64_t *ns);
/* Parses a non-negative decimal integer. */
bool cli_parse_u64(const char *s, uint64_t *out);

/* The exit code for a library error code; side says where it came from. The access codes
 * (AUTH_INVALID, AUTH_EXPIRED, PERMISSION_DENIED) give CLI_EX_ACCESS on every side but the
 * input's (an input file we may not read is an input error, CLI_EX_INPUT). */
int cli_exit_for(int code, enum s3l_pipeline_side side);

/* Prints err (or code's text) as "s3land: error: MESSAGE [CODE]" to stderr, or as a JSON error
 * event on stdout with --json, and returns the exit code for it. */
int cli_fail(struct cli *c, int code, const struct s3l_error *err, enum s3l_pipeline_side side);
/* A usage error: prints "s3land CMD: MESSAGE" and a pointer to --help. Returns CLI_EX_USAGE. */
int cli_usage(struct cli *c, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct option;
/*
 * The long option of opts (getopt_long's table) closest to arg ("--tabel" -> "table"): at most
 * 2 edits (insert, delete, replace, swap two neighbours) away and fewer than half its letters;
 * NULL when none is that close or arg is not a long option. A "=value" in arg is ignored.
 */
const char *cli_suggest_option(const struct option *opts, const char *arg);
/*
 * The usage error for arg, which getopt_long refused: "--url needs a value" when arg names an
 * option of opts, else "unknown option ARG (did you mean --NAME?)" or without the suggestion.
 * Returns CLI_EX_USAGE.
 */
int cli_bad_option(struct cli *c, const char *cmd, const struct option *opts, const char *arg);

/* Prints one JSON value as a line on stdout and frees it (a jansson json_t *). */
void cli_emit_json(void *json_value);
/* Routes the library's notes (s3l_s3_set_note_handler) to stderr, or to stdout with --json
 * (notes.c). c must outlive every S3 client. */
void cli_notes_init(struct cli *c);
/* The same on f (ls builds its listing in memory and prints it only when it is complete). */
void cli_emit_json_to(FILE *f, void *json_value);

/* Handles --quiet / --json anywhere on a subcommand's line; true when arg was one of them. */
bool cli_common_flag(struct cli *c, const char *arg);

/*
 * A growable list of owned strings, for names collected from a store listing before acting on
 * them (a store may not take other calls from inside its listing callback).
 */
struct cli_strings {
    char **v;
    size_t n, cap;
};
/* Appends a copy of s; shaped as a listing callback (ctx is a struct cli_strings). S3L_ENOMEM. */
int cli_strings_add(void *ctx, const char *s);
/* Frees the strings and the list's array; the list is empty afterwards. */
void cli_strings_free(struct cli_strings *l);

/* Human-readable bytes ("12.3 MiB") into buf. */
const char *cli_fmt_bytes(uint64_t n, char *buf, size_t cap);

/* ---- access: --profile and a role on top (access.c) ---- */

/* The access flags of every command that touches a store (docs/cli.md). */
struct cli_access {
    const char *profile;      /* --profile, or NULL: AWS_DEFAULT_PROFILE, AWS_PROFILE, default */
    const char *role_arn;     /* --role-arn, or NULL: no role on top */
    const char *external_id;  /* --external-id */
    const char *session_name; /* --role-session-name, or NULL: botocore-session-SECONDS */
    int duration_s;           /* --role-duration in seconds, or 0: STS's default (1 h) */
    struct s3l_creds_provider *creds; /* set by cli_access_resolve, or NULL: the client's chain */
};

enum { CLI_O_PROFILE = 1100, CLI_O_ROLE_ARN, CLI_O_EXTERNAL_ID, CLI_O_ROLE_SESSION_NAME,
       CLI_O_ROLE_DURATION };
#define CLI_ACCESS_LONG_OPTIONS                                                                    \
    {"profile", required_argument, NULL, CLI_O_PROFILE},                                           \
        {"role-arn", required_argument, NULL, CLI_O_ROLE_ARN},                                     \
        {"external-id", required_argument, NULL, CLI_O_EXTERNAL_ID},                               \
        {"role-session-name", required_argument, NULL, CLI_O_ROLE_SESSION_NAME},                   \
        {"role-duration", required_argument, NULL, CLI_O_ROLE_DURATION}

/* The help text of the access flags (one block, for every command). */
extern const char cli_access_help[];

/* Applies getopt_long's opt (with optarg) to a when it is one of CLI_ACCESS_LONG_OPTIONS:
 * -1 when it is not, 0 when applied, or the usage exit code (reported: an ARN that does not
 * start with arn:, a duration outside 900 s .. 12 h). */
int cli_access_option(struct cli *c, const char *cmd, int opt, struct cli_access *a);

/* ---- the environment of an S3 connection (s3_env.c): the library reads none ---- */

/* Fills *region (when NULL) from AWS_REGION, then AWS_DEFAULT_REGION, and *endpoint (when NULL)
 * from AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL; either pointer may be NULL. Empty variables
 * count as unset. The strings are the environment's. */
void cli_s3_env_where(const char **region, const char **endpoint);
/* Opens $S3LAND_TRACE for appending, once per process (nothing when unset). Returns 0, or the
 * exit code after reporting S3L_EIO "open trace file PATH (S3LAND_TRACE): <strerror>". */
int cli_s3_trace_open(struct cli *c);
/* Sets cfg's trace callback to append to the file cli_s3_trace_open opened (NULL: none). */
void cli_s3_trace(struct s3l_s3_config *cfg);

/*
 * Resolves the access flags before a store is opened: *region and *endpoint (NULL when no flag
 * gave them) become AWS_REGION / AWS_DEFAULT_REGION (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL for
 * the endpoint, cli_s3_env_where), else the profile's; $S3LAND_TRACE is opened
 * (cli_s3_trace_open); with --profile or
 * --role-arn, a->creds becomes the default chain for that profile, cached, with the role
 * assumed on top and cached again. The strings and the provider live until exit. Returns 0,
 * or the exit code after reporting (1: a role option without --role-arn, a malformed file).
 */
int cli_access_resolve(struct cli *c, struct cli_access *a, const char **region,
                       const char **endpoint);

/*
 * The role of a Destination's spec.config.aws (issue 12 item 4): *out becomes an STS AssumeRole
 * provider for aws->role (with externalId, sessionName, durationSeconds and stsEndpoint; region:
 * the destination's, NULL for AWS_REGION, AWS_DEFAULT_REGION, us-east-1) signed with the
 * runner's own ambient identity (the AWS default chain, no profile named), whatever
 * spec.runner.inherit says: the destination itself gets only the role's credentials. Both
 * providers are cached (the role's credentials are renewed 5 minutes before they expire) and
 * live until exit. STS is asked only when the first request is signed. Returns 0, or the exit
 * code after reporting (a malformed role option: the creds module's S3L_EINVALID_ARGUMENT).
 */
int cli_access_doc_role(struct cli *c, const struct s3l_config_aws *aws, const char *region,
                        struct s3l_creds_provider **out);

/* The S3 connection flags every command that opens a store takes (docs/cli.md). */
struct cli_s3 {
    const char *endpoint; /* --endpoint, or NULL: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, AWS */
    const char *region;   /* --region, or NULL: $AWS_REGION, $AWS_DEFAULT_REGION, us-east-1 */
    int path_style;       /* --path-style: 1 path-style, -1 virtual-hosted, 0 decide (default) */
    struct cli_access access; /* --profile, --role-arn ... (access.c) */
    struct s3l_s3_config cfg;         /* filled by cli_s3_store_options */
    struct s3l_s3_store_options opts; /* filled by cli_s3_store_options */
    /* --sse, --sse-kms-key-id, --storage-class (sse.c), or NULL */
    const char *sse, *sse_kms_key_id, *storage_class;
};

/* The help text of --endpoint, --region and --path-style (one block, for every command). */
extern const char cli_s3_help[];

/*
 * Parses --path-style's optional value: none, "yes", "true" or "path": 1; "no", "false" or
 * "virtual": -1 (virtual-hosted even with an endpoint); "auto": 0. false on anything else.
 */
bool cli_parse_path_style(const char *arg, int *out);
/* --compression and a Destination's compression: zstd, snappy, gzip, none (or uncompressed) into
 * *out; false for any other name (the caller's usage error names it). */
bool cli_parse_codec(const char *s, enum s3l_codec *out);

/* Sets so's region, endpoint and (when --path-style was given) S3 client options from s, which
 * must outlive the store's opening. */
void cli_s3_store_options(struct cli_s3 *s, struct s3l_store_options *so);

/* write: --file-size over S3's 5 TiB object limit with an s3:// URL is a usage error (1). */
int cli_check_file_size(struct cli *c, const char *url, uint64_t file_size);

/* The destination URL: --url if given, else file://$PWD/lake. Caller frees with s3l_free. */
int cli_default_url(const char *url, char **out, struct s3l_error *err);

/* getopt_long ids and table entries of the S3 connection flags, shared by ls, schema, recover,
 * gc and check (write maps them into its pipeline options itself). */
enum { CLI_O_ENDPOINT = 1000, CLI_O_REGION, CLI_O_PATH_STYLE };
#define CLI_S3_LONG_OPTIONS                                                                        \
    {"endpoint", required_argument, NULL, CLI_O_ENDPOINT},                                         \
        {"region", required_argument, NULL, CLI_O_REGION},                                         \
        {"path-style", optional_argument, NULL, CLI_O_PATH_STYLE}, CLI_ACCESS_LONG_OPTIONS

/* Encryption and storage class flags (sse.c), for the commands that write (recover, gc, check). */
enum { CLI_O_SSE = 1200, CLI_O_SSE_KMS_KEY_ID, CLI_O_STORAGE_CLASS }; /* after access.c's 1100.. */
#define CLI_SSE_LONG_OPTIONS                                                                       \
    {"sse", required_argument, NULL, CLI_O_SSE},                                                   \
        {"sse-kms-key-id", required_argument, NULL, CLI_O_SSE_KMS_KEY_ID},                         \
        {"storage-class", required_argument, NULL, CLI_O_STORAGE_CLASS}
extern const char cli_sse_help[];
/* Applies opt when it is one of CLI_SSE_LONG_OPTIONS: -1 when not, 0 when applied, or the usage
 * exit code (a value S3 does not list; reported). */
int cli_sse_option(struct cli *c, const char *cmd, int opt, struct cli_s3 *s3);
/* Copies s's encryption and storage class into o. */
void cli_sse_store_options(const struct cli_s3 *s, struct s3l_s3_store_options *o);

/*
 * Applies getopt_long's result opt (with optarg) to s3 when it is one of CLI_S3_LONG_OPTIONS.
 * Returns -1 when opt is not an S3 flag, 0 when applied, or the usage exit code (reported).
 */
int cli_s3_option(struct cli *c, const char *cmd, int opt, struct cli_s3 *s3);

/*
 * Opens the store of url_arg (NULL: ./lake), with the S3 connection flags, creating a local
 * destination when create is set. *url is the canonical URL (the caller frees it with s3l_free;
 * NULL after a failure). Returns 0, or the exit code after reporting the failure.
 */
int cli_open_store(struct cli *c, const char *url_arg, struct cli_s3 *s3, bool create,
                   struct s3l_store **store, char **url);

/* The signal that asked a run to stop (0: none): the run commits what it read and returns. A
 * second one ends the process at once (the default action is back). */
extern volatile sig_atomic_t cli_stop_signal;
/* Catches SIGINT and SIGTERM into cli_stop_signal (no SA_RESTART: blocking reads return). */
void cli_catch_stop_signals(void);
/* "1 file", "2 files": one when n is 1, else many. */
const char *cli_plural(uint64_t n, const char *one, const char *many);
/* The hidden temp files of killed writers under prefix that no live process holds and that
 * changed more than a second ago (s3l_store_sweep, the grace of its rule); *removed counted.
 * The store's errors. */
int cli_sweep_stale(struct s3l_store *store, const char *prefix, uint64_t *removed,
                    struct s3l_error *err);

/* ---- Config documents (cmd_config.c, docs.c) ---- */

/* Where secrets come from: $S3LAND_SECRET_<NAME>, then the file NAME in dir (when not NULL). */
struct cli_secret_src {
    const char *dir;
};
/* The config's secret lookup (struct s3l_config_secrets.lookup; ctx: a struct cli_secret_src):
 * a copy of the value, S3L_ENOT_FOUND with err saying what to set, or the read's error. */
int cli_secret_lookup(void *ctx, const char *name, char **value, struct s3l_error *err);

/* The documents of a run: the Pipeline (NULL when the files hold only a Destination) and the
 * Destination it names (or the only one). */
struct cli_docs {
    struct s3l_config *cfg;
    const struct s3l_config_doc *pipeline;
    const struct s3l_config_doc *destination;
};
/*
 * Reads the files (secrets resolved from src), printing each invalid document's problem, and
 * picks the Pipeline (the one there is, or the one named `pipeline` when not NULL) and its
 * Destination (spec.destination.name), or without a Pipeline the only Destination. need_pipeline:
 * a file without a Pipeline is a usage error. Returns 0 or the exit code after reporting.
 */
int cli_docs_load(struct cli *c, const char *cmd, const char *const *files, size_t n,
                  const struct cli_secret_src *src, const char *pipeline, bool need_pipeline,
                  struct cli_docs *out);
void cli_docs_free(struct cli_docs *d);

/* The S3 connection of a Destination document, with the runner's credentials rule. */
struct cli_doc_s3 {
    struct s3l_s3_config cfg;
    struct s3l_s3_store_options opts;
    bool inherit; /* the environment's credentials, region and endpoint may be used */
};
/*
 * Fills s from the destination's spec.config (region, endpoint, pathStyle, keys) for an s3://
 * URL. inherit false (a Pipeline without spec.runner.inherit: true): no credentials, region or
 * endpoint from the environment, profiles or the instance; the config's keys are required.
 * inherit true (write, check of a Destination alone, or runner.inherit): the config's keys when
 * given, else the AWS default chain. Returns 0 or the exit code after reporting (what to set).
 */
int cli_doc_s3_options(struct cli *c, const char *cmd, const struct cli_docs *d, bool inherit,
                       struct cli_doc_s3 *s);

/*
 * Opens the store of the Destination in file config (secrets from src): with a Pipeline in the
 * file, its Destination under the runner's credentials rule (spec.runner.inherit), else the
 * only Destination with the ambient chain allowed. *url is a copy of the destination's URL
 * (s3l_free). Returns 0 or the exit code after reporting.
 */
int cli_docs_open_store(struct cli *c, const char *cmd, const char *config,
                        const struct cli_secret_src *src, bool create, struct s3l_store **store,
                        char **url);

/*
 * The destination options of check, recover and gc (util.c): --url URL with the S3 connection
 * and access flags, or --config FILE (its Destination document) with --secrets-dir DIR.
 */
enum { CLI_O_URL = 1300, CLI_O_CONFIG, CLI_O_SECRETS_DIR }; /* after sse.c's 1200.. */
#define CLI_DEST_LONG_OPTIONS                                                                      \
    {"url", required_argument, NULL, CLI_O_URL},                                                   \
        {"config", required_argument, NULL, CLI_O_CONFIG},                                         \
        {"secrets-dir", required_argument, NULL, CLI_O_SECRETS_DIR}
struct cli_dest_args {
    const char *url_arg, *config;
    struct cli_secret_src secrets;
    struct cli_s3 s3;
};
/* Applies opt when it is one of CLI_DEST_LONG_OPTIONS or an S3 flag (cli_s3_option): -1 when
 * not, 0 when applied, or the usage exit code (reported). */
int cli_dest_option(struct cli *c, const char *cmd, int opt, struct cli_dest_args *d);
/* 0, or the usage exit code (reported) when --config comes with --url or the S3 connection
 * flags: the document gives the destination. */
int cli_dest_args_check(struct cli *c, const char *cmd, const struct cli_dest_args *d);

/* A Pipeline document (with its Destination) as the runner's options (run_plan.c). */
struct cli_run_plan {
    struct s3l_pipeline_options o;
    const char *url;       /* the destination's URL (the config's string) */
    struct cli_doc_s3 s3;  /* o.s3 points at s3.opts */
    struct s3l_pipeline_source *sources;
    char ***paths;         /* per source: its expanded files */
    size_t *n_paths;
    struct s3l_schema **schemas; /* per source: its declared schema, or NULL */
    size_t n;
};
/*
 * The destination's settings of d (URL, compression, sizes) and its S3 connection under the
 * credentials rule (inherit) into p->o. Settings not built yet (sse, sseKmsKeyId, storageClass,
 * checksum) are refused (exit 6). Returns 0 or the exit code after reporting.
 */
int cli_plan_destination(struct cli *c, const char *cmd, const struct cli_docs *d, bool inherit,
                         struct cli_run_plan *p);
/*
 * The whole run of d: the destination (inherit: the Pipeline's spec.runner.inherit), every
 * source with its files expanded, its table (its name, or its spec.streams entry), its schema and
 * settings, the namespace, type changes and the commit interval (default 1m). Refused (exit 6)
 * before any data moves: format debezium, a source in several streams. Returns 0 or the
 * exit code after reporting.
 */
int cli_run_plan_build(struct cli *c, const char *cmd, const struct cli_docs *d,
                       struct cli_run_plan *p);
void cli_run_plan_free(struct cli_run_plan *p);

/* ---- check's load path (check_load.c) ---- */

/*
 * `s3land check`'s step 7: a destination (s3l_dest_open) on the sub-store of store rooted at area
 * ("_openetl/check/<uuid>/"), a table "check" of `rows` rows (id int64, s string) committed as a
 * run commits (stage, checkpoint, copy, marker), the row count read back from the markers and from
 * every file's Parquet footer and compared, the destination reopened and its pipeline state
 * compared with what was committed, then every object under area removed and the area listed
 * empty. detail (cap bytes) says what was done. Returns 0, or the first failure's code with err
 * (S3L_ECORRUPT for a count or state that differs; the store's and the destination's errors).
 */
int cli_check_load(struct s3l_store *store, const char *area, unsigned rows, char *detail,
                   size_t cap, struct s3l_error *err);
/* Removes every object under prefix of store (listed first, then one remove_many); *n (when not
 * NULL) is how many were listed. 0, or the listing's or the removal's code with err. */
int cli_check_remove_under(struct s3l_store *store, const char *prefix, size_t *n,
                           struct s3l_error *err);

/* ---- write's reports (write_report.c) ---- */

/* The state of write's reporting: the report callback's context (s3l_pipeline_options.report). */
struct cli_write_reporter {
    struct cli *c;
    bool progress_drawn;
    bool up_to_date; /* the run found every input read and nothing pending */
    bool printed;    /* a stream's committed offset was printed, printed_offset */
    uint64_t printed_offset;
    int64_t drawn_ns;         /* stats.elapsed_ns when progress was last drawn (0: never) */
};
/*
 * The progress line (no line end) into buf (cap bytes): rows, input bytes read, commits, bytes
 * committed, the lag behind the inputs' ends and rows/s. behind: bytes of the inputs not read
 * yet, or UINT64_MAX when unknown (stdin, a pipe, a compressed input): then left out.
 */
void cli_fmt_progress(char *buf, size_t cap, const struct s3l_pipeline_stats *s, uint64_t behind);
/* What the summary names: the run's options (inputs, table) and its destination URL. */
struct cli_write_run {
    const struct s3l_pipeline_options *o;
    const char *url;
};
/* The pipeline's report callback: progress, commits, recoveries, stdin offsets, the end event. */
void cli_write_on_report(void *ctx, const struct s3l_pipeline_report *p);
/* {"unit", "total", "ops": {OP: N}}: what a run or an epoch cost the store (--json's requests). */
void *cli_requests_json(const struct s3l_store_counts *c); /* a jansson json_t * */
/* Erases a progress line drawn on the terminal, if any. */
void cli_write_clear_progress(struct cli_write_reporter *r);
/* The run's summary: one JSON event with --json, else a line on stderr (none when quiet). */
void cli_write_summary(struct cli *c, const struct cli_write_run *a,
                       const struct s3l_pipeline_stats *s, bool up_to_date, int rc);

#endif
