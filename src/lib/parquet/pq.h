/*
 * Internals of the Parquet writer (include/s3l/parquet.h): the schema tree with its Dremel levels,
 * the leaf column buffers, the level and dictionary encoders, statistics and the metadata kept for
 * the footer and the page index. docs/internals/parquet.md describes the flow and the invariants.
 *
 * Flow: row API puts -> the leaf's page buffers (levels as bytes, values already PLAIN) -> at a row
 * boundary a full page is encoded (dictionary or PLAIN, levels RLE), compressed and appended to
 * the column's chunk buffer -> at the end of a row group each chunk (dictionary page first) goes
 * to the sink -> at close the page indexes and the footer.
 */
#ifndef S3L_PQ_INTERNAL_H
#define S3L_PQ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/schema_int.h"
#include "codec/codec.h"
#include "s3l/parquet.h"
#include "thrift/thrift.h"
#include "util/util.h"

/* parquet.thrift enum Type. */
enum pq_phys {
    PQ_BOOLEAN = 0,
    PQ_INT32 = 1,
    PQ_INT64 = 2,
    PQ_FLOAT = 4,
    PQ_DOUBLE = 5,
    PQ_BYTE_ARRAY = 6,
    PQ_FLBA = 7,
};

/* parquet.thrift enum Encoding (the ones we write). */
enum pq_encoding {
    PQ_ENC_PLAIN = 0,
    PQ_ENC_RLE = 3,
    PQ_ENC_RLE_DICTIONARY = 8,
};

/* How min/max compare (parquet.thrift ColumnOrder, TYPE_ORDER table). */
enum pq_order {
    PQ_ORD_BOOL,     /* false < true */
    PQ_ORD_SIGNED,   /* INT32/INT64 signed; decimals stored as INT32/INT64 too */
    PQ_ORD_UNSIGNED, /* UINT_8..UINT_64 stored as INT32/INT64 */
    PQ_ORD_FLOAT,    /* FLOAT/DOUBLE: NaN excluded, -0.0 min, +0.0 max */
    PQ_ORD_FLOAT16,  /* FLBA(2) FLOAT16: as FLOAT */
    PQ_ORD_BYTES,    /* unsigned byte-wise (strings, binary, uuid, fixed) */
    PQ_ORD_DECIMAL,  /* FLBA big-endian two's complement: signed */
};

/* The maximum nesting of the schema (levels are bytes; frames are a fixed array). */
#define PQ_MAX_DEPTH 64

enum pq_kind { PQ_LEAF, PQ_STRUCT, PQ_LIST, PQ_MAP, PQ_INTERVAL };

/* One node of the writer's schema tree (a copy of the s3l_schema, plus levels). */
struct pq_node {
    enum pq_kind kind;
    char *name; /* the Arrow field name */
    char *path; /* dotted path for error messages ("a.element.b") */
    bool nullable;
    struct s3l_type type; /* id/unit/tz flag/width/precision/scale; children NOT owned here */
    bool has_tz;
    uint8_t def;      /* definition level when this node is present (non-null) */
    uint8_t rep;      /* repetition level of this node's values */
    uint8_t item_def; /* LIST/MAP: definition level when an item exists */
    uint8_t item_rep; /* LIST/MAP: repetition level of the items */
    size_t first_leaf, n_leaves;
    size_t n_children;
    struct pq_node *children;
    /* Top-level leaves take a fast path in the row API. Integers stored as they come: fast_int
     * 1 INT32, 2 INT64 (0: take the general path), in [lo, hi]. Strings: fast_bytes 1 UTF8 or
     * JSON (validated), 2 BINARY. col: the leaf's column (set by the writer). */
    uint8_t fast_int;
    uint8_t fast_bytes;
    int64_t lo, hi;
    struct pq_col *col;
};

/* Where a page went, and its statistics, for the page index (PageIndex.md). */
struct pq_page_info {
    int64_t offset;    /* within the chunk until written, then absolute in the file */
    int32_t size;      /* compressed page size including its header */
    int64_t first_row; /* within the row group */
    int64_t null_count;
    bool null_page; /* only nulls */
    bool has_minmax;
    uint8_t *min, *max; /* arena-owned, possibly truncated */
    uint32_t min_len, max_len;
};

