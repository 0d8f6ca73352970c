/*
 * pipeline: internal header of the runner. The runner's loop (runner.c) drives two narrow
 * interfaces, a record source per input and a destination, so that its epoch and position logic
 * is tested with test doubles. The real ones are in parts with one job each: source.c (the
 * sources, over the input readers and the converter of include/s3l/input.h), table.c (the
 * destination side, over include/s3l/destination.h), growth.c (the inferred schema and its
 * growth), glue.c (a run: the store, the parts, the loop).
 */
#ifndef S3L_PIPELINE_RUNNER_H
#define S3L_PIPELINE_RUNNER_H

#include "input/steps.h"
#include "s3l/input.h"
#include "s3l/pipeline.h"
#include "s3l/row.h"
#include "util/util.h"

/*
 * What a source's next answers besides rows and errors (its own enum: these are never S3L_E*
 * codes, and an error code is never one of these). next sets it before it returns 0, and sets
 * S3L__SOURCE_BROKEN with a negative code.
 */
enum s3l__source_signal {
    /* With 0: the end of the input. */
    S3L__SOURCE_END = 0,
    /*
     * With 0: no row yet: commit the epoch before this record, then ask the destination to grow
     * (s3l__dest_ops.grow), then call again (the record brings columns the schema lacks; it comes
     * next, under the grown schema).
     */
    S3L__SOURCE_GROW,
    /*
     * With 0: no record yet: the stream is quiet (NDJSON from a pipe, after waiting a while):
     * the runner reads its clock, commits when --commit-interval is due, and calls again;
     * *offset_after and *line_after are where the input is.
     */
    S3L__SOURCE_IDLE,
    /*
     * With a negative code: the input's structure is broken beyond resynchronisation (a JSON
     * array cut short, a CSV quote left open): err holds the error (S3L_EINVALID_INPUT, naming the
     * input and where), which stops the run in every --bad-records mode, since no record after it
     * can be delimited and skipping it would repeat it forever.
     */
    S3L__SOURCE_BROKEN,
};

/* One input, opened at an offset, yielding rows into a row sink. */
struct s3l__source;
struct s3l__source_ops {
    /*
     * Reads the next records, at most max_rows (>= 1), and puts each into the destination's row
     * sink of lane `lane` as one row (the source reaches the destination through the env it was
     * opened with, because the destination may only learn its schema from the first records).
     * Returns the number of rows put (>= 1), 0 with *signal (S3L__SOURCE_END at the end of the
     * input, S3L__SOURCE_GROW, S3L__SOURCE_IDLE), or a negative code.
     * *offset_after is the input's byte offset just after the last record consumed, *line_after
     * the number of the line at that offset (also after a bad record, which is consumed alone:
     * the caller decides whether to fail, skip or dead-letter it; *raw then holds its bytes,
     * valid until the next call). S3L_EINVALID_INPUT and S3L_ETOO_LARGE are bad records;
     * with *signal S3L__SOURCE_BROKEN, any code stops the run (above); other codes are fatal.
     * *signal is S3L__SOURCE_END on entry.
     */
    int (*next)(struct s3l__source *src, unsigned lane, uint64_t max_rows, uint64_t *offset_after,
                uint64_t *line_after, struct s3l_slice *raw, enum s3l__source_signal *signal,
                struct s3l_error *err);
    /* Bytes consumed so far (for progress). */
    uint64_t (*bytes)(struct s3l__source *src);
    void (*free)(struct s3l__source *src);
    /*
     * Whether records were read but not yet put (an inference sample, a record held for growth,
     * lines of a span): at a stop request the runner still calls next until this is false, and
     * next reads nothing new once the stop is requested. May be NULL (holds nothing).
     */
    bool (*holds)(struct s3l__source *src);
};
struct s3l__source {
    const struct s3l__source_ops *ops;
};

/* What one committed epoch added. */
struct s3l__commit_info {
    uint64_t epoch; /* its number; 0 when nothing was committed (no rows, no new position) */
    uint64_t files; /* data files it added */
    uint64_t bytes; /* bytes written to the destination for it */
    uint64_t rows;
    struct s3l_store_counts requests; /* what the epoch cost the store */
    /* The epoch this commit left finishing in the background (the destination's pipelined
     * commit), or 0; it is reported (epoch above) by a later commit or sync. */
    uint64_t finishing;
    /* Its staged files whose deletion failed (s3l_dest_commit_info), and the destination's
     * first such failure (owned by it), NULL when none. */
    uint64_t staged_left;
    const char *staged_left_why;
};

