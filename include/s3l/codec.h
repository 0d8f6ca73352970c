/*
 * Compression codecs by name: the codec ids a Parquet writer takes (struct s3l_pq_options in
 * s3l/parquet.h, which includes this header). Implemented by src/lib/codec (codec.c), below the
 * formats that use it, so the codec module needs nothing of theirs (issue 9: no circle).
 */
#ifndef S3L_CODEC_PUBLIC_H
#define S3L_CODEC_PUBLIC_H

#include "s3l/error.h"

/* Compression codecs; values are Parquet's CompressionCodec (parquet.thrift). */
enum s3l_codec {
    S3L_CODEC_NONE = 0, /* UNCOMPRESSED */
    S3L_CODEC_SNAPPY = 1,
    S3L_CODEC_GZIP = 2,
    S3L_CODEC_ZSTD = 6,
    S3L_CODEC_LZ4_RAW = 7,
};

/* Parses a codec name into *out: "zstd", "snappy", "gzip", "none" or "uncompressed", "lz4_raw"
 * (any case). Returns 0, or S3L_EINVALID_CONFIG naming the value and the names accepted
 * (*out unchanged). No allocation. */
int s3l_codec_parse(const char *name, enum s3l_codec *out, struct s3l_error *err);
/* The name of a codec ("zstd", "snappy", "gzip", "none", "lz4_raw"): a static string, never
 * NULL ("unknown" for a value not in the enum). */
const char *s3l_codec_name(enum s3l_codec codec);

#endif
