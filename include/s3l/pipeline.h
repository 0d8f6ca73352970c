/*
 * The pipeline runner's bookkeeping: who a pipeline is and where each of its inputs stands.
 *
 * A pipeline reads inputs (files or stdin) into a table destination in epochs. Its identity is a
 * name-based UUID (RFC 4122 section 4.3, version 5, SHA-1) over the canonical destination URL,
 * the table path T (NAMESPACE/TABLE or TABLE) and the sorted real paths of its inputs, so a rerun
 * from another directory, or with a trailing slash on the URL, is the same pipeline (issue 3,
 * item 6). Each input's position is its identity (real path, device, inode), the byte offset
 * after the last checkpointed epoch, the SHA-256 of the (up to) 4 KiB before that offset, and for
 * CSV the header line. The destination keeps the positions as an opaque JSON value inside its
 * checkpoint; on a rerun the runner reads them back, refuses an input that was rotated, truncated
 * or rewritten, and resumes every other input at its offset.
 *
 * stdin (path "-") and other non-seekable inputs cannot be replayed: their position records the
 * offset only (no identity, no hash) and is never verified.
 */
#ifndef S3L_PIPELINE_H
#define S3L_PIPELINE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/codec.h"
#include "s3l/counts.h"
#include "s3l/error.h"
#include "s3l/schema.h"

struct s3l_creds_provider; /* include/s3l/creds.h */

/* Bytes before an input's offset that are hashed to detect a rewrite. */
#define S3L_INPUT_HASH_WINDOW 4096

/*
 * The fixed namespace UUID of pipeline ids (chosen once, never to change: changing it would give
 * every existing pipeline a new id and re-land its inputs).
 */
#define S3L_PIPELINE_NAMESPACE "221245c7-ac52-4405-b24f-f3fd2fdc3460"

/* Length of a UUID in text form, without the NUL. */
#define S3L_UUID_STR_LEN 36

/* Where one input stands. Owned strings are freed by s3l_input_position_cleanup. */
struct s3l_input_position {
    char *path;       /* real path (realpath(3)), or "-" for stdin */
    bool replayable;  /* a regular file: identity and hash are meaningful */
    uint64_t dev;     /* st_dev of the file; 0 when not replayable */
    uint64_t ino;     /* st_ino of the file; 0 when not replayable */
    uint64_t offset;  /* bytes of the input consumed by committed epochs */
    char sha256[65];  /* lowercase hex SHA-256 of bytes [max(0, offset - 4096), offset); "" when
                         not replayable */
    char *csv_header; /* the CSV header line as read (no line end), or NULL */
    char csv_delimiter; /* CSV: the delimiter its rows were split on, once known; 0: unknown (a
                           checkpoint from before it was recorded: detected from csv_header) */
    uint64_t line;    /* 1-based number of the line at offset (the next record's line when the
                         offset is at a line start); 0: unknown, taken as 1 */
    bool mid_line;    /* replayable, the byte before offset is not a line break (LF or CR) and
                         offset is not just after a UTF-8 BOM at offset 0 (a line start too):
                         the last committed record was the file's unterminated last line, so
                         bytes appended later must start with a line break (NDJSON, CSV) */
    /* A compressed file (by its name's extension: .gz gzip, .zst or .zstd zstd; enum
     * s3l_input_compression of input.h, 0 plain). Its offset counts decompressed bytes; what
     * proves it unchanged is the compressed bytes: raw_size of them were read by the commit
     * (the file may have grown past them since), sha256 hashes the up to 4 KiB before raw_size,
     * and raw_done says the decompressed input was read to its end at that size. mid_line is
     * false. */
    uint8_t compression;
    uint64_t raw_size;
    bool raw_done;
    /*
     * An object prefix (s3://bucket/prefix, file:///dir/prefix; docs/internals/pipeline.md
     * "Object prefixes"): path is its canonical URL, replayable is true (its objects can be read
     * again), dev and ino are 0, sha256 is "". object_state is the object source's checkpoint
     * state (include/s3l/object_source.h: the objects fully read, and key, ETag, offset and line
     * of the one in progress; NULL before anything was committed), offset and line are those of
     * the object in progress (0 and 1 when none). The runner's offsets of such an input while
     * it is read encode (object index << 40) + offset (S3L_OBJECT_INPUT_SHIFT), object_ctx is
     * its listing for the run (internal, freed by s3l_input_position_cleanup, never copied).
     */
    bool object;
    char *object_state;
    struct s3l__object_input *object_ctx;
    /* Follow mode, a plain file: its size in bytes when the position was recorded (size_known;
     * false in a checkpoint from before it was recorded, and for other inputs). size == offset
     * says the file was read to its end at that commit, so a restart that finds it gone knows
     * what was never read (size - offset bytes, at least). */
    uint64_t size;
    bool size_known;
};

