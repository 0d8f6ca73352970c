/*
 * The Parquet footer reader: what `check`, `ls` and the tests learn about a Parquet file without
 * reading its data, for files of any writer (ours, DuckDB, Arrow/pyarrow, Spark).
 *
 * A Parquet file ends with the Thrift-compact FileMetaData, its length as 4 bytes little-endian,
 * and the magic "PAR1" (apache/parquet-format README, "File Format"; parquet.thrift struct
 * FileMetaData). s3l_pq_footer_read (and _buf) decode it into struct s3l_pq_footer: the schema as the
 * flattened SchemaElement list (parquet.thrift SchemaElement) plus the derived tree (parent,
 * leaves, max definition/repetition levels), num_rows, row groups, column chunk metadata with raw
 * statistics bytes, key/value metadata, created_by, and the page index locations. Page indexes are
 * read per column chunk with s3l_pq_column_index_read / s3l_pq_offset_index_read.
 *
 * Ownership: a footer owns every string and array it points to, all freed by s3l_pq_footer_free.
 * Statistics and key/value values are raw bytes (PLAIN encoding without a length prefix for
 * statistics, parquet.thrift Statistics); they are NUL-terminated for convenience, but the length
 * is what counts. Memory is bounded by options (max_footer_bytes and max_memory), not by the file.
 */
#ifndef S3L_PQ_FOOTER_H
#define S3L_PQ_FOOTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"
#include "s3l/schema.h"

/* parquet.thrift enum Type. */
enum s3l_pq_physical {
    S3L_PQ_BOOLEAN = 0,
    S3L_PQ_INT32 = 1,
    S3L_PQ_INT64 = 2,
    S3L_PQ_INT96 = 3,
    S3L_PQ_FLOAT = 4,
    S3L_PQ_DOUBLE = 5,
    S3L_PQ_BYTE_ARRAY = 6,
    S3L_PQ_FIXED_LEN_BYTE_ARRAY = 7,
};

/* parquet.thrift union LogicalType: the field id of the member that is set (0: none). */
enum s3l_pq_logical_kind {
    S3L_PQ_LT_NONE = 0,
    S3L_PQ_LT_STRING = 1,
    S3L_PQ_LT_MAP = 2,
    S3L_PQ_LT_LIST = 3,
    S3L_PQ_LT_ENUM = 4,
    S3L_PQ_LT_DECIMAL = 5,
    S3L_PQ_LT_DATE = 6,
    S3L_PQ_LT_TIME = 7,
    S3L_PQ_LT_TIMESTAMP = 8,
    S3L_PQ_LT_INTEGER = 10,
    S3L_PQ_LT_UNKNOWN = 11, /* NullType */
    S3L_PQ_LT_JSON = 12,
    S3L_PQ_LT_BSON = 13,
    S3L_PQ_LT_UUID = 14,
    S3L_PQ_LT_FLOAT16 = 15,
    S3L_PQ_LT_VARIANT = 16,
    S3L_PQ_LT_GEOMETRY = 17,
    S3L_PQ_LT_GEOGRAPHY = 18,
    S3L_PQ_LT_OTHER = 255, /* a member this reader does not know */
};

/* parquet.thrift union TimeUnit member ids. */
enum s3l_pq_time_unit {
    S3L_PQ_UNIT_NONE = 0,
    S3L_PQ_UNIT_MILLIS = 1,
    S3L_PQ_UNIT_MICROS = 2,
    S3L_PQ_UNIT_NANOS = 3,
};

struct s3l_pq_logical {
    enum s3l_pq_logical_kind kind;
    bool adjusted_to_utc;        /* TIME, TIMESTAMP: isAdjustedToUTC */
    enum s3l_pq_time_unit unit;  /* TIME, TIMESTAMP */
    int32_t bit_width;           /* INTEGER: 8, 16, 32 or 64 */
    bool is_signed;              /* INTEGER */
    int32_t precision, scale;    /* DECIMAL */
};