/* The destination as the runner sees it. ctx is passed back to every call. */
struct s3l__dest_ops {
    /*
     * The opaque input positions of the checkpoint (*json NULL when there is none, else owned
     * by the caller, s3l_free) and whether an epoch is pending there. Changes nothing.
     */
    int (*positions)(void *ctx, char **json, bool *pending, struct s3l_error *err);
    /*
     * Takes the pipeline over (generation + 1, fencing) and commits a pending epoch. *recovered
     * gets the number of a recovered epoch, or 0.
     */
    int (*start)(void *ctx, uint64_t *recovered, struct s3l_error *err);
    /*
     * Commits the rows put since the last commit, with positions_json as the checkpoint's
     * opaque value (the commit point records both). An epoch with no rows adds no file and no
     * marker, but the positions are still recorded.
     */
    int (*commit)(void *ctx, const char *positions_json, struct s3l__commit_info *info,
                  struct s3l_error *err);
    /* Dead-letters a bad record of input `input` with its reason (into the table that input
     * feeds); committed with the epoch. */
    int (*reject)(void *ctx, size_t input, const void *raw, size_t len, const char *reason,
                  struct s3l_error *err);
    /* Drops what was not committed and frees ctx. */
    void (*close)(void *ctx);
    /*
     * The source of input `input` asked for schema growth (S3L__SOURCE_GROW) and the epoch
     * before the growing record is committed: the table that input feeds takes the grown schema
     * (later rows have its columns). May be NULL (a destination whose sources never grow). Store
     * errors, S3L_ESCHEMA_DRIFT (that table stops; the others go on), S3L_ENOMEM.
     */
    int (*grow)(void *ctx, size_t input, struct s3l_error *err);
    /*
     * Waits for the epoch a commit left finishing (finishing above), reporting it in info
     * (epoch 0: none). May be NULL (a destination whose commits finish before they return).
     * That finish's failure (the destination's errors, as commit's).
     */
    int (*sync)(void *ctx, struct s3l__commit_info *info, struct s3l_error *err);
    /* Waits at most timeout_ms for that epoch to end; true when none finishes any more. May be
     * NULL (sync alone waits). */
    bool (*wait)(void *ctx, uint64_t timeout_ms);
};

/* The sources and destination of a run, provided by glue.c (or by a test). */
struct s3l__runner_env {
    const struct s3l__dest_ops *dest;
    void *dest_ctx;
    /*
     * Opens a source for input i (pos describes it; fd is open; offset is where to start and
     * pos->line the number of the line there; for CSV, pos->csv_header is the header recorded
     * earlier, or NULL, and the source sets it). A stream (not replayable) drops its first skip
     * bytes: they were resent from an earlier offset, and offset is that of the byte after them.
     */
    int (*source_open)(void *ctx, size_t i, struct s3l_input_position *pos, int fd, uint64_t offset,
                       uint64_t skip, struct s3l__source **out, struct s3l_error *err);
    void *source_ctx;
    int64_t (*now_ns)(void);   /* a monotonic clock; tests replace it */
    unsigned clock_every_rows; /* read the clock every this many rows; 0: 64 */
    /*
     * Per input: the options of the source it belongs to (its format and --bad-records), or
     * NULL: the run's options for every input.
     */
    const struct s3l_pipeline_options *const *input_opts;
    /*
     * Per input: the stream (table) it feeds, 0 .. n_streams-1, or NULL: one stream. A stream
     * whose table drifts (S3L_ESCHEMA_DRIFT) stops, its inputs keep their positions, and the
     * others go on; the run then fails with the first drift's error at its end.
     */
    const size_t *input_stream;
    size_t n_streams;
    /*
     * Follow mode's new files (a glob that matches a new file while the run follows): the
     * sources' options (n_src of them; their patterns and exclude are expanded again), each
     * one's stream (src_stream), and the call that tells the source and destination side that
     * input i (the next index) now exists and belongs to source `src`, before any call names it.
     * S3L_ENOMEM. Any of them NULL: the inputs are fixed.
     */
    const struct s3l_pipeline_options *src_opts;
    size_t n_src;
    const size_t *src_stream;
    int (*input_added)(void *ctx, size_t i, size_t src, struct s3l_error *err);
};

