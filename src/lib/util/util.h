/*
 * util: the internal toolbox every module uses: a capped owning buffer, a non-owning slice,
 * an arena that is reset per row group or per request, and small helpers (hex, overflow checks).
 * docs/internals/util.md has the invariants.
 */
#ifndef S3L_UTIL_H
#define S3L_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "s3l/alloc.h"
#include "s3l/error.h"

#define S3L_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define S3L_MIN(a, b) ((a) < (b) ? (a) : (b))
#define S3L_MAX(a, b) ((a) > (b) ? (a) : (b))

/* A non-owning view of bytes; never assumed NUL-terminated. */
struct s3l_slice {
    const uint8_t *ptr;
    size_t len;
};

static inline struct s3l_slice s3l_slice_make(const void *ptr, size_t len)
{
    struct s3l_slice s = {(const uint8_t *)ptr, len};
    return s;
}

static inline struct s3l_slice s3l_slice_cstr(const char *s)
{
    return s3l_slice_make(s, s ? strlen(s) : 0);
}

static inline bool s3l_slice_eq(struct s3l_slice a, struct s3l_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static inline bool s3l_slice_eq_cstr(struct s3l_slice a, const char *s)
{
    return s3l_slice_eq(a, s3l_slice_cstr(s));
}

/*
 * An owning, growable byte buffer with a hard cap set at init (curl's dynbuf). Appending past
 * the cap fails with S3L_ETOO_LARGE and leaves the buffer unchanged. The bytes are always
 * followed by a NUL that is not counted in len, so ptr can be used as a C string.
 */
struct s3l_buf {
    uint8_t *ptr;
    size_t len;
    size_t cap; /* allocated bytes, including room for the NUL */
    size_t max; /* hard cap on len */
};

void s3l_buf_init(struct s3l_buf *b, size_t max);
void s3l_buf_free(struct s3l_buf *b);                  /* frees memory; b can be reused after init */
void s3l_buf_reset(struct s3l_buf *b);                 /* len = 0, memory kept */
int s3l_buf_reserve(struct s3l_buf *b, size_t extra); /* room for extra more bytes */
int s3l_buf_append(struct s3l_buf *b, const void *p, size_t n);
int s3l_buf_append_byte(struct s3l_buf *b, uint8_t c);
int s3l_buf_append_str(struct s3l_buf *b, const char *s);
int s3l_buf_printf(struct s3l_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Hands the bytes to the caller (free with s3l_free) and leaves b empty. Never NULL on success. */
int s3l_buf_detach(struct s3l_buf *b, uint8_t **out, size_t *out_len);
/* Drops the first n bytes (n <= len), moving the rest to the front. */
void s3l_buf_consume(struct s3l_buf *b, size_t n);
static inline void s3l_buf_truncate(struct s3l_buf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        if (b->ptr)
            b->ptr[len] = 0;
    }
}
static inline struct s3l_slice s3l_buf_slice(const struct s3l_buf *b)
{
    return s3l_slice_make(b->ptr, b->len);
}

/*
 * An arena: many small allocations freed together by reset (per row group, per request).
 * Blocks are kept across resets up to the high-water mark. Allocations are 8-byte aligned.
 */
struct s3l_arena_block;
struct s3l_arena {
    struct s3l_arena_block *head;
    size_t block_size;
    size_t used_total; /* bytes handed out since the last reset */
};

void s3l_arena_init(struct s3l_arena *a, size_t block_size);
void *s3l_arena_alloc(struct s3l_arena *a, size_t size);           /* NULL on failure */
char *s3l_arena_strndup(struct s3l_arena *a, const char *s, size_t n); /* NUL-terminated */
void s3l_arena_reset(struct s3l_arena *a);
void s3l_arena_free(struct s3l_arena *a);
/* Overwrites every byte handed out (OPENSSL_cleanse) before a free, for arenas that held secrets. */
void s3l_arena_wipe(struct s3l_arena *a);

/* Lowercase hex of n bytes into out (2n + 1 bytes, NUL-terminated). */
void s3l_hex_encode(const uint8_t *in, size_t n, char *out);

/* The value (0..15) of the hex digit c, either case ('7' is 7, 'b' and 'B' are 11), or -1 for
 * any other byte (a char or an unsigned char value; a negative char too). The decode side of
 * s3l_hex_encode: UUID text, %XX escapes. Inline: the converter calls it per UUID digit. */
static inline int s3l_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Copies n bytes from s to d (not overlapping); short ones (most string values) without a call
 * to memcpy: two overlapping moves that stay within [0, n) of both buffers. */
static inline void s3l_copy_short(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n >= 4 && n <= 16) {
        if (n >= 8) {
            uint64_t a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + n - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
        } else {
            uint32_t a, b;
            memcpy(&a, s, 4);
            memcpy(&b, s + n - 4, 4);
            memcpy(d, &a, 4);
            memcpy(d + n - 4, &b, 4);
        }
    } else if (n > 0 && n < 4) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    } else if (n) {
        memcpy(d, s, n);
    }
}