/* One SchemaElement; optional integer fields hold -1 when absent. */
struct s3l_pq_schema_element {
    char *name;
    int32_t type;            /* enum s3l_pq_physical; -1 for a group */
    int32_t type_length;     /* FIXED_LEN_BYTE_ARRAY width; -1 */
    int32_t repetition;      /* 0 REQUIRED, 1 OPTIONAL, 2 REPEATED; -1 (the root) */
    int32_t num_children;    /* 0 for a leaf */
    int32_t converted_type;  /* parquet.thrift enum ConvertedType; -1 */
    int32_t scale, precision; /* -1 */
    int32_t field_id;        /* -1 */
    struct s3l_pq_logical logical;
    /* Derived by the reader: */
    int32_t parent;          /* index of the parent element; -1 for the root */
    int32_t leaf;            /* column index (order of row_groups[i].columns) for a leaf; -1 */
    int16_t max_def, max_rep; /* levels of this node (Dremel; LogicalTypes.md "Nested Types") */
};

/* Raw bytes owned by the footer; ptr is NULL when absent, else NUL-terminated (not counted). */
struct s3l_pq_bytes {
    uint8_t *ptr;
    size_t len;
};

/* parquet.thrift struct Statistics. has_* tell which optional fields were present. */
struct s3l_pq_stats {
    bool present;
    struct s3l_pq_bytes min_value, max_value; /* ids 6 and 5, ordered by the ColumnOrder */
    struct s3l_pq_bytes min, max;             /* ids 2 and 1, deprecated signed order */
    bool has_null_count, has_distinct_count, has_nan_count;
    int64_t null_count, distinct_count, nan_count;
    bool has_min_exact, has_max_exact;
    bool is_min_exact, is_max_exact;
};

struct s3l_pq_kv {
    char *key;
    struct s3l_pq_bytes value; /* ptr NULL when the value is absent */
};

/* parquet.thrift ColumnChunk with its ColumnMetaData flattened in. Absent offsets hold -1. */
struct s3l_pq_column_chunk {
    char *file_path;           /* NULL when absent (the usual case) */
    int64_t file_offset;
    bool has_meta_data;        /* false only for encrypted columns; the fields below are zero */
    int32_t type;              /* enum s3l_pq_physical */
    size_t n_encodings;
    int32_t *encodings;        /* parquet.thrift enum Encoding values, in file order */
    size_t n_path;
    char **path;               /* path_in_schema components */
    char *path_str;            /* the components joined by '.' */
    int32_t codec;             /* parquet.thrift enum CompressionCodec */
    int64_t num_values;
    int64_t total_uncompressed_size, total_compressed_size; /* bytes, page headers included */
    int64_t data_page_offset, index_page_offset, dictionary_page_offset;
    struct s3l_pq_stats stats;
    size_t n_kv;
    struct s3l_pq_kv *kv;
    int64_t bloom_filter_offset;
    int32_t bloom_filter_length; /* -1 */
    int64_t offset_index_offset, column_index_offset;
    int32_t offset_index_length, column_index_length; /* -1 when absent */
};

struct s3l_pq_row_group {
    size_t n_columns;
    struct s3l_pq_column_chunk *columns;
    int64_t total_byte_size;        /* uncompressed column data, bytes */
    int64_t num_rows;
    int64_t file_offset;            /* -1 */
    int64_t total_compressed_size;  /* -1 */
    int32_t ordinal;                /* -1 */
};

struct s3l_pq_footer_mem;

struct s3l_pq_footer {
    char *name;              /* the file as messages name it (options' name), owned */
    uint64_t file_size;      /* bytes */
    uint64_t metadata_offset; /* file offset of the FileMetaData */
    uint32_t metadata_len;   /* its length in bytes (the 4-byte field before "PAR1") */
    int32_t version;
    size_t n_schema;
    struct s3l_pq_schema_element *schema; /* [0] is the root */
    size_t n_leaves;
    size_t *leaves;          /* schema index of each leaf, in column order */
    int64_t num_rows;
    size_t n_row_groups;
    struct s3l_pq_row_group *row_groups;
    size_t n_kv;
    struct s3l_pq_kv *kv;
    char *created_by;        /* NULL when absent */
    size_t n_column_orders;
    int32_t *column_orders;  /* member id per leaf: 1 TYPE_ORDER, 2 IEEE_754_TOTAL_ORDER, ... */
    bool encrypted;          /* encryption_algorithm present (plaintext footer, encrypted file) */
    struct s3l_pq_footer_mem *mem; /* private */
};