/*
 * The runner's loop over already-opened inputs (pos[i], fds[i], n of them): resume each at its
 * recorded position (refusing a changed input), put every record into lane sinks, commit by
 * rows, time and at the end. side and stats as for s3l_pipeline_run.
 */
int s3l__runner_loop(const struct s3l_pipeline_options *opts, const struct s3l__runner_env *env,
                     struct s3l_input_position *pos, const int *fds, size_t n,
                     struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                     struct s3l_error *err);

/*
 * Runs the pipeline over opened inputs with the real sources and destination (glue.c): url is
 * canonical, id the pipeline id, plan the sources (one table each) and which input is whose.
 * Called by s3l_pipeline_run.
 */
struct s3l__run_plan {
    const struct s3l_pipeline_options *src; /* per source: its options (s3l__run_sources) */
    size_t n_src;
    const size_t *input_src; /* per input: its source */
    /* The tables: one per distinct (namespace, table); sources into one table share its
     * stream (pipeline.c checks they read records the same way). */
    const size_t *table_src; /* per table: its first source, whose options set the table up */
    size_t n_tables;
    const size_t *input_table; /* per input: its table */
    const size_t *src_table;   /* per source: its table */
};
int s3l__glue_run(const struct s3l_pipeline_options *opts, const struct s3l__run_plan *plan,
                  const char *url, const char *id, struct s3l_input_position *pos, const int *fds,
                  size_t n,
                  struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                  struct s3l_error *err);

/*
 * The delivery gate (delivery.c): S3L_EINVALID_CONFIG for a source of an unknown kind, or when
 * opts->delivery_require is set and an input's source kind (its own, or by the input: files,
 * stdin, pipe) delivers less, naming the source, its kind and level and the setting that accepts
 * it. Reads nothing.
 */
int s3l__delivery_gate(const struct s3l_pipeline_options *opts,
                       const struct s3l__run_plan *plan, const struct s3l_input_position *pos,
                       size_t n, struct s3l_error *err);

/*
 * The sources of a run: opts->sources, or for a run without them (write) one source made of the
 * run's own table, inputs and input settings. Each source's options (the run's, with the
 * source's table, format, schema and settings) go into *src_opts (n_src of them, s3l_free), the
 * inputs of all sources, in order, into *inputs (s3l_free; the strings are borrowed) with each
 * one's source in *input_src (s3l_free). S3L_ENOMEM.
 */
int s3l__run_sources(const struct s3l_pipeline_options *opts,
                     struct s3l_pipeline_options **src_opts, size_t *n_src,
                     const char ***inputs, size_t **input_src, size_t *n_inputs,
                     struct s3l_error *err);

/*
 * Refuses (S3L_EINVALID_INPUT, naming the input, the other pipeline and how to go on) an input
 * that another pipeline already committed to table (the table path T) and that is unchanged
 * since (device, inode and the hash of the bytes before the recorded offset), unless pipeline id
 * resumes it itself: see landed.c. Reads markers and checkpoints only. Store errors, S3L_ENOMEM.
 */
int s3l__check_landed_elsewhere(struct s3l_store *store, const char *table, const char *id,
                                const struct s3l_input_position *pos, const int *fds, size_t n,
                                struct s3l_error *err);

/* Before the landed-elsewhere check: its markers' listings and the checkpoint of the open read
 * at once (read_ahead.c), for the n inputs pos of run r. Never fails. */
struct s3l__run;
void s3l__glue_read_ahead(struct s3l__run *r, const struct s3l_input_position *pos, size_t n);

/*
 * A conversion into a destination lane failed with rc and no message (the lane failed in
 * row_begin, opening its file, which has no error argument): the lane keeps that failure sticky
 * and its row_end reports it with its message (include/s3l/destination.h), so err gets it there.
 * Returns rc, or the lane's code.
 */
int s3l__lane_failure(const struct s3l_row_sink *lane, int rc, struct s3l_error *err);

/* ---- The real sources and destination (glue.c, source.c, table.c, growth.c) ---- */

struct s3l_dest;
struct s3l_dest_stream;
struct s3l_converter;
struct s3l_infer;
struct s3l_store;
struct s3l__lanes;