/* a * b into *out, false on overflow. */
static inline bool s3l_mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* ---- Growable arrays (alloc.c) ------------------------------------------------------------ */

/*
 * Room for at least need elements of elem_size bytes (elem_size > 0) in a growable array whose
 * allocation holds *cap elements; the one grow-by-doubling of the tree. items is the address of
 * the caller's array pointer, of any object pointer type (&l->objs for struct object *objs):
 * the pointer is read and written with memcpy, so no cast through void ** is needed. The array
 * grows to min_cap elements (1 when min_cap is 0) when *cap is 0, else to *cap, then doubles
 * until need fits, so the usual "full: cap ? cap * 2 : N" is s3l__array_reserve(&a, &cap,
 * n + 1, sizeof(*a), N). The elements already there keep their values; new room is not
 * initialised. Returns 0 (at once, allocating nothing, when need <= *cap), or S3L_ENOMEM when
 * the allocation fails or the new size in bytes (elements times elem_size) would not fit a
 * size_t; *items and *cap are then unchanged and the array intact. No struct s3l_error: the
 * caller knows what it was growing and says so.
 */
int s3l__array_reserve(void *items, size_t *cap, size_t need, size_t elem_size, size_t min_cap);

/*
 * s3l__array_reserve with a ceiling: the array never holds more than max_cap elements (the last
 * doubling stops at max_cap), for arrays whose length is bounded by configuration (the JSON
 * scanner's tape of at most max_values entries). Returns 0, S3L_ETOO_LARGE when need > max_cap,
 * S3L_ENOMEM as s3l__array_reserve; on failure *items and *cap are unchanged.
 */
int s3l__array_reserve_max(void *items, size_t *cap, size_t need, size_t elem_size,
                           size_t min_cap, size_t max_cap);

/* ---- Out of memory (error.c) ------------------------------------------------------------- */

/*
 * rc as it is, after giving err the message "out of memory WHAT" when rc is S3L_ENOMEM and err
 * (may be NULL) has none yet: for a function whose helpers cannot take an err (a builder, a
 * parser of a small document), so that every out-of-memory failure says what was being done.
 */
int s3l__oom(struct s3l_error *err, int rc, const char *what);

/* ---- Message digests (digest.c) ----------------------------------------------------------- */

/* The digests the library computes: SHA-256 (FIPS 180-4) and MD5 (RFC 1321, for S3's
 * Content-MD5 only). */
enum s3l__md_alg { S3L__MD_SHA256, S3L__MD_MD5 };
#define S3L__MD_MAX 32 /* bytes of the longest digest */

/*
 * An incremental digest over libcrypto: init, update as the bytes pass, final; init again to
 * hash the next message with the same context; free when done. Zero-initialise it before the
 * first init. No EVP_ or SHA256_ call outside util: every module hashes through here.
 */
struct s3l__md {
    void *ctx; /* libcrypto's EVP_MD_CTX, made at the first init; NULL until then */
    enum s3l__md_alg alg;
};

/* The digest's length in bytes: 32 (SHA-256) or 16 (MD5). */
size_t s3l__md_size(enum s3l__md_alg alg);
/* Starts (or restarts) a digest of alg in m. Returns 0; S3L_ENOMEM when the context cannot be
 * made, S3L_EINTERNAL when libcrypto refuses to start; err (may be NULL) says which. */