/* The runner's offsets of an object prefix: (index of the object in this run's order << 40) +
 * the decompressed byte offset in it; an object over 1 TiB decompressed is refused. */
#define S3L_OBJECT_INPUT_SHIFT 40

/*
 * Opens the input at `path` for reading ("-" is stdin: *fd_out is 0, not to be closed) and fills
 * *pos with its identity: real path, device and inode, offset 0 and the hash of no bytes, and for
 * a regular file named *.gz, *.zst or *.zstd (any case) its compression.
 * *pos is overwritten (call s3l_input_position_cleanup when done); *fd_out is owned by the caller.
 * Errors: S3L_ENOT_FOUND (missing), S3L_EPERMISSION_DENIED (unreadable), S3L_EINVALID_INPUT (a
 * directory), S3L_EIO, S3L_ENOMEM; each names the path.
 */
int s3l_input_open(const char *path, struct s3l_input_position *pos, int *fd_out,
                   struct s3l_error *err);

/* Frees what pos owns and zeroes it. NULL is a no-op. */
void s3l_input_position_cleanup(struct s3l_input_position *pos);

/* Deep copy of src into *dst (dst is overwritten). S3L_ENOMEM. */
int s3l_input_position_copy(struct s3l_input_position *dst, const struct s3l_input_position *src);

/*
 * Records that the input read through fd (the file pos describes) is consumed up to `offset`
 * bytes: sets pos->offset and, for a replayable input, re-hashes the window before it with
 * pread(2), leaving the file position unchanged, and sets pos->mid_line from the byte before
 * the offset (pos->line is the caller's to set). A compressed input hashes the window before
 * pos->raw_size instead (the compressed bytes read, which its reader's caller keeps up to
 * date). Errors: S3L_EIO (read failed or the file is shorter than offset), naming the path.
 */
int s3l_input_position_advance(struct s3l_input_position *pos, int fd, uint64_t offset,
                               struct s3l_error *err);

/*
 * Checks that the input now open as fd (described by `current`, from s3l_input_open) is the
 * same file, with the same bytes before the offset, as `recorded` (from the checkpoint). Rotated
 * (another device/inode at the path), truncated (shorter than the offset) and rewritten (the
 * hashed window differs) inputs are refused with S3L_EINVALID_INPUT naming the path and what
 * changed (a compressed input by its compressed bytes: shorter than raw_size, or the window
 * before raw_size differs; compressed bytes appended after raw_size, whole members or frames or
 * the rest of a cut one, are not a change); so is a recorded position for stdin when the input
 * now is a file, or the reverse.
 * A non-replayable recorded position verifies trivially. S3L_EIO when reading fails.
 */
int s3l_input_position_verify(const struct s3l_input_position *recorded,
                              const struct s3l_input_position *current, int fd,
                              struct s3l_error *err);

/*
 * Canonical form of a destination URL: "file:///abs/path" (lexically normalised: no "//", "."
 * or ".." segments, no trailing slash), a bare path ("lake", "/tmp/lake") taken as a file://
 * URL relative to the working directory, or "s3://bucket/prefix" without trailing slashes.
 * *out is NUL-terminated and owned by the caller (s3l_free).
 * Errors: S3L_EINVALID_CONFIG for an empty URL, an unknown scheme, text that starts like a
 * scheme ("word:", as s3:/bucket) without being a supported URL, a relative file:// path, the
 * filesystem root (file:///, also after normalising: file:///..), an s3:// bucket or prefix that
 * is not valid UTF-8 or holds a "." or ".." segment; S3L_EIO when the working directory cannot
 * be found; S3L_ENOMEM.
 */