/*
 * One table of a run (one per distinct table of the sources): the table side (table.c) owns its stream, the converter,
 * the lane sinks and the lanes, and the schema they were opened with; the source side
 * (source.c) converts records into them; schema growth (growth.c) decides the schema and leaves
 * a grown one in `grown` for the table side to take when the runner asks it to grow. o is the
 * source's options (the run's, with the source's table, format, schema and input settings).
 */
struct s3l__glue {
    const struct s3l_pipeline_options *o;
    struct s3l__run *run;
    char *tpath;
    struct s3l_store *store;       /* run->store */
    struct s3l_dest_stream *stream; /* NULL until opened, and after the table drifted */
    struct s3l_schema *schema; /* the schema of the stream, owned */
    struct s3l_converter *conv;
    struct s3l_row_sink *sinks; /* per lane */
    enum s3l_input_format fmt;
    struct s3l__lanes *lanes; /* worker threads when lanes > 1, else NULL (convert inline) */
    struct s3l_pipeline_stats *stats; /* run->stats */
    bool grow;                /* the schema was inferred: new keys with values add columns */
    struct s3l_schema *grown; /* the schema the table side takes at the next grow request */
    uint64_t ignored;         /* values ignored by converters already freed */
};

/*
 * A run: the store and the one destination all its tables share (one checkpoint, one commit per
 * epoch for every stream), and its tables. input_table maps each input to its table.
 */
struct s3l__run {
    const struct s3l_pipeline_options *o; /* the run's: destination, epochs, report, stop */
    const char *id;
    struct s3l_store *store;
    struct s3l_dest *dest;
    uint64_t bytes0; /* store->bytes_written at the last commit */
    bool saw_pending;
    struct s3l_pipeline_stats *stats;
    struct s3l__glue *tables;
    size_t n_tables;
    size_t *input_table; /* per input (n_inputs, owned): its table; grows in follow mode */
    size_t n_inputs;
    /* Per input (n_inputs, owned): its source's options (for what is the source's own: its name,
     * its kind). */
    const struct s3l_pipeline_options **input_opts;
    const struct s3l__run_plan *plan; /* the sources, and which table each feeds */
};

/*
 * The rows of at_least_once sources (ident.c): each record gets a member _openetl_id, a UUID v5
 * over the table path and the record's source position (the fields its kind names), so a record
 * sent twice gets the same id. s3l__ident_kind: the source's kind when it is at_least_once,
 * else NULL (exactly_once and at_most_once sources pay nothing). s3l__ident_schema: adds the
 * column (uuid) to s, or checks a declared one: S3L_EINVALID_CONFIG naming the table when s
 * has it with another type; S3L_ENOMEM. s3l__ident_add: *out is rec with the member appended
 * (its tape id's, valid until the next call; strings borrowed from rec): 1, or
 * S3L_EINVALID_INPUT naming the record (line, column, byte offset) when it has no position in
 * a field the kind names (a string or a number) or already has a member _openetl_id; S3L_ENOMEM.
 */
#define S3L__IDENT_COLUMN "_openetl_id"
#define S3L__IDENT_NAMESPACE "7d1c2a5e-3f4b-5c6d-8e9f-0a1b2c3d4e5f"
struct s3l__ident {
    const struct s3l_source_kind *kind; /* at_least_once, with position_fields */
    const char *table;                  /* the table path (borrowed) */
    const char *source;                 /* the source's name, for messages (borrowed) */
    struct s3l_value *tape;
    size_t cap;
    struct s3l_buf name; /* the text hashed */
    char text[37];
};
const struct s3l_source_kind *s3l__ident_kind(const struct s3l_pipeline_options *src);
int s3l__ident_schema(struct s3l_schema *s, const char *table, struct s3l_error *err);
int s3l__ident_add(struct s3l__ident *id, const struct s3l_record *rec, struct s3l_record *out,
                   struct s3l_error *err);
/* Sets id up for a record source of options src (its own: several sources may share a table)
 * into table (borrowed): id->kind NULL unless src is at_least_once. */
void s3l__ident_init(struct s3l__ident *id, const struct s3l_pipeline_options *src,
                     const char *table);
void s3l__ident_cleanup(struct s3l__ident *id);

/* The table side's answers to the runner (table.c). */
extern const struct s3l__dest_ops s3l__glue_dest_ops;