int s3l__md_init(struct s3l__md *m, enum s3l__md_alg alg, struct s3l_error *err);
/* Hashes data[0..len). Returns 0 or S3L_EINTERNAL (libcrypto failed, or m was never started). */
int s3l__md_update(struct s3l__md *m, const void *data, size_t len, struct s3l_error *err);
/* The digest of everything since init into out (s3l__md_size bytes, at most S3L__MD_MAX).
 * Returns 0 or S3L_EINTERNAL. m may be started again with s3l__md_init. */
int s3l__md_final(struct s3l__md *m, uint8_t *out, struct s3l_error *err);
/* Frees m's context (a never-started m's too) and sets it to NULL: m may be started again. */
void s3l__md_free(struct s3l__md *m);

/* One-shot SHA-256 of data[0..len) into out (32 bytes). Returns 0 or S3L_EINTERNAL (libcrypto
 * failed: it allocates a context of its own), err (may be NULL) saying so. */
int s3l__sha256(const void *data, size_t len, uint8_t out[32], struct s3l_error *err);
/* The same as lowercase hex into out[65] (NUL-terminated). Returns 0 or S3L_EINTERNAL, without a
 * message: the caller names what it was hashing. out is untouched on failure. */
int s3l__sha256_hex(const void *data, size_t len, char out[65]);

/* ---- UTF-8 (utf8.c) ------------------------------------------------------------------------ */

/*
 * Length of the UTF-8 sequence at p (p < end) per RFC 3629 section 4 (the table of well-formed
 * byte sequences: no overlongs, no surrogates, nothing past U+10FFFF), or 0 when it is not well
 * formed or runs past end. Inline: the JSON scanner calls it for every non-ASCII byte.
 */
static inline size_t s3l_utf8_seq(const uint8_t *p, const uint8_t *end)
{
    uint8_t b0 = p[0];
    size_t avail = (size_t)(end - p);
    if (b0 < 0x80)
        return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        return avail >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (avail < 3 || (p[2] & 0xC0) != 0x80)
            return 0;
        uint8_t lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (avail < 4 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        uint8_t lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi ? 4 : 0;
    }
    return 0;
}

/*
 * Whether p[0..n) is valid UTF-8 (s3l_utf8_seq's rules; ASCII runs are skipped eight bytes at a
 * time). On false, *bad (when not NULL) is the offset of the first byte of the first bad
 * sequence. p may be NULL when n is 0. Never fails otherwise; allocates nothing.
 */
bool s3l__utf8_valid(const uint8_t *p, size_t n, size_t *bad);

/* ---- Decimal text (decimal.c) ------------------------------------------------------------- */

/* Room for any text of s3l__decimal_be_text: 77 digits, a sign, a point and the NUL. */
#define S3L_DECIMAL_TEXT_MAX 80

/*
 * The decimal text of the big-endian two's complement integer v[0..n) (1 to 16 bytes) with scale
 * digits after the point, NUL-terminated, into buf (S3L_DECIMAL_TEXT_MAX bytes): 5 at scale 2 is
 * "0.05", -12340 at scale 3 "-12.340" (Parquet LogicalTypes.md: unscaled value x 10^-scale).
 * Returns the text's length, or -1 (buf untouched) when n is 0 or over 16 or scale is outside
 * 0..76.
 */
int s3l__decimal_be_text(const uint8_t *v, size_t n, int scale, char *buf);

/* ---- CSV delimiter (delim.c) --------------------------------------------------------------- */

/*
 * A CSV field delimiter as a user writes it: one printable ASCII character or a tab, or "tab" or
 * "\t" (backslash, t) for a tab. Refused (S3L_EINVALID_CONFIG, *why a static sentence saying
 * what was expected): empty text, more than one character, a byte of a multi-byte character,
 * other control characters, and the quote, CR and LF, which RFC 4180 section 2 gives their own
 * meaning (they quote fields and end rows). *out gets the byte (0 on failure). The Pipeline
 * schema's $defs/csvDelimiter pattern admits the same texts.
 */
int s3l__csv_delimiter_parse(const char *text, char *out, const char **why);

/* ------------------------------------------------------------------ URI encoding (uri.c) */
/* (uri.c, sigv4.c and xml.c came from src/lib/s3: the S3 client and creds' STS client share them.) */

