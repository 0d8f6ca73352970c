/*
 * Internals of the footer reader (include/s3l/pq_footer.h), shared by footer.c (trailer, tree,
 * names), footer_decode.c (FileMetaData), footer_index.c (page index) and footer_schema.c (the
 * mapping to Arrow types). Everything a footer owns lives in one arena capped at max_memory, so
 * decoding a hostile footer allocates at most that much and frees in one call.
 */
#ifndef S3L_PARQUET_FOOTER_INTERNAL_H
#define S3L_PARQUET_FOOTER_INTERNAL_H

#include "s3l/pq_footer.h"
#include "thrift/decode.h"
#include "util/util.h"

struct s3l_pq_footer_mem {
    struct s3l_arena arena;
    size_t max; /* bytes the arena may hand out */
};

/* A decoding in progress: the Thrift cursor and the arena it fills. */
struct s3l__pqf_ctx {
    struct s3l_tdec d;
    struct s3l_pq_footer_mem *mem;
    int mem_status; /* S3L_ETOO_LARGE or S3L_ENOMEM once an allocation failed, else 0 */
};

/* Resolved options (defaults filled in). */
void s3l__pqf_options(const struct s3l_pq_footer_options *in, struct s3l_pq_footer_options *out);

/* A new arena capped at max bytes, or NULL. */
struct s3l_pq_footer_mem *s3l__pqf_mem_new(size_t max);
void s3l__pqf_mem_free(struct s3l_pq_footer_mem *m);

/*
 * Zeroed memory from the context's arena: count * size bytes. NULL when it would pass max_memory
 * (S3L_ETOO_LARGE) or on out-of-memory (S3L_ENOMEM); either also stops the decoder, so loops
 * end at the next read.
 */
void *s3l__pqf_alloc(struct s3l__pqf_ctx *c, size_t count, size_t size);
/* A NUL-terminated copy of s in the arena, or NULL as s3l__pqf_alloc. */
char *s3l__pqf_str(struct s3l__pqf_ctx *c, struct s3l_slice s);
/* Copies s into *out (NUL-terminated). 0 or the failure code. */
int s3l__pqf_bytes(struct s3l__pqf_ctx *c, struct s3l_slice s, struct s3l_pq_bytes *out);

/*
 * Turns the context's failure into err: memory failures name max_memory, Thrift failures name
 * the file offset (base + position). Returns the code.
 */
int s3l__pqf_fail(struct s3l__pqf_ctx *c, uint64_t base, const char *name, const char *what,
                  struct s3l_error *err);

/* Struct walking: `int rc = s3l__tdec_struct_begin(&c->d); while (s3l__pqf_more(c, &f, &rc))
 * {...}; return s3l__pqf_end(c, rc, seen, required, what);` where seen and required are bit sets
 * of field ids (< 32) and what names the struct whose required field is missing. */
bool s3l__pqf_more(struct s3l__pqf_ctx *c, struct s3l_tdec_field *f, int *rc);
int s3l__pqf_end(struct s3l__pqf_ctx *c, int rc, uint32_t seen, uint32_t required,
                 const char *what);
/* Enters list field f whose elements must have wire type want, allocating count * size zeroed
 * bytes into *out; *n is the count. Leave it with s3l__tdec_list_end. */
int s3l__pqf_list_enter(struct s3l__pqf_ctx *c, const struct s3l_tdec_field *f, uint8_t want,
                        size_t size, void **out, size_t *n);

/* Decodes FileMetaData (parquet.thrift) from the context into f. 0 or the decoder's code. */
int s3l__pqf_decode_file_metadata(struct s3l__pqf_ctx *c, struct s3l_pq_footer *f);

/*
 * Decodes one Statistics struct (parquet.thrift), after its field header, into *s. Shared with
 * nothing else today, but kept apart so page headers could use it.
 */
int s3l__pqf_decode_stats(struct s3l__pqf_ctx *c, struct s3l_pq_stats *s);

/*
 * Reads `len` bytes at `off` into a new buffer of the caller (s3l_free), checking that the range
 * lies within file_size. S3L_ECORRUPT naming what the range is; S3L_ENOMEM; read's codes.
 */
int s3l__pqf_read_range(s3l_pq_read_fn read_at, void *ctx, uint64_t file_size, uint64_t off,
                        uint64_t len, const char *name, const char *what, uint8_t **out,
                        struct s3l_error *err);

#endif