/*
 * Whether copies of records keep their raw bytes: dead letters are those bytes, and the converter
 * counts line breaks in them to name the line of a bad value in a record that spans lines (a
 * JSON array's element, a CSV row with a quoted line break); an NDJSON record is one line.
 */
bool s3l__glue_need_raw(const struct s3l__glue *g);

/* Opens the stream with g->schema (set), the converter, the lane sinks and the lanes. Refuses
 * (S3L_EINVALID_INPUT) a schema without columns; the destination's errors, S3L_ENOMEM. */
int s3l__glue_open_stream(struct s3l__glue *g, struct s3l_error *err);

/* Opens the stream if it is not open, with g->schema, or else the table's schema record, or else
 * no columns (refused). Errors as s3l__glue_open_stream and s3l__glue_read_record. */
int s3l__glue_ensure_stream(struct s3l__glue *g, struct s3l_error *err);

/* The table's schema record into *out (owned; NULL when there is none). S3L_ECORRUPT for a record
 * that cannot be parsed (naming the table), store errors, S3L_ENOMEM. */
int s3l__glue_read_record(struct s3l__glue *g, struct s3l_schema **out, struct s3l_error *err);

/*
 * Schema growth (growth.c). s3l__glue_sample_schema: the schema of an inference sample (inf),
 * with the types the input declares (hint, s3l_reader_schema_hint; may be NULL) laid over it
 * (a hinted column takes the hint's type; one the sample had no type for is added), fitted to
 * the table's schema record (s3l__schema_fit_sample), into g->schema, with growth on.
 * s3l__glue_check_growth: with growth on and the stream open, whether rec brings keys with typed
 * values that the schema lacks: 1 with the grown schema in g->grown (the source then holds rec
 * and answers S3L__SOURCE_GROW), 0 when not. Both: S3L_ENOMEM, record errors.
 */
int s3l__glue_sample_schema(struct s3l__glue *g, struct s3l_infer *inf,
                            const struct s3l_schema *hint, struct s3l_error *err);
/* An inferred run's schema from the table's schema record alone, with growth on: *found false
 * (nothing set) when the table has none. Errors as s3l__glue_read_record and
 * s3l__glue_open_stream (the stream is opened with it). */
int s3l__glue_schema_from_record(struct s3l__glue *g, bool *found, struct s3l_error *err);
int s3l__glue_check_growth(struct s3l__glue *g, const struct s3l_record *rec,
                           struct s3l_error *err);

/* Opens a source over input i for its table of run ctx (a struct s3l__run; source.c): the
 * signature of s3l__runner_env.source_open. */
int s3l__glue_source_open(void *ctx, size_t i, struct s3l_input_position *pos, int fd,
                          uint64_t offset, uint64_t skip, struct s3l__source **out,
                          struct s3l_error *err);

/*
 * Bytes of an input from a function instead of its fd (s3l_reader_options.read/seek): an
 * object of an object prefix (object_input.c).
 */
struct s3l__source_io {
    int (*read)(void *ctx, void *dst, size_t want, size_t *got, struct s3l_error *err);
    int (*seek)(void *ctx, uint64_t offset, struct s3l_error *err);
    void *ctx;
};
/* As s3l__glue_source_open over io's bytes (no fd): pos describes them (path, compression,
 * line), offset is where to start. */
int s3l__glue_source_open_io(void *ctx, size_t i, struct s3l_input_position *pos, uint64_t offset,
                             const struct s3l__source_io *io, struct s3l__source **out,
                             struct s3l_error *err);

/*
 * Opens the store at url for run options opts (create: a missing file:// root is made) with
 * the S3 options of the run: opts->s3, or its path style, credentials, endpoint, region and
 * encryption (glue.c). The destination's and an object prefix's stores both. s3l_store_open's
 * errors.
 */
int s3l__pipeline_store_open(const struct s3l_pipeline_options *opts, const char *url,
                             bool create, struct s3l_store **out, struct s3l_error *err);
/* Frees a store s3l__pipeline_store_open opened (NULL: nothing), so that the runner's files
 * other than glue.c need not include the store's header. */
void s3l__pipeline_store_free(struct s3l_store *store);

/* ---- Object prefixes as inputs (object_input.c) ---- */