/*
 * Appends the RFC 3986 percent-encoding of in[0..len) to out, as SigV4 defines it: every byte
 * except the unreserved A-Z a-z 0-9 - . _ ~ becomes %XY with uppercase hex; '/' is kept when
 * keep_slash is set (object key paths). Bytes are taken as they are (UTF-8 is encoded byte by
 * byte). Returns 0, or S3L_ETOO_LARGE / S3L_ENOMEM from the buffer.
 */
int s3l__uri_encode(struct s3l_buf *out, const char *in, size_t len, bool keep_slash);

/* ------------------------------------------------------------------ SigV4 (sigv4.c) */

#define S3L_SIGV4_UNSIGNED "UNSIGNED-PAYLOAD"
#define S3L_SIGV4_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* One header or query parameter: name and value as NUL-terminated strings, not encoded. */
struct s3l__kv {
    const char *name;
    const char *value;
};

/* Credentials as the signer sees them. session_token may be NULL or "". */
struct s3l__creds {
    const char *access_key;
    const char *secret_key;
    const char *session_token;
};

/*
 * The signing key, cached per (day, region, service, secret): deriving it costs four HMACs and
 * it changes only when one of these does (SigV4 "Calculate the signature", step 1). The secret is
 * remembered only as its SHA-256, never in clear.
 */
struct s3l__sigv4_cache {
    char day[9];
    char region[64];
    char service[32];
    uint8_t secret_sha[32];
    uint8_t key[32];
    bool valid;
};

/*
 * A request to sign. path: as it is sent on the wire (already percent-encoded by the caller for
 * S3; see s3l__uri_encode). query: decoded parameters in any order (the signer encodes and sorts
 * them). headers: every header to sign, names in any case; "host" must be among them.
 * payload_hash: lowercase hex SHA-256 of the body or S3L_SIGV4_UNSIGNED.
 * s3: S3's rules: the path is used as is (no normalisation, no second encoding); otherwise the
 * generic SigV4 rules of the test suite apply (dot segments and repeated '/' removed, then the
 * path is encoded once more).
 */
struct s3l__sigv4_request {
    const char *method;
    const char *path;
    const struct s3l__kv *query;
    size_t n_query;
    const struct s3l__kv *headers;
    size_t n_headers;
    const char *payload_hash;
    bool s3;
};

/* What signing produced. Each buffer is NUL-terminated; free with s3l__sigv4_result_free. */
struct s3l__sigv4_result {
    struct s3l_buf canonical_request;
    struct s3l_buf string_to_sign;
    struct s3l_buf canonical_query; /* also the query string to send */
    struct s3l_buf authorization;   /* the Authorization header's value */
    char signed_headers[1024];
    char signature[65];
    char amz_date[17]; /* YYYYMMDDTHHMMSSZ */
};

void s3l__sigv4_result_init(struct s3l__sigv4_result *r);
void s3l__sigv4_result_free(struct s3l__sigv4_result *r);

/*
 * Signs req at time now (seconds since the epoch, UTC) for region and service, following the
 * SigV4 steps (canonical request, string to sign, signing key, signature). The caller must send
 * the X-Amz-Date header with r->amz_date and X-Amz-Security-Token when a session token is set;
 * both must be among req->headers (s3l__sigv4_sign does not add headers). cache may be NULL.
 * Returns 0; S3L_EINVALID_ARGUMENT for a missing field or host header, S3L_ETOO_LARGE when a
 * buffer cap (64 KiB per part) is passed, S3L_ENOMEM, or S3L_EINTERNAL when libcrypto fails.
 */
int s3l__sigv4_sign(const struct s3l__sigv4_request *req, const struct s3l__creds *creds,
                    const char *region, const char *service, time_t now,
                    struct s3l__sigv4_cache *cache, struct s3l__sigv4_result *r);

/* Formats t as YYYYMMDDTHHMMSSZ (UTC) into out[17]. */
void s3l__amz_date(time_t t, char out[17]);

/* ------------------------------------------------------------------ XML (xml.c) */

/*
 * A small tree of an XML answer (S3, STS), built with expat. Element names have their namespace
 * dropped; text is kept for leaf elements only (S3 answers carry no mixed content). A document
 * with a DOCTYPE is refused (no entity expansion at all), as is one nested deeper than 32 or
 * holding more than 1,000,000 elements; input size is already capped by the transport.
 */
