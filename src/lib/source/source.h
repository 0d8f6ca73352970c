/*
 * source: internal header of the object source (include/s3l/object_source.h): the names it
 * orders (order.c), its checkpoint state (state.c) and the objects' bytes (source.c).
 * docs/internals/source.md has the invariants.
 */
#ifndef S3L_SOURCE_INTERNAL_H
#define S3L_SOURCE_INTERNAL_H

#include "s3l/input.h"
#include "s3l/object_source.h"

/*
 * A two-phase sink's object name (src/lib/sink/twopc.c), sub<N>-<run>-<ckpt>.ndjson[.gz|.zst|
 * .zstd], as found in the last segment of a key: the offsets, in the whole key, of each field's
 * first byte (run_hex: its 8 hex digits, just after the 13 digits of milliseconds), and the
 * subtask's digits' count. Names that do not match are ordered by the general rule only.
 */
struct s3l__twopc_name {
    size_t sub;     /* first digit of N */
    size_t sub_len; /* 1..10 digits */
    size_t run_ms;  /* 13 digits */
    size_t run_hex; /* 8 lowercase hex digits */
    size_t ckpt;    /* 20 digits */
};
/* Whether key's last segment is such a name; *out filled when it is (may be NULL). */
bool s3l__twopc_name_parse(const char *key, struct s3l__twopc_name *out);

/* The decoded checkpoint state (state.c). done: keys fully read, sorted bytewise, no
 * duplicates; cur_key NULL when no object was in progress. Strings owned. */
struct s3l__source_state {
    char **done;
    size_t n_done;
    char *cur_key;
    char cur_etag[132];
    uint64_t cur_offset; /* decompressed bytes of cur_key consumed */
    uint64_t cur_line;   /* 1-based number of the line at cur_offset */
};
/* Decodes a state (S3L_ECORRUPT naming what is wrong, S3L_ENOMEM); *st zeroed first, cleaned up
 * on failure. */
int s3l__source_state_decode(const char *json, size_t len, struct s3l__source_state *st,
                             struct s3l_error *err);
/* Encodes done[0..n_done) (any order, no duplicates) and the object in progress (cur_key may be
 * NULL) as the state's JSON text (*out: s3l_free). S3L_ENOMEM. */
int s3l__source_state_encode(const char *const *done, size_t n_done, const char *cur_key,
                             const char *cur_etag, uint64_t cur_offset, uint64_t cur_line,
                             char **out, size_t *out_len, struct s3l_error *err);
/* Whether key is in st->done (binary search). */
bool s3l__source_state_done(const struct s3l__source_state *st, const char *key);
void s3l__source_state_cleanup(struct s3l__source_state *st);

/*
 * The bytes of one object of a source, for a reader the caller opens (the pipeline's object
 * input, pipeline/object_input.c, reads them through its own NDJSON reader, converter and
 * sample): read and seek for s3l_reader_options (ranged GETs of the source's chunk_bytes, every
 * GET's ETag checked against the object's first), with ctx the source; the reader starts at
 * start_offset and line start_line (the state's for the object in progress, else 0 and 1),
 * decompressing by the key's extension.
 */
struct s3l__object_io {
    const char *key; /* owned by the source */
    uint64_t start_offset, start_line;
    enum s3l_input_compression compression;
    int (*read)(void *ctx, void *dst, size_t want, size_t *got, struct s3l_error *err);
    int (*seek)(void *ctx, uint64_t offset, struct s3l_error *err);
    void *ctx;
};
/* Makes object k (0 .. s3l_object_source_count - 1, in the source's order, each once and in
 * increasing k) the one whose bytes io reads; the previous one's bytes are dropped. Its reader
 * must be freed before the next select. S3L_EINTERNAL for a k out of range or a failed source. */
int s3l__object_source_select(struct s3l_object_source *s, size_t k, struct s3l__object_io *io,
                              struct s3l_error *err);
/* The key of object k, or NULL past the last. */
const char *s3l__object_source_key(const struct s3l_object_source *s, size_t k);
/*
 * The state (as s3l_object_source_state) of a reader of selected objects that has consumed
 * objects 0 .. k-1 whole and object k up to decompressed byte offset `offset`, at line `line`
 * (k == count: every object read; offset 0: nothing of object k, which is then not in progress).
 * *json: s3l_free. S3L_EINTERNAL (object k consumed but never fetched), S3L_ENOMEM.
 */
int s3l__object_source_state_at(const struct s3l_object_source *s, size_t k, uint64_t offset,
                                uint64_t line, char **json, size_t *len, struct s3l_error *err);

#endif