struct s3l__object_input;
struct json_t;
/* Whether an input names an object prefix (s3://, file://) rather than a path. */
bool s3l__object_input_is(const char *input);
/*
 * The position of object prefix input (s3://bucket[/dir]/[prefix], file:///dir/[prefix]):
 * path its canonical URL (the store root canonical, then "/" and the key prefix), object and
 * replayable set, nothing read. S3L_EINVALID_CONFIG for a URL that is no object prefix or whose
 * root s3l_url_canonical refuses, naming it; S3L_ENOMEM.
 */
int s3l__object_input_position(const char *input, struct s3l_input_position *pos,
                               struct s3l_error *err);
/*
 * Opens the source of object prefix input i (pos, at the runner's offset): lists the prefix
 * the first time (the store through s3l__pipeline_store_open with o, the object source resumed
 * from pos->object_state, which refuses a replaced or vanished object in progress, naming its
 * key), then reads its objects in order through s3l__glue_source_open_io. Errors: those of the
 * store and s3l_object_source_open, prefixed with the input; S3L_ETOO_LARGE (2^23 objects or
 * more); S3L_ENOMEM.
 */
int s3l__object_input_open(void *ctx, size_t i, struct s3l_input_position *pos, uint64_t offset,
                           const struct s3l_pipeline_options *o, struct s3l__source **out,
                           struct s3l_error *err);
/* recorded and current are one prefix (same canonical URL): 0; else S3L_EINVALID_INPUT. */
int s3l__object_input_verify(const struct s3l_input_position *recorded,
                             const struct s3l_input_position *current, struct s3l_error *err);
/* The checkpoint entry of object prefix p (its state at p->offset, or the recorded one), or
 * NULL (out of memory). */
struct json_t *s3l__object_input_json(const struct s3l_input_position *p);
/* Reads checkpoint entry i (o, with "object_source") into p: S3L_ECORRUPT (naming the entry),
 * S3L_ENOMEM. */
int s3l__object_input_parse(struct json_t *o, size_t i, struct s3l_input_position *p,
                            struct s3l_error *err);
void s3l__object_input_free(struct s3l__object_input *oi);

/* ---- Parallel lanes (lanes.c) ---- */

struct s3l_record;
struct s3l__lines;
struct s3l__lanes;

struct s3l__lanes_config {
    unsigned n;                       /* worker threads, one per lane (>= 2) */
    const struct s3l_schema *schema;  /* each worker converts records to it */
    const struct s3l_row_sink *sinks; /* n lane sinks, fed from the workers' threads */
    enum s3l_bad_records bad_records;
    bool keep_raw; /* copy records' raw bytes (dead letters; line numbers in multi-line records) */
    size_t memory; /* the --memory budget in bytes (0: 48 MiB); bounds the queued batches */
    /* Dead-letters a record (thread-safe); called from workers. */
    int (*reject)(void *ctx, const void *raw, size_t len, const char *reason,
                  struct s3l_error *err);
    /* A record was skipped or dead-lettered; called under the lanes' lock. May be NULL. */
    void (*report)(void *ctx, const char *reason);
    /* Closes (stages) lane's open file, from the thread that feeds the lane, at a barrier, so
     * that the lanes close theirs in parallel before the commit. May be NULL. */
    int (*close)(void *ctx, unsigned lane, struct s3l_error *err);
    void *ctx;
};

/* Starts cfg->n workers. S3L_ENOMEM, S3L_EINTERNAL (threads), the converter's errors. */
int s3l__lanes_new(const struct s3l__lanes_config *cfg, struct s3l__lanes **out,
                   struct s3l_error *err);
/* Queues a copy of rec for the next worker lane, or, when every worker is busy with its batch
 * (or the batches queued hold too many bytes), converts rec into lane 0 on the calling thread:
 * see lanes.c. Never waits. Returns a worker's fatal failure, if one happened, so the reader stops
 * early, or lane 0's. */
int s3l__lanes_put(struct s3l__lanes *l, const struct s3l_record *rec, struct s3l_error *err);
/* As s3l__lanes_put for a span of NDJSON lines (s3l__reader_next_lines), consumed whole: a copy
 * of its bytes goes to the next worker lane, or its lines are converted into lane 0 on the calling
 * thread. Bad lines are failed, skipped or dead-lettered by the lane that meets them. */
int s3l__lanes_put_lines(struct s3l__lanes *l, struct s3l__lines *s, struct s3l_error *err);
/* Waits until every queued record is converted and every lane closed its file (cfg->close, each
 * on its own thread). *bad: records skipped or dead-lettered since the last barrier. Returns the
 * first fatal failure of a lane (then nothing may be committed). */