int s3l_url_canonical(const char *url, char **out, struct s3l_error *err);

/*
 * The deterministic pipeline id: UUIDv5 (namespace S3L_PIPELINE_NAMESPACE) over the UTF-8 name
 * "<canonical url>\n<table path>\n<path 1>\n...<path n>\n", the paths sorted bytewise (strcmp)
 * and given as real paths ("-" for stdin). url must already be canonical (s3l_url_canonical).
 * out receives 36 characters and a NUL (lowercase). Errors: S3L_EINVALID_ARGUMENT for an empty
 * url or table; S3L_ENOMEM.
 */
int s3l_pipeline_id(const char *url, const char *table_path, const char *const *paths, size_t n,
                    char out[S3L_UUID_STR_LEN + 1], struct s3l_error *err);

/*
 * The id of a named pipeline (s3land run): UUIDv5 (namespace S3L_PIPELINE_NAMESPACE) over
 * "pipeline\n<canonical url>\n<namespace>\n<name>\n" (namespace "" when NULL). url must be
 * canonical. out as for s3l_pipeline_id. S3L_EINVALID_ARGUMENT for an empty url or name;
 * S3L_ENOMEM.
 */
int s3l_pipeline_id_named(const char *url, const char *ns, const char *name,
                          char out[S3L_UUID_STR_LEN + 1], struct s3l_error *err);

/*
 * Expands a source's file list: each pattern is a path or a glob(7) pattern (*, ?, [...]; a
 * pattern that names an existing path is that path), its matches sorted bytewise; matches of
 * any exclude pattern (fnmatch(3) on the whole path, FNM_PATHNAME) are dropped, and a path met
 * twice is kept once. "-" (stdin) is kept as it is. *out (n_out entries) and its strings are
 * owned by the caller (s3l_pipeline_paths_free). A pattern that matches nothing is an error only
 * when it has no glob characters (S3L_ENOT_FOUND naming it); a glob that matches nothing adds
 * nothing. S3L_EIO for an unreadable directory; S3L_ENOMEM.
 */
int s3l_pipeline_expand(const char *const *patterns, size_t n, const char *const *exclude,
                        size_t n_exclude, char ***out, size_t *n_out, struct s3l_error *err);
/* Frees what s3l_pipeline_expand made. NULL is a no-op. */
void s3l_pipeline_paths_free(char **paths, size_t n);

/* Whether s is a UUID in text form (8-4-4-4-12 hex digits); for --pipeline-id. */
bool s3l_uuid_valid(const char *s);

/*
 * Serialises n positions as the JSON object the destination keeps in its checkpoint:
 * {"version":1,"inputs":[{"path":..,"replayable":..,"dev":..,"ino":..,"offset":..,
 * "sha256":..,"line":..,"mid_line":true,"csv_header":..,"csv_delimiter":";",
 * "compression":"gzip","raw_size":..,"raw_done":true}, ...]} (csv_header omitted when NULL,
 * csv_delimiter when 0, mid_line and raw_done when false, compression and raw_size for a plain
 * input; those, and line, are optional when read back, for checkpoints written before they
 * existed). *out is NUL-terminated,
 * owned by the caller (s3l_free). S3L_ENOMEM.
 */
int s3l_positions_to_json(const struct s3l_input_position *pos, size_t n, char **out);

/*
 * Parses what s3l_positions_to_json wrote. *out is an array of *n_out positions owned by the
 * caller (free with s3l_positions_free). Errors: S3L_ECORRUPT naming the entry and field that is
 * missing or of the wrong type, or an unknown version; S3L_ENOMEM.
 */
int s3l_positions_from_json(const char *json, size_t len, struct s3l_input_position **out,
                            size_t *n_out, struct s3l_error *err);

/* Frees an array of n positions. NULL is a no-op. */
void s3l_positions_free(struct s3l_input_position *pos, size_t n);

/* The position for real path `path` in pos[0..n), or NULL. */
const struct s3l_input_position *s3l_positions_find(const struct s3l_input_position *pos, size_t n,
                                                    const char *path);