struct s3l__xml_node {
    const char *name;
    const char *text; /* "" when none */
    struct s3l__xml_node *child, *last_child, *next;
};

struct s3l__xml_doc {
    struct s3l_arena arena;
    struct s3l__xml_node *root;
};

/* Parses data into doc (which the caller frees with s3l__xml_doc_free, also on failure).
 * Returns 0 or S3L_ECORRUPT (message names line and column), S3L_ENOMEM. */
int s3l__xml_parse(struct s3l__xml_doc *doc, const void *data, size_t len, struct s3l_error *err);
void s3l__xml_doc_free(struct s3l__xml_doc *doc);
/* Wipes the tree's text (OPENSSL_cleanse) before s3l__xml_doc_free: for answers holding secrets
 * (STS credentials). The parser's own text buffer is always wiped. */
void s3l__xml_doc_wipe(struct s3l__xml_doc *doc);
/* The first child of n named name, or NULL. */
const struct s3l__xml_node *s3l__xml_child(const struct s3l__xml_node *n, const char *name);
/* The text of n's first child named name, or NULL when there is none. */
const char *s3l__xml_text(const struct s3l__xml_node *n, const char *name);


/* ---- JSON text (json_text.c) --------------------------------------------------------------- */

struct json_t;       /* jansson's value */
struct json_error_t; /* and its parse error */
/*
 * json_dumps(json, flags) (jansson's flags), made sure to be whole: a NUL-terminated text to
 * free with s3l_free, or NULL when json is NULL, when jansson refuses it (a bare scalar without
 * JSON_ENCODE_ANY, a cycle) or when an allocation failed (jansson's own json_dumps can then return
 * a text with a key missing). Use it instead of json_dumps everywhere in src/lib.
 */
char *s3l__json_dumps(const struct json_t *json, size_t flags);
/*
 * json_loadb(text, len, flags, je) that tells out of memory apart: jansson 2.14 reports a failed
 * allocation while parsing as a syntax error ("invalid token") or not at all (a value may be
 * missing from what it returns). NULL with *nomem true when any of jansson's allocations failed
 * during the parse (nothing is returned then), NULL with *nomem false for text that is not JSON
 * (je says why, as json_loadb's). je may be NULL.
 */
struct json_t *s3l__json_loadb(const char *text, size_t len, size_t flags,
                               struct json_error_t *je, bool *nomem);
/* How many of jansson's allocations failed on this thread so far (alloc.c). */
unsigned long s3l__json_alloc_failures(void);

/*
 * Request counts (counts.c). s3l__counts_add: a plus b, op by op (matched by name), into out
 * (which may be a); unit from a, else b.
 *
 * A tally: the requests of one thread, counted by name as s3l_store_counts counts them, for one
 * owner only (the object whose counts a store reports: the store itself when it counts its own
 * dispatch operations, its S3 client when it reports S3 requests), so that the requests of a
 * thread that shares a store with others can be told apart (the destination's committer). A
 * thread sets its tally with s3l__tally_set (NULL: none); the store's dispatch functions and the
 * S3 client add to the tally current on the thread that calls them, or, for an S3 request, on the
 * thread that submitted it (an attempt may be started by another thread driving the transfers).
 * s3l__tally_add is a no-op for a NULL tally or another owner. Safe from any thread (a mutex).
 */
#include <pthread.h>

#include "s3l/counts.h"

struct s3l__tally {
    pthread_mutex_t mu;
    const void *owner;
    struct s3l_store_counts counts; /* cumulative since init */
};
void s3l__counts_add(const struct s3l_store_counts *a, const struct s3l_store_counts *b,
                     struct s3l_store_counts *out);
void s3l__tally_init(struct s3l__tally *t, const void *owner, const char *unit);
void s3l__tally_cleanup(struct s3l__tally *t);
void s3l__tally_set(struct s3l__tally *t);
struct s3l__tally *s3l__tally_current(void);
void s3l__tally_add(struct s3l__tally *t, const void *owner, const char *op, uint64_t n);
void s3l__tally_read(struct s3l__tally *t, struct s3l_store_counts *out);

#endif