/* A max that cannot be truncated (all 0xFF, all U+10FFFF) is kept whole up to this many bytes,
 * else dropped: the export never copies more than this per bound. */
#define PQ_STATS_WHOLE_MAX 4096

/* Statistics being gathered over a page or a chunk. */
struct pq_stats {
    int64_t null_count;
    int64_t nan_count;
    bool has_minmax;
    bool min_exact, max_exact;
    struct s3l_buf min, max; /* PLAIN bytes without a length prefix */
};

/*
 * A hash slot. key is the value itself for fixed-width values of at most 8 bytes (so a probe
 * touches one cache line and no value), else the value's 64-bit hash. idx is index + 1, 0 empty.
 */
struct pq_dict_slot {
    uint64_t key;
    uint32_t idx;
};

/* The dictionary of one column chunk: PLAIN values plus an open-addressing hash of indices. */
struct pq_dict {
    struct s3l_buf values; /* PLAIN-encoded entries, in index order */
    uint32_t *offsets;     /* BYTE_ARRAY: start of entry i in values (n + 1 entries) */
    size_t offsets_cap;
    uint32_t n;
    struct pq_dict_slot *slots; /* open addressing, linear probing */
    uint32_t slot_mask;
    size_t limit; /* bytes of values; an entry past it is refused (dictionary_page_limit) */
    /* Integer chunks whose values so far only grew (sorted timestamps): entries [hashed, n) were
     * appended without the hash table, as values above max_int cannot be in it; the table
     * catches up before its next probe. max_valid: max_int is the largest entry (no probe yet). */
    uint32_t hashed;
    bool max_valid;
    int64_t max_int;
};

/* Metadata of one written column chunk, kept for the footer. */
struct pq_chunk_meta {
    int64_t num_values;
    int64_t total_uncompressed, total_compressed;
    int64_t data_page_offset, dict_page_offset;            /* dict -1 when none */
    uint32_t encodings;                                    /* bit (1 << pq_encoding) */
    int32_t dict_pages, dict_data_pages, plain_data_pages; /* for encoding_stats */
    struct pq_stats_out {
        int64_t null_count, nan_count;
        bool has_minmax, min_exact, max_exact;
        uint8_t *min, *max;
        uint32_t min_len, max_len;
    } stats;
    size_t n_pages;
    struct pq_page_info *pages;
    int64_t ci_offset, oi_offset;
    int32_t ci_len, oi_len;
};

struct pq_row_group_meta {
    int64_t num_rows;
    int64_t total_byte_size, total_compressed, file_offset;
    struct pq_chunk_meta *chunks; /* one per leaf */
};

/* One leaf column: its description and its buffers. The fields the row API touches per value
 * come first, so that a value costs few cache lines. */
struct pq_col {
    /* The page in progress. defs.len and reps.len (when the column has those levels) always
     * equal n_levels: one byte per level entry. */
    struct s3l_buf values; /* PLAIN (BOOLEAN: one byte per value) */
    struct s3l_buf defs;   /* one byte per level entry */
    uint64_t n_levels;     /* level entries (= values incl. nulls) */
    uint64_t n_values;     /* non-null values */
    /* Lengths before the row in progress first wrote to this column, for rollback; valid when
     * mark_row equals the writer's rows_seen. */
    uint64_t mark_row;
    size_t mark_values;
    uint64_t mark_levels, mark_nvalues;
    uint8_t max_def, max_rep;
    /* A top-level leaf: its field index (else -1). The row API's fast paths append to it without
     * marks: rollback takes back the last entry of each field the row completed, which for a
     * BYTE_ARRAY value began at last_start. */
    int32_t top_field;
    size_t last_start;
    struct s3l_buf reps; /* one byte per level entry */

    const struct pq_node *node;
    enum pq_phys phys;
    int32_t type_length; /* FLBA width */
    enum pq_order order;
    size_t n_path;
    const char **path;  /* path_in_schema (points into the nodes) */
    size_t value_width; /* fixed width of a PLAIN value, 0 for BYTE_ARRAY */
    size_t bound_keep;  /* BYTE_ARRAY statistics keep this many bytes of min/max (0: all) */
    uint64_t page_rows;
    uint64_t page_first_row; /* within the row group */

