/*
 * sink: the raw-object connector's sinks (include/s3l/ndjson_sink.h). codec.c is the
 * committable codec, text.c the rolling text sink, sink.c the public calls that check state and
 * dispatch. docs/internals/sink.md has the invariants. The module reaches storage only through
 * the store's operations (s3l/store.h), so it runs on every backend.
 */
#ifndef S3L_SINK_INT_H
#define S3L_SINK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "s3l/ndjson_sink.h"
#include "util/util.h"

/* CRC-32/ISO-HDLC of n bytes (zlib's crc32 of a fresh start). */
uint32_t s3l__sink_crc32(const uint8_t *p, size_t n);

struct s3l_sink {
    struct s3l_store *store; /* borrowed */
    enum s3l_sink_delivery delivery;
    char *prefix; /* "<key_prefix>/part-", "<key_prefix>/sub<i>-part-" (no leading "/") */
    char *content_type;
    uint64_t rollover_bytes;
    int64_t rollover_ns; /* 0: off */
    int failed;          /* the first failure's code: every later call is S3L_ESTATE */
    char failure[S3L_ERROR_MESSAGE_MAX]; /* what it was, for those calls' messages */
    bool begun;
    uint64_t ckpt;
    struct s3l_buf buf; /* the lines not yet put */
    int64_t oldest_ns;  /* when the buffer's first record came */
    uint64_t next_part; /* the number the next part tries first */
    uint64_t seen;      /* write calls, for naming a refused record */
    uint64_t records, parts, bytes;
    /* The text sink's compression: the codec (ops NULL: none), the names' suffix ("", ".gz",
     * ".zst") and the compressed part, reused from part to part (at most the codec's bound of
     * one part: rollover_bytes plus one record). */
    struct s3l__codec codec;
    const char *suffix;
    struct s3l_buf zbuf;
    /* The two-phase sink (twopc.c). */
    uint64_t part_size;
    char run[24];                           /* <13 digits of ms><8 hex> */
    char key[S3L_COMMITTABLE_KEY_MAX + 32]; /* the begun interval's object */
    struct s3l_upload *up;                  /* its upload, from its first record; or NULL */
    uint64_t iv_records, iv_bytes;          /* what the begun interval holds */
};

/* text.c: the rolling text sink's parts. */
int s3l__text_restore(struct s3l_sink *s, struct s3l_error *err);
int s3l__text_flush(struct s3l_sink *s, struct s3l_error *err);

/* twopc.c: the two-phase sink. open sets the part size and the run id (before the prefix is
 * made from it); begin names the interval's object; write streams one line (the record, then
 * "\n" when add_nl) into its upload; prepare stages it and returns the committable; commit and
 * abort act on a decoded multipart committable; drop abandons an unprepared upload. */
int s3l__twopc_open(struct s3l_sink *s, const struct s3l_sink_options *o, struct s3l_error *err);
int s3l__twopc_begin(struct s3l_sink *s, uint64_t ckpt, struct s3l_error *err);
/* S3L_ETOO_LARGE (naming part_size) unless n more bytes fit the interval's 10,000 parts. */
int s3l__twopc_room(const struct s3l_sink *s, uint64_t n, struct s3l_error *err);
int s3l__twopc_write(struct s3l_sink *s, const uint8_t *r, size_t len, bool add_nl,
                     struct s3l_error *err);
int s3l__twopc_prepare(struct s3l_sink *s, uint64_t ckpt, uint8_t **out, size_t *out_len,
                       struct s3l_error *err);
int s3l__twopc_commit(struct s3l_sink *s, const struct s3l_committable *c, struct s3l_error *err);
int s3l__twopc_abort(struct s3l_sink *s, const struct s3l_committable *c, struct s3l_error *err);
void s3l__twopc_drop(struct s3l_sink *s);

#endif