struct s3l_store;

/*
 * Reads the checkpoint of pipeline `id` on store without taking the pipeline over (no generation
 * bump, nothing written): *state gets the runner's positions JSON (NULL when none; s3l_free),
 * *pending whether an epoch awaits recovery, *committed_epoch the last committed epoch; each out
 * pointer may be NULL. A missing checkpoint is success with NULL, false, 0.
 * Errors: S3L_ECORRUPT (not a JSON object, naming the key; the destination's checkpoint reader
 * reads it, docs/internals/commit.md); the store's errors; S3L_ENOMEM.
 */
int s3l_pipeline_peek(struct s3l_store *store, const char *id, char **state, bool *pending,
                      uint64_t *committed_epoch, struct s3l_error *err);

/*
 * Calls cb(ctx, id) for every pipeline with a checkpoint on store, in byte order of ids, after
 * the listing ended (so cb may call the store). cb's non-zero result stops and is returned. The
 * store's listing errors; S3L_ENOMEM.
 */
int s3l_pipeline_list(struct s3l_store *store, int (*cb)(void *ctx, const char *id), void *ctx,
                      struct s3l_error *err);

/* ---- The runner ------------------------------------------------------------------------------ */

/* What happens to a record that does not fit the schema (issue 3, item 5). */
enum s3l_bad_records {
    S3L_BAD_RECORDS_FAIL = 0,    /* the epoch holding it is not committed; the run stops */
    S3L_BAD_RECORDS_SKIP,        /* dropped and counted */
    S3L_BAD_RECORDS_DEAD_LETTER, /* written with its reason under URL/_openetl/deadletter/T/ */
};

/* Write dispositions. Only APPEND exists on plain files; the others are refused at start. */
enum s3l_disposition {
    S3L_DISPOSITION_APPEND = 0,
    S3L_DISPOSITION_REPLACE,
    S3L_DISPOSITION_MERGE,
};

/* Where a failure of s3l_pipeline_run came from, so a caller can tell input from store. */
enum s3l_pipeline_side {
    S3L_SIDE_NONE = 0,
    S3L_SIDE_CONFIG,      /* options, schema file */
    S3L_SIDE_INPUT,       /* opening, reading or parsing an input; a changed input */
    S3L_SIDE_DESTINATION, /* the store and the commit protocol */
};

/* What a progress callback is told. */
enum s3l_pipeline_event {
    S3L_EVENT_PROGRESS = 1, /* periodically (about every 0.5 s) while rows flow */
    S3L_EVENT_COMMIT,       /* an epoch was committed (its marker written) */
    S3L_EVENT_RECOVERED,    /* a pending epoch of an earlier run was committed at start */
    S3L_EVENT_UP_TO_DATE,   /* at start: every input is already committed to its end */
    S3L_EVENT_BAD_RECORD,   /* a record was skipped or dead-lettered (message in `message`) */
    /* An NDJSON file's last line has no line end and is not a valid record: most likely a line
     * still being appended. It is left unread (not failed, skipped or committed), so the run
     * after the append reads it whole; `message` names the file, line and offset. */
    S3L_EVENT_PARTIAL_LINE,
    /* At the end of a run that succeeded (also when stopped) and reads a stream (stdin, a pipe:
     * not replayable): `inputs` hold the committed positions, stats->last_epoch the last
     * committed epoch, also when nothing was new, so the caller learns where to resend from. */
    S3L_EVENT_END,
    /* A stream (a source's table) stopped with SCHEMA_DRIFT: `message` is the drift's message
     * (table, column, old and new type). Its inputs keep their positions; the other streams go
     * on, and the run returns S3L_ESCHEMA_DRIFT at its end. */
    S3L_EVENT_STREAM_STOPPED,
    /* At start, a followed source with missing_skip: the file committed at an input's path was
     * rotated away and is not among the inputs, so what it holds after its committed offset is
     * lost. `inputs` (n_inputs 1) is that file's recorded position (path: its path when
     * committed; offset: the bytes read from it, the loss starts there), `source` the source's
     * name, `message` names both. Its size now is not known (the file is gone), so no count of
     * the bytes lost is given. The run goes on; the record is dropped at the next commit. */
    S3L_EVENT_INPUT_MISSING,
    /* An epoch was committed, but its staged files could not all be deleted after it (a store
     * refusing DeleteObject, or failing it past the client's retries): `message` names the
     * epoch, the count and the store's answer. The table is complete; the files are garbage
     * under _openetl/staging/ that gc removes once deletes succeed. Reported once, at the first
     * such epoch of the run; stats->staged_left counts them all. */
    S3L_EVENT_STAGED_LEFT,
    /* A note that is no failure (`message`): at start, positions of absent inputs beyond the
     * most a checkpoint carries (4,096) were dropped, naming how many and the first; such a file
     * coming back later is read from its start. */
    S3L_EVENT_NOTE,
};