    /* The chunk in progress. */
    struct s3l_buf chunk; /* encoded data pages with headers */
    struct pq_dict dict;
    bool dict_on;   /* dictionary still in use for new pages */
    bool dict_used; /* some page of this chunk is dictionary-encoded */
    bool plain_used;
    int32_t n_dict_pages, n_plain_pages; /* data pages of each encoding in this chunk */
    int64_t chunk_values;
    int64_t chunk_uncompressed;
    struct pq_stats chunk_stats;
    bool page_index_ok; /* every page had min/max or was all null */
    size_t n_pages, pages_cap;
    struct pq_page_info *pages;

    /* The file size estimate (size.c), over the whole file: page buffer bytes given to page
     * encoding (est_raw), the bytes they became on storage (est_out: page header and compressed
     * body), and the dictionary values those pages added (est_dict); the dictionary's value
     * bytes when last compressed to measure it (dict_meas_raw) and its compressed size then. */
    uint64_t est_raw, est_out, est_dict;
    size_t dict_meas_raw, dict_meas_out;
    /* From those (s3l__pq_size_ratios): storage bytes per page buffer byte, and the
     * dictionary's compressed bytes per value byte (1 before the first measurement of each). */
    double est_per_byte, est_dict_ratio;
    uint32_t meta_chunk, meta_page; /* footer bytes guessed per chunk and per page */
};

/* A frame of the row cursor: a group being filled. */
struct pq_frame {
    const struct pq_node *node;
    uint32_t child;     /* STRUCT/root: next child; MAP: 0 key next, 1 value next */
    uint32_t items;     /* LIST/MAP items so far */
    uint8_t rep_before; /* the repetition level when the list/map began */
};

struct s3l_pq_writer {
    /* Row cursor. The fields every put reads come first, close together. depth is 0 outside a
     * row. top: in a row, at depth 1, not poisoned (the puts' fast paths; one byte to test). */
    bool top;
    bool in_row;
    bool poisoned;
    uint8_t cur_rep;
    int depth;
    bool closed;
    int sticky;           /* first sink/codec error */
    uint32_t n_top;       /* root.n_children: the fields of a row */
    uint64_t rows_seen;   /* rows begun, for messages (1-based) */
    uint64_t rows;        /* rows committed to the file */
    uint64_t rg_rows;     /* rows of the row group in progress */
    uint64_t rg_rows_max; /* opts.row_group_rows, UINT64_MAX when 0 (no limit) */
    /* Bytes the row API appended to page buffers since rg_bytes was last summed (values, level
     * bytes; less what a rollback took back): rg_bytes + added is always the buffered total. */
    uint64_t added;
    /* While added stays below this, no page is full and the row group is under its byte size
     * and budget mark, so a committed row needs no look at the columns (0: look next row). */
    uint64_t slack;
    struct s3l_pq_budget *budget; /* the shared budget, or NULL */
    struct pq_frame frames[PQ_MAX_DEPTH];
    struct s3l_error row_err;

    struct s3l_pq_options opts;
    struct s3l_pq_sink sink;
    char *created_by;
    char **kv_keys, **kv_values;
    struct pq_node root;
    size_t n_cols;
    struct pq_col *cols;
    struct s3l__codec codec;
    struct s3l_arena arena; /* page-index and stats bytes; lives until free */

    /* Row group in progress. */
    uint64_t rg_bytes;  /* encoded bytes buffered (compressed pages + raw page data) */
    size_t budget_mark; /* rg_bytes at which the budget is charged again (a page past the last) */

    /* File. */
    uint64_t written;
    struct s3l_error sticky_err;
    size_t n_rgs, rgs_cap;
    struct pq_row_group_meta *rgs;
    struct s3l_buf scratch;  /* page assembly */
    struct s3l_buf scratch2; /* compressed page body / headers */
    struct s3l_buf idx;      /* dictionary indices */
    struct s3l_buf hdr;      /* a page header */
    struct s3l_buf bitmap;   /* dictionary entries used by a page */
    struct s3l_buf dense;    /* dict.c: value -> index + 1 over a narrow page's integer range */
    struct pq_stats pstats;  /* the statistics of the page being encoded */