#define S3L_PQ_FOOTER_OPTIONS_VERSION 1

struct s3l_pq_footer_options {
    int version;              /* S3L_PQ_FOOTER_OPTIONS_VERSION */
    size_t max_footer_bytes;  /* refuse a FileMetaData longer than this; default 64 MiB */
    size_t max_memory;        /* refuse to allocate more than this for the decoded footer;
                                 default 256 MiB */
    unsigned max_depth;       /* Thrift nesting limit; default 32 */
    const char *name;         /* names the file in messages; default "parquet file" */
};

/* Fills o with the defaults. */
void s3l_pq_footer_options_init(struct s3l_pq_footer_options *o);

/*
 * Reads len bytes at file offset off into buf (exactly len, or fails). Returns 0 or a negative
 * S3L_E* code with err filled. ctx is passed back. The reader is the format's only byte source: a
 * local file is read by the caller's function (pread(2)), an object by s3l_pq_read_store
 * (s3l/destination.h); the library's parquet/ makes no OS call itself.
 */
typedef int (*s3l_pq_read_fn)(void *ctx, uint64_t off, void *buf, size_t len,
                              struct s3l_error *err);

/*
 * Reads the footer of a Parquet file of file_size bytes through read_at: the last 64 KiB (or the
 * whole file when smaller), the 4 magic bytes at offset 0 when not already read, and the rest of
 * the metadata when it is longer than the first read (at most 3 reads, 1 for a file under 64 KiB).
 * opts may be NULL for the defaults.
 * On success *out is a new footer, freed with s3l_pq_footer_free.
 * Errors (the message names the file and the byte offset):
 *   S3L_ECORRUPT: file shorter than 12 bytes, bad magic at offset 0 or file_size - 4, metadata
 *     length beyond the file, truncated or malformed Thrift, a missing required field, a schema
 *     whose num_children do not form one tree, a column chunk count that differs from the leaves;
 *   S3L_EUNSUPPORTED: an encrypted footer (magic "PARE");
 *   S3L_ETOO_LARGE: metadata longer than max_footer_bytes, or decoding it would allocate more
 *     than max_memory;
 *   S3L_ENOMEM; and whatever read_at returns.
 */
int s3l_pq_footer_read(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                       const struct s3l_pq_footer_options *opts, struct s3l_pq_footer **out,
                       struct s3l_error *err);

/* As s3l_pq_footer_read, from a whole file held in memory (len bytes); data is not retained. */
int s3l_pq_footer_read_buf(const void *data, size_t len, const struct s3l_pq_footer_options *opts,
                           struct s3l_pq_footer **out, struct s3l_error *err);

/* Frees a footer and everything it owns. NULL is a no-op. */
void s3l_pq_footer_free(struct s3l_pq_footer *f);

/*
 * Checks that a decoded footer is consistent before its offsets are trusted (what `check` does):
 * the row groups' num_rows add up to num_rows; every column chunk has its ColumnMetaData (unless
 * the file is encrypted), the physical type of its leaf, a path_in_schema naming that leaf, a
 * dictionary page before its data pages, a data_page_offset within the chunk's bytes, pages and
 * page index ranges inside the data area
 * [4, metadata_offset) (not checked for a footer from s3l_pq_footer_decode, whose file size is
 * unknown), num_values equal to the row count for a non-repeated column, and a null_count within
 * num_values; column_orders is empty or one per leaf. Returns 0, or S3L_ECORRUPT naming the row
 * group, the column and the two numbers that disagree.
 */
int s3l_pq_footer_validate(const struct s3l_pq_footer *f, struct s3l_error *err);

/* The schema element of leaf column i (i < n_leaves). */
const struct s3l_pq_schema_element *s3l_pq_footer_leaf(const struct s3l_pq_footer *f, size_t i);

/* Names of enum values as parquet.thrift spells them ("INT64", "ZSTD", "RLE_DICTIONARY",
 * "UTF8"); "UNKNOWN" for others. Never NULL. */