/* Counters since the start of the run; times in ns. */
struct s3l_pipeline_stats {
    uint64_t rows;           /* rows accepted into the table */
    uint64_t rows_bad;       /* rows skipped or dead-lettered */
    uint64_t values_ignored; /* values of keys the schema lacks (not written; see --schema) */
    uint64_t records_skipped; /* records the input format skips by its rules (Debezium's
                                 tombstones), read by this run */
    uint64_t bytes_in;       /* input bytes consumed */
    uint64_t bytes_resumed;  /* input bytes before the offsets the run resumed from (the last
                                commit's, summed over the inputs; bytes_in counts past them):
                                the inputs' sizes less both are the bytes not read yet */
    uint64_t bytes_out;      /* bytes put to the store by committed epochs: data files and
                                commit records (checkpoint, marker, schema record) */
    uint64_t files;          /* data files committed */
    uint64_t epochs;         /* epochs committed by this run */
    uint64_t last_epoch;     /* number of the last committed epoch (0: none yet) */
    int64_t elapsed_ns;      /* since s3l_pipeline_run started */
    bool stopped;            /* stopped early at the caller's request (options' stop): what was
                                read before it is committed */
    /* What the run cost the store, by operation (include/s3l/counts.h: S3 requests on s3://,
     * store operations on file://); set when s3l_pipeline_run returns, whatever its outcome,
     * once the store was opened. */
    struct s3l_store_counts requests;
    /* Staged files of the run's committed epochs whose deletion failed (S3L_EVENT_STAGED_LEFT):
     * garbage that gc removes. */
    uint64_t staged_left;
};

struct s3l_pipeline_report {
    enum s3l_pipeline_event event;
    const struct s3l_pipeline_stats *stats;
    /* COMMIT: the committed position of each input (n_inputs entries), for resuming stdin. */
    const struct s3l_input_position *inputs;
    size_t n_inputs;
    const char *message; /* BAD_RECORD: why (names file, line, column); else NULL */
    /* COMMIT: what the epoch cost the store (struct s3l_dest_commit_info's requests); else
     * NULL. */
    const struct s3l_store_counts *requests;
    /* INPUT_MISSING: the source's name (struct s3l_pipeline_source's name; NULL when it has
     * none); else NULL. */
    const char *source;
};

typedef void (*s3l_pipeline_report_cb)(void *ctx, const struct s3l_pipeline_report *report);

/* ---- The delivery gate (issue 12, item 5) ------------------------------------------------- */

/* What a source kind can promise, weakest first (so levels compare with <). */
enum s3l_delivery {
    S3L_DELIVERY_NONE = 0,     /* no requirement (write: no gate) */
    S3L_DELIVERY_AT_MOST_ONCE, /* cannot replay: rows read after the last commit are lost on a
                                  crash (stdin, a pipe) */
    S3L_DELIVERY_AT_LEAST_ONCE, /* may send rows again after a restart (readers drop repeats) */
    S3L_DELIVERY_EXACTLY_ONCE,  /* replayed from the committed position (files by offset) */
};

/* "at_most_once", "at_least_once", "exactly_once" ("none" for NONE). Static storage. */
const char *s3l_delivery_name(enum s3l_delivery d);
/* The level named as s3l_delivery_name writes it; S3L_DELIVERY_NONE for anything else. */
enum s3l_delivery s3l_delivery_parse(const char *name);

