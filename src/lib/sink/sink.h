/*
 * sink: the raw-object connector's sinks (include/s3l/ndjson_sink.h). codec.c is the
 * committable codec, text.c the rolling text sink, sink.c the public calls that check state and
 * dispatch. docs/internals/sink.md has the invariants. The module reaches storage only through
 * the store's dispatch functions (s3l/sys/store.h), so it runs on every backend.
 */
#ifndef S3L_SINK_INT_H
#define S3L_SINK_INT_H

#include <stddef.h>
#include <stdint.h>

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
};

/* text.c: the rolling text sink's parts. */
int s3l__text_restore(struct s3l_sink *s, struct s3l_error *err);
int s3l__text_flush(struct s3l_sink *s, struct s3l_error *err);

#endif