const char *s3l_pq_physical_name(int32_t type);
const char *s3l_pq_codec_name(int32_t codec);
const char *s3l_pq_encoding_name(int32_t encoding);
const char *s3l_pq_converted_name(int32_t converted_type);
const char *s3l_pq_repetition_name(int32_t repetition);

/*
 * Maps the Parquet schema back to Arrow-typed columns (include/s3l/schema.h), following
 * LogicalTypes.md: logical types first, converted types for older files, the LIST and MAP
 * backward-compatibility rules, and a bare repeated field as a list of required items.
 * INT96 maps to timestamp[ns]; INTERVAL (converted, FLBA 12) and unannotated FLBA to
 * fixed_size_binary; BSON, GEOMETRY, GEOGRAPHY, UNKNOWN (all-null) and logical types newer than
 * this reader to their physical type (binary, int32, ...), which keeps every byte. A
 * struct{months, days, nanoseconds} comes back as a struct. Field names are the file's (DuckDB
 * and Arrow name list items "element"). Every field is a copy; nothing points into f.
 * *out is allocated with s3l_malloc and freed with s3l_schema_free.
 * Errors: S3L_EUNSUPPORTED naming the column for VARIANT and a decimal beyond precision 38;
 * S3L_ECORRUPT naming the column for a LIST or MAP group that breaks LogicalTypes.md, a TIME or
 * TIMESTAMP without a unit, an INTEGER of another bit width, an invalid physical type;
 * S3L_ENOMEM.
 */
int s3l_pq_footer_schema(const struct s3l_pq_footer *f, struct s3l_schema **out,
                         struct s3l_error *err);

/* parquet.thrift struct ColumnIndex, for one column chunk. n_pages entries in each array. */
struct s3l_pq_column_index {
    size_t n_pages;
    bool *null_pages;
    struct s3l_pq_bytes *min_values, *max_values; /* raw PLAIN bytes; empty for null pages */
    int32_t boundary_order;   /* 0 UNORDERED, 1 ASCENDING, 2 DESCENDING */
    bool has_null_counts;
    int64_t *null_counts;     /* NULL unless has_null_counts */
    struct s3l_pq_footer_mem *mem; /* private */
};

/* parquet.thrift struct PageLocation. */
struct s3l_pq_page_location {
    int64_t offset;              /* file offset of the page header */
    int32_t compressed_page_size; /* bytes, header included */
    int64_t first_row_index;     /* within the row group */
};

/* parquet.thrift struct OffsetIndex. */
struct s3l_pq_offset_index {
    size_t n_pages;
    struct s3l_pq_page_location *pages;
    size_t n_unencoded;
    int64_t *unencoded_byte_array_data_bytes; /* NULL when absent */
    struct s3l_pq_footer_mem *mem; /* private */
};

/*
 * Reads the ColumnIndex (or OffsetIndex) of column chunk cc of a file through read_at
 * (PageIndex.md). *out is freed with s3l_pq_column_index_free / s3l_pq_offset_index_free.
 * Errors: S3L_ENOT_FOUND when the chunk has no such index; S3L_ECORRUPT when its location lies
 * beyond file_size, or the Thrift is malformed, or required fields are missing, or the lists'
 * lengths differ; S3L_ETOO_LARGE beyond max_footer_bytes; S3L_ENOMEM; and what read_at returns.
 */
int s3l_pq_column_index_read(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                             const struct s3l_pq_column_chunk *cc,
                             const struct s3l_pq_footer_options *opts,
                             struct s3l_pq_column_index **out, struct s3l_error *err);
int s3l_pq_offset_index_read(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                             const struct s3l_pq_column_chunk *cc,
                             const struct s3l_pq_footer_options *opts,
                             struct s3l_pq_offset_index **out, struct s3l_error *err);
/* Decode an index from its bytes (len bytes that were at file offset base, for messages). */
int s3l_pq_column_index_decode(const void *data, size_t len, uint64_t base,
                               const struct s3l_pq_footer_options *opts,
                               struct s3l_pq_column_index **out, struct s3l_error *err);