/* A source kind's capability record: its name, what it delivers, and what it needs to. */
struct s3l_source_kind {
    const char *name;
    enum s3l_delivery delivery;
    const char *needs;
    /*
     * at_least_once kinds (required there, NULL for the others): the names of the top-level
     * record fields, NULL-terminated, that hold a record's source position (the same when the
     * source sends the record again). Each row of such a source gets the column _openetl_id
     * (uuid): a UUID v5 over the table and these fields' values (docs/internals/pipeline.md
     * "Rows of at_least_once sources"), so readers drop repeats by it. A record without one of
     * them (or with it not a string or a number) is a bad record naming its line.
     */
    const char *const *position_fields;
};

/*
 * The source kinds, built in ("files": exactly_once; "stdin" and "pipe": at_most_once) then
 * registered ones, in that order: cb(ctx, kind) for each; cb's non-zero result stops and is
 * returned.
 */
int s3l_source_kinds(int (*cb)(void *ctx, const struct s3l_source_kind *kind), void *ctx);
/* The kind named name, or NULL. */
const struct s3l_source_kind *s3l_source_kind_find(const char *name);
/*
 * Adds a source kind (borrowed: it must outlive every run; for sources outside the library, such
 * as the test source of tests/support). Not thread-safe: call before running pipelines.
 * S3L_EEXISTS for a name already known, S3L_ENOMEM past 16 registered kinds.
 */
int s3l_source_kind_register(const struct s3l_source_kind *kind);

/*
 * One source of a pipeline (a Pipeline document's spec.sources entry, docs/config.md): its
 * inputs, read in order, land in one table. The input settings not given (0, NULL) are the
 * run's (struct s3l_pipeline_options below).
 */
struct s3l_pipeline_source {
    const char *name;                /* for messages */
    const char *table;               /* required; sources into one table share it (they must read
                                        records the same way: s3l_pipeline_run refuses with
                                        S3L_EINVALID_CONFIG naming both sources otherwise) */
    const char *ns;                  /* the table's namespace; NULL: the run's */
    const char *const *inputs;       /* paths (already expanded: s3l_pipeline_expand) */
    size_t n_inputs;                 /* 0: the source contributes nothing */
    const struct s3l_schema *schema; /* declared schema, or NULL to infer */
    const char *input_format;        /* ndjson, json, csv; NULL: the run's */
    enum s3l_bad_records bad_records;
    size_t max_record_size; /* bytes; 0: the run's */
    size_t infer_rows;      /* 0: the run's */
    bool nested_as_json;
    enum s3l_time_unit timestamp_unit; /* 0 (S3L_UNIT_SECOND) is taken as the run's */
    char csv_delimiter;                /* 0: the run's */
    /* The source's kind for the delivery gate (s3l_source_kind_find), or NULL: by its inputs
     * ("files" for regular files, "stdin" for -, "pipe" for any other that cannot replay). */
    const char *kind;
    /* Follow mode (a Pipeline source's follow: true): as the run's follow below, for this
     * source's files. */
    bool follow;
    /* Follow mode, at start: a checkpointed file rotated away (its path names another file now)
     * and not among the source's inputs, so not read to its end. false (missing: fail, the
     * default): the run fails with S3L_EINVALID_INPUT naming the path and the byte offset after
     * which nothing was read. true (missing: skip): S3L_EVENT_INPUT_MISSING is reported and the
     * run goes on. */
    bool missing_skip;
    /* Follow mode: the source's files as given (paths and globs, as s3l_pipeline_expand took
     * them; n_patterns of them) and its exclude globs (n_exclude), borrowed for the run. While
     * the run follows, the globs are expanded again at most once a second: a regular file that
     * matches and that no input reads and no rotation retired (by device and inode) becomes a
     * new input of the source, read from its start and recorded at the next commit. NULL/0: the
     * source's inputs are fixed. */
    const char *const *patterns;
    size_t n_patterns;
    const char *const *exclude;
    size_t n_exclude;
};

#define S3L_PIPELINE_OPTIONS_VERSION 1