int s3l__lanes_barrier(struct s3l__lanes *l, uint64_t *bad, struct s3l_error *err);
/* Values of keys the schema lacks, ignored by the workers' converters so far. */
uint64_t s3l__lanes_ignored(struct s3l__lanes *l);
/* Stops and joins the workers (finishing queued batches). NULL is a no-op. */
void s3l__lanes_free(struct s3l__lanes *l);

/* The monotonic clock in ns. */
int64_t s3l__now_ns(void);

/* ---- Follow mode's files (follow.c) ---- */

/*
 * Followed input p (open as fd, read up to cur) is still the file read: not shorter than cur
 * (copytruncate), the window before its committed offset unchanged (s3l_input_position_verify).
 * S3L_EINVALID_INPUT naming it and what changed; S3L_EIO.
 */
int s3l__follow_check(struct s3l_input_position *p, int fd, uint64_t cur, struct s3l_error *err);
/*
 * The offset just after the last line feed of the file open as fd (named path) at or after
 * from, into *end (from when there is none: no whole line yet): a followed file is read up to
 * it, so a line still being written waits. Searched backwards in 16 KiB blocks. S3L_EIO.
 */
int s3l__follow_last_line_end(int fd, const char *path, uint64_t from, uint64_t *end,
                              struct s3l_error *err);
/* Each of the n retired positions renamed to the path in its directory that now names its file
 * (same device and inode), or dropped (cleaned up, *n lowered) when it left its directory.
 * S3L_ENOMEM (the positions not looked at yet are kept as they were). */
int s3l__follow_relocate(struct s3l_input_position *retired, size_t *n);
/*
 * Whether the file (dev, ino) is one that pos[k] (k != skip, of n) reads, or one of the n_retired
 * retired positions (rotated files already read to their end). A rotation scheme renames app.log
 * to app.log.1 while app.log.1 moves on to app.log.2: with a glob matching both, the file now at
 * app.log.1's path is app.log's; taking it for app.log.1's new file would land its lines twice.
 */
bool s3l__follow_known(const struct s3l_input_position *pos, size_t n, size_t skip,
                       const struct s3l_input_position *retired, size_t n_retired, uint64_t dev,
                       uint64_t ino);
/* The recorded position (of rec, n_rec) of the file p open as fd describes under another name:
 * the same device and inode and the bytes before the recorded offset unchanged; else NULL. */
const struct s3l_input_position *s3l__follow_renamed(const struct s3l_input_position *rec,
                                                     size_t n_rec,
                                                     const struct s3l_input_position *p, int fd);
/*
 * The recorded position of followed input i (of pos and fds, n inputs) into *out (NULL: new):
 * by device and inode first, then by path; a path whose record names another file is a new
 * file, and that file must be among the inputs (by identity). Else it is gone before its end
 * was read: with skip, *lost is its record (borrowed from rec) and 0 is returned; without,
 * S3L_EINVALID_INPUT names the path and the offset after which it was never read. *lost is NULL
 * otherwise.
 */
/*
 * What recorded file r (plain) holds that was never read: its size now (found in its directory
 * by device and inode), or else the size recorded at the commit (size_known), less its offset,
 * into *bytes; *known false when neither tells (a compressed file, an older checkpoint). True
 * when nothing was left unread. Reads the directory; no error (an unreadable one tells nothing).
 */
bool s3l__follow_unread(const struct s3l_input_position *r, uint64_t *bytes, bool *known);
/*
 * The first recorded position at or after index `from` of rec (n_rec) that no input of pos (n)
 * has, by path or by identity, whose file is gone (no file at its path, or another one there)
 * and was not read to its end (s3l__follow_unread): n_rec when there is none. Only positions
 * with size_known (followed plain files) are looked at, so an older checkpoint's are not.
 */
size_t s3l__follow_gone(const struct s3l_input_position *pos, size_t n,
                        const struct s3l_input_position *rec, size_t n_rec, size_t from);
int s3l__follow_record(const struct s3l_input_position *pos, const int *fds, size_t n, size_t i,
                       const struct s3l_input_position *rec, size_t n_rec, bool skip,
                       const struct s3l_input_position **out,
                       const struct s3l_input_position **lost, struct s3l_error *err);

#endif