int s3l_pq_offset_index_decode(const void *data, size_t len, uint64_t base,
                               const struct s3l_pq_footer_options *opts,
                               struct s3l_pq_offset_index **out, struct s3l_error *err);
void s3l_pq_column_index_free(struct s3l_pq_column_index *ci);
void s3l_pq_offset_index_free(struct s3l_pq_offset_index *oi);

/* parquet.thrift struct PageHeader with the fields of its page type's header. -1: absent. */
struct s3l_pq_page_header {
    int32_t type;                   /* PageType: 0 DATA_PAGE, 1 INDEX_PAGE, 2 DICTIONARY_PAGE,
                                       3 DATA_PAGE_V2 */
    int32_t uncompressed_page_size; /* bytes, header excluded */
    int32_t compressed_page_size;   /* bytes, header excluded */
    bool has_crc;
    int32_t crc;
    int32_t num_values;             /* data pages (nulls included) and dictionary pages */
    int32_t encoding;               /* parquet.thrift enum Encoding of the values */
    int32_t num_nulls, num_rows;    /* DATA_PAGE_V2 only */
    int32_t def_levels_byte_length, rep_levels_byte_length; /* DATA_PAGE_V2 only */
    bool is_compressed;             /* DATA_PAGE_V2: whether the values section is compressed */
    size_t header_len;              /* bytes of the Thrift header itself */
};

/* Decodes one page header from the len bytes at data (file offset base, for messages); the page
 * follows at data + header_len. S3L_ECORRUPT naming the offset. No allocation. */
int s3l_pq_page_header_decode(const void *data, size_t len, uint64_t base,
                              struct s3l_pq_page_header *out, struct s3l_error *err);

/* Called for each page of a chunk, with the file offset of its header. Nonzero stops the walk
 * and is returned. */
typedef int (*s3l_pq_page_fn)(void *ctx, uint64_t offset, const struct s3l_pq_page_header *h);

/*
 * Walks the pages of column chunk cc through read_at: from the dictionary page (or the first data
 * page) each header, then its compressed_page_size bytes, until the chunk's
 * total_compressed_size bytes are used up; cb (may be NULL) sees each header. Reads one window
 * of at least 4 KiB per header. Errors: S3L_ECORRUPT naming the column, page number and offset
 * when the chunk lies beyond file_size, a header is malformed, or a page overruns the chunk;
 * S3L_ENOMEM; read_at's codes; cb's.
 */
int s3l_pq_chunk_pages(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size,
                       const struct s3l_pq_column_chunk *cc,
                       const struct s3l_pq_footer_options *opts, s3l_pq_page_fn cb, void *cb_ctx,
                       struct s3l_error *err);

/*
 * Renders one PLAIN-encoded value of leaf column se (len bytes without a length prefix: a
 * Statistics min_value/max_value or a ColumnIndex bound) as text into out (cap bytes, always
 * NUL-terminated, truncated like snprintf). Returns the length the whole text needs (excluding
 * the NUL), or -1 when the bytes cannot be a value of the column's physical type (an INT32 of 3
 * bytes). The forms are DuckDB's (parquet_metadata()): integers in decimal, unsigned where the
 * type says so; dates YYYY-MM-DD; times HH:MM:SS[.fraction without trailing zeros]; timestamps
 * "YYYY-MM-DD HH:MM:SS[.f]" plus "+00" when isAdjustedToUTC; decimals exact at their scale; UUIDs
 * 8-4-4-4-12; floats in the shortest form that reads back, ".0" added to integral values in
 * fixed notation; UTF-8 strings as is; other bytes printable as is, else \xHH.
 */
int s3l_pq_value_format(const struct s3l_pq_schema_element *se, const void *value, size_t len,
                        char *out, size_t cap);

/* Decodes a FileMetaData held in memory (len bytes that sit at file offset base), without the
 * trailer; used by the readers above and by fuzzing. Same errors as s3l_pq_footer_read. */
int s3l_pq_footer_decode(const void *data, size_t len, uint64_t base,
                         const struct s3l_pq_footer_options *opts, struct s3l_pq_footer **out,
                         struct s3l_error *err);

#endif