    /* The size estimate (size.c): est_base is what the file would have on storage if closed at
     * the last look at the columns, plus the reserve (opts.file_size / 50); est_base + added is
     * s3l_pq_writer_size_estimate. footer_done: exact footer bytes of the row groups written
     * (their RowGroup, ColumnIndex and OffsetIndex); footer_fixed: the rest of the footer
     * (schema, created_by, column orders, key/value metadata, length and magic). size_reached:
     * a look with every page and dictionary measured found opts.file_size reached. */
    uint64_t est_base, footer_done, footer_fixed;
    uint64_t next_measure; /* the estimate at which the next look measures */
    bool size_reached;

    /* Budget membership. */
    size_t budget_charged;
    size_t budget_slot;
    int flush_requested; /* set by the budget, read at row_end (atomic) */
};

/* schema_map.c */
int s3l__pq_schema_build(struct s3l_pq_writer *w, const struct s3l_schema *s,
                         struct s3l_error *err);
void s3l__pq_schema_free(struct s3l_pq_writer *w);
void s3l__pq_schema_write(struct s3l_pq_writer *w, struct s3l_tc_enc *e);
uint32_t s3l__pq_schema_elements(const struct s3l_pq_writer *w);

/* levels.c: RLE/bit-packing hybrid (Encodings.md "Run Length Encoding / Bit-Packing Hybrid"). */
int s3l__pq_rle_u8(const uint8_t *v, size_t n, int bit_width, struct s3l_buf *out);
int s3l__pq_rle_u32(const uint32_t *v, size_t n, int bit_width, struct s3l_buf *out);
int s3l__pq_bitpack_bools(const uint8_t *v, size_t n, struct s3l_buf *out);
static inline int s3l__pq_bit_width(uint64_t max)
{
    return max ? 64 - __builtin_clzll(max) : 0;
}

/* dict.c */
void s3l__pq_dict_init(struct pq_dict *d);
void s3l__pq_dict_reset(struct pq_dict *d);
void s3l__pq_dict_free(struct pq_dict *d);
/*
 * Maps the page's PLAIN values to indices into idx (uint32 each), adding new entries. If the
 * dictionary would grow beyond limit bytes, the entries added by this page are dropped again and
 * 1 is returned (fall back to PLAIN). 0 on success, negative S3L_E* on failure. dense is scratch
 * (at most PQ_DENSE_RANGE * 4 bytes) for integer pages whose values span a narrow range.
 */
#define PQ_DENSE_RANGE 8192
int s3l__pq_dict_encode(struct pq_dict *d, const struct pq_col *c, size_t limit,
                        struct s3l_buf *idx, struct s3l_buf *dense);

/* Frees the hash table (after a fallback to PLAIN the values are still needed, lookups not). */
void s3l__pq_dict_drop_table(struct pq_dict *d);

/* stats.c */
void s3l__pq_stats_init(struct pq_stats *s);
void s3l__pq_stats_reset(struct pq_stats *s);
void s3l__pq_stats_free(struct pq_stats *s);
/* Gathers min/max/nan over the PLAIN values of a page. */
int s3l__pq_stats_page(const struct pq_col *c, struct pq_stats *s);
/* Compares two bounds (PLAIN, no length prefix) in the column's order: <0, 0, >0. */
int s3l__pq_cmp_values(const struct pq_col *c, const uint8_t *a, size_t an, const uint8_t *b,
                       size_t bn);
/*
 * The same over a dictionary-encoded page of BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY values: only the
 * distinct entries the page uses (its indices idx, one per non-null value) are compared. scratch
 * holds a bitmap of the entries seen.
 */
int s3l__pq_stats_page_dict(const struct pq_col *c, const uint32_t *idx, const struct pq_dict *d,
                            struct s3l_buf *scratch, struct pq_stats *s);
/* Merges page statistics into chunk statistics. */
int s3l__pq_stats_merge(const struct pq_col *c, struct pq_stats *into, const struct pq_stats *s);
/*
 * Copies min/max truncated to max_len (BYTE_ARRAY only; max rounded up) into the arena.
 * Returns 0, or S3L_ENOMEM. *has_minmax is cleared when no valid bound exists.
 */
int s3l__pq_stats_export(const struct pq_col *c, const struct pq_stats *s, size_t max_len,
                         struct s3l_arena *a, struct pq_stats_out *out);