/* Options of one run. Fill with s3l_pipeline_options_init, then set what differs. */
struct s3l_pipeline_options {
    int version;          /* S3L_PIPELINE_OPTIONS_VERSION */
    const char *url;      /* destination; any form s3l_url_canonical takes */
    const char *endpoint; /* s3://: an S3-compatible endpoint URL, or NULL (AWS) */
    const char *region;   /* s3://: the region, or NULL (us-east-1); the library reads no
                             environment: the CLI passes AWS_REGION and AWS_ENDPOINT_URL_S3 */
    int path_style;       /* s3://: 1 path-style, -1 virtual-hosted, 0 decide (path-style with an
                             endpoint, virtual-hosted on AWS); as struct s3l_s3_config's */
    /* s3://: server-side encryption ("AES256", "aws:kms", "aws:kms:dsse"; NULL: the bucket's
     * default) and its KMS key id, on every object the run writes or copies; storage class
     * (NULL: STANDARD) on data files only, never under _openetl/. As struct
     * s3l_s3_store_options' (include/s3l/s3.h); a value S3 does not list is S3L_EINVALID_CONFIG
     * before anything is sent. */
    const char *sse;
    const char *sse_kms_key_id;
    const char *storage_class;
    const char *table;    /* required */
    const char *ns;       /* namespace, or NULL */
    const struct s3l_schema *schema; /* declared schema, or NULL to infer */
    const char *input_format;        /* "ndjson" (default), "json" (an array) or "csv" */
    /* CSV: the field delimiter (s3l_csv_delimiter_parse's rule: never '"', CR or LF); 0 (the
     * default): detected from each input's header row. An input resumed from the checkpoint
     * splits on the delimiter recorded there; a different one given is refused
     * (S3L_EINVALID_INPUT), as its rows would be split otherwise than the rows committed. */
    char csv_delimiter;
    const char *const *inputs;       /* paths, "-" for stdin; n_inputs >= 1 */
    size_t n_inputs;
    enum s3l_codec codec;       /* default ZSTD */
    int codec_level;            /* 0: the codec's default */
    uint64_t file_size;         /* bytes at which a data file closes; default 256 MiB */
    size_t row_group_bytes;     /* default 128 MiB (the memory budget may flush earlier) */
    uint64_t row_group_rows;    /* 0: no row limit */
    size_t memory;              /* budget of buffered Parquet bytes, all lanes; default 48 MiB */
    uint64_t epoch_rows;        /* commit every this many rows; 0: no row limit; default 1e6 */
    int64_t commit_interval_ns; /* commit at least this often; 0: no time limit; default 60 s */
    unsigned lanes;             /* encoding threads; default 1 */
    const char *pipeline_id;    /* a UUID, or NULL for the deterministic id */
    bool allow_type_changes;    /* let the destination update a changed column's type */
    enum s3l_time_unit timestamp_unit; /* MICRO (default) or NANO */
    enum s3l_bad_records bad_records;
    enum s3l_disposition disposition;
    size_t max_record_size;        /* bytes; default 16 MiB */
    size_t infer_rows;             /* records sampled for inference; default 1,000 (fewer
                                      once their copies pass min(memory / 2, 16 MiB)) */
    bool nested_as_json;           /* inference: objects and arrays become json text columns */
    s3l_pipeline_report_cb report; /* may be NULL */
    void *report_ctx;
    /* stdin (any input that cannot be replayed): the offset, in the original stream, of its first
     * byte. -1 (the default): it starts where the pipeline's last commit left it. >= 0: bytes
     * before the committed offset are read and dropped, so a caller may resend from the last
     * offset it saw printed (or any earlier one) and nothing lands twice, even when a commit
     * became durable just before a crash and was never printed; an offset past the committed
     * one is refused (S3L_EINVALID_INPUT: the bytes between would be lost). */
    int64_t stdin_offset;
    /* When *stop becomes nonzero (from a signal handler, another thread), the run stops reading
     * soon (within a record, a span of lines, or a second of a quiet stream), commits what it
     * read as at the end of its inputs, and returns 0 with stats->stopped set. May be NULL. */
    const volatile sig_atomic_t *stop;
    /*
     * A pipeline of several sources (s3land run): when n_sources > 0, table, schema, inputs and
     * the input settings above are not used; each source lands its inputs in its own table, all
     * in one checkpoint and one commit per epoch. name is then required: the pipeline id is
     * s3l_pipeline_id_named over the URL, ns and name (pipeline_id, if set, wins), so adding a
     * source or a file keeps the id and a new input starts at its beginning.
     */
    const struct s3l_pipeline_source *sources;
    size_t n_sources;
    const char *name;
    /*
     * The delivery gate: at start, before any data moves, a run whose weakest source delivers
     * less than this is refused (S3L_EINVALID_CONFIG naming the source, its kind and level, and
     * the setting that would accept it). S3L_DELIVERY_NONE (the default): no gate.
     */
    enum s3l_delivery delivery_require;
    /* Set by the runner in each source's copy of the options (NULL in the caller's): the
     * source's name and kind (struct s3l_pipeline_source). */
    const char *source_name;
    const char *kind;
    /* s3://: the S3 backend's options (a struct s3l_s3_store_options of s3l/s3.h, with its
     * client's credentials, region and endpoint), borrowed; NULL: from endpoint, region and
     * path_style above (the trace is set only here: struct s3l_s3_config's trace). */
    const void *s3;
    /* s3://: where the credentials come from (include/s3l/creds.h), borrowed: it must outlive
     * the run and be a cache (s3l_creds_cache_new), as the S3 client's uploads ask it from
     * their thread. NULL: the default chain (struct s3l_s3_config's credentials). */
    struct s3l_creds_provider *credentials;
    /*
     * Follow mode (write --follow): after the end of a regular file, wait for more (inotify on
     * its directory, or a stat every 500 ms where inotify is unavailable) instead of ending, and
     * read what is appended. The run then ends only when *stop is set (or on an error): what was
     * read is committed, as at the end. commit_interval_ns is honoured while waiting: a row read
     * is committed at most one interval (plus about 250 ms) later, even when nothing more comes.
     * A last line without its line end waits for it and is not landed before. Streams (stdin, a
     * pipe) wait anyway and are read to their end once. A JSON array input is refused
     * (S3L_EINVALID_CONFIG): it has no end after which records could be appended.
     */
    bool follow;
    /* Follow mode: what a checkpointed file gone before its end was read does to the run, as
     * struct s3l_pipeline_source's missing_skip (false: an error; true: an event, go on). */
    bool missing_skip;
    /* Follow mode: the source's files and exclude globs, as struct s3l_pipeline_source's
     * patterns and exclude (set per source from them; write leaves them NULL/0: its inputs are
     * the paths given). */
    const char *const *patterns;
    size_t n_patterns;
    const char *const *exclude;
    size_t n_exclude;
};

