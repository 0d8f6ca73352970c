/*
 * footer_names: the names of parquet.thrift's enums (Type, CompressionCodec, Encoding,
 * ConvertedType, FieldRepetitionType) as the IDL spells them, for messages, `ls` and the JSON
 * dump. Gaps in the IDL's numbering (Encoding 1, the retired GROUP_VAR_INT) are "UNKNOWN".
 */
#include "parquet/footer_internal.h"

static const char *lookup(const char *const *names, size_t n, int32_t v)
{
    return v >= 0 && (size_t)v < n && names[v] ? names[v] : "UNKNOWN";
}

const char *s3l_pq_physical_name(int32_t type)
{
    static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                        "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return lookup(names, S3L_ARRAY_LEN(names), type);
}

const char *s3l_pq_codec_name(int32_t codec)
{
    static const char *const names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                        "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    return lookup(names, S3L_ARRAY_LEN(names), codec);
}

const char *s3l_pq_encoding_name(int32_t encoding)
{
    static const char *const names[] = {"PLAIN",
                                        NULL,
                                        "PLAIN_DICTIONARY",
                                        "RLE",
                                        "BIT_PACKED",
                                        "DELTA_BINARY_PACKED",
                                        "DELTA_LENGTH_BYTE_ARRAY",
                                        "DELTA_BYTE_ARRAY",
                                        "RLE_DICTIONARY",
                                        "BYTE_STREAM_SPLIT"};
    return lookup(names, S3L_ARRAY_LEN(names), encoding);
}

const char *s3l_pq_converted_name(int32_t converted_type)
{
    static const char *const names[] = {
        "UTF8",        "MAP",         "MAP_KEY_VALUE",    "LIST",             "ENUM",
        "DECIMAL",     "DATE",        "TIME_MILLIS",      "TIME_MICROS",      "TIMESTAMP_MILLIS",
        "TIMESTAMP_MICROS", "UINT_8", "UINT_16",          "UINT_32",          "UINT_64",
        "INT_8",       "INT_16",      "INT_32",           "INT_64",           "JSON",
        "BSON",        "INTERVAL"};
    return lookup(names, S3L_ARRAY_LEN(names), converted_type);
}

const char *s3l_pq_repetition_name(int32_t repetition)
{
    static const char *const names[] = {"REQUIRED", "OPTIONAL", "REPEATED", "VECTOR"};
    return lookup(names, S3L_ARRAY_LEN(names), repetition);
}