/* IEEE 754 half precision from double, round to nearest even. */
uint16_t s3l__pq_half_from_double(double d);
double s3l__pq_half_to_double(uint16_t h);

/* column.c */
int s3l__pq_col_init(struct pq_col *c);
void s3l__pq_col_free(struct pq_col *c);
/* Capacity kept by a buffer between uses: a page's statistics bound, a chunk between row groups.
 * Larger buffers are freed (s3l__pq_buf_trim) so that memory follows the budget, not the
 * largest value or row group seen so far. */
#define PQ_TRIM_BOUND ((size_t)64 << 10)
#define PQ_TRIM_CHUNK ((size_t)64 << 10)
/* Frees b (keeping its max) when its capacity exceeds keep bytes. */
void s3l__pq_buf_trim(struct s3l_buf *b, size_t keep);
/* Encodes the page in progress into the chunk buffer. */
int s3l__pq_page_flush(struct s3l_pq_writer *w, struct pq_col *c);
/* Writes the chunk to the sink (dictionary page first) and fills *meta. */
int s3l__pq_chunk_write(struct s3l_pq_writer *w, struct pq_col *c, struct pq_chunk_meta *meta);
int s3l__pq_sink_write(struct s3l_pq_writer *w, const void *p, size_t n);

/* meta.c: Thrift structures of parquet.thrift. */
void s3l__pq_write_stats(struct s3l_tc_enc *e, int16_t id, const struct pq_stats_out *s,
                         const struct pq_col *c);
int s3l__pq_footer(struct s3l_pq_writer *w, struct s3l_buf *out);
/* Footer bytes of row group g once its chunks are written (RowGroup in FileMetaData with room
 * for the page-index locations, ColumnIndex and OffsetIndex); encodes into w->scratch. */
int s3l__pq_row_group_footer_bytes(struct s3l_pq_writer *w, size_t g, uint64_t *out);

/* size.c: the file size estimate. init after the schema is built (measures the fixed footer);
 * look at a row boundary after the columns were looked at (may encode pages early and measure
 * dictionaries, see size.c); *measured: pages were encoded, so buffered totals changed. */
int s3l__pq_size_init(struct s3l_pq_writer *w);
int s3l__pq_size_look(struct s3l_pq_writer *w, bool *measured);
uint64_t s3l__pq_size_now(const struct s3l_pq_writer *w);
/* Recomputes c's est_per_byte and est_dict_ratio after est_* or dict_meas_* changed. */
void s3l__pq_size_ratios(struct pq_col *c);
int s3l__pq_column_index(const struct pq_col *c, const struct pq_chunk_meta *m,
                         struct s3l_buf *out);
int s3l__pq_offset_index(const struct pq_chunk_meta *m, struct s3l_buf *out);

/* writer.c */
/*
 * After rows were committed: flushes full pages, ends the row group when it is due. The byte
 * size and the budget are looked at every 16 rows, or now when check_all.
 */
int s3l__pq_rows_committed(struct s3l_pq_writer *w, bool check_all, struct s3l_error *err);
/* Sums the buffered bytes into rg_bytes again (after a rollback); the next commit looks at the
 * columns. */
void s3l__pq_recount(struct s3l_pq_writer *w);
/* Records the first sink/codec failure (sticky) and returns it. */
int s3l__pq_set_sticky(struct s3l_pq_writer *w, int rc, const char *what);
/* Copies the sticky failure into err (when err holds none) and returns its code. */
int s3l__pq_report(struct s3l_pq_writer *w, struct s3l_error *err);

/* rows.c */
/* Length of the valid UTF-8 prefix of s[0..n) (RFC 3629). */
size_t s3l__pq_utf8_valid_prefix(const uint8_t *s, size_t n);

/* budget.c */
int s3l__pq_budget_join(struct s3l_pq_budget *b, struct s3l_pq_writer *w);
void s3l__pq_budget_leave(struct s3l_pq_budget *b, struct s3l_pq_writer *w);
/* Charges w's buffered bytes; returns true when w itself should flush now. */
bool s3l__pq_budget_update(struct s3l_pq_budget *b, struct s3l_pq_writer *w, size_t bytes);

#endif