/* Fills o with the defaults above. */
void s3l_pipeline_options_init(struct s3l_pipeline_options *o);

/*
 * Runs a pipeline to the end of its inputs: opens the destination (creating a file:// root),
 * commits a pending epoch left by an earlier run, verifies each input against its recorded
 * position (refusing a changed one), resumes each at its offset, and commits an epoch every
 * epoch_rows rows or commit_interval_ns, and at the end of the input. stats (may be NULL) gets
 * the final counters, also on failure. *side (may be NULL) says where a failure came from.
 * Errors: S3L_EUNSUPPORTED for a replace or merge disposition (before any data moves, with the
 * reason); S3L_EINVALID_CONFIG for bad options (also, before any data moves: sources into one
 * table that read records another way, naming the table, both sources and the setting; a
 * declared _openetl_id of another type than uuid for an at_least_once source); the input's
 * errors (S3L_ENOT_FOUND,
 * S3L_EPERMISSION_DENIED, S3L_EINVALID_INPUT naming file, line and column, S3L_ETOO_LARGE for a
 * record over max_record_size); the destination's (S3L_ESCHEMA_DRIFT, S3L_EFENCED,
 * S3L_ENO_SPACE, S3L_EPERMISSION_DENIED, S3L_EIO, ...). On failure the epoch in progress is not
 * committed and nothing committed before is touched.
 */
int s3l_pipeline_run(const struct s3l_pipeline_options *opts, struct s3l_pipeline_stats *stats,
                     enum s3l_pipeline_side *side, struct s3l_error *err);

#endif
