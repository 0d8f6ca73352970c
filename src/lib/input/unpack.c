/*
 * The decompressing byte source under the reader framework's fill (reader.c): gzip (RFC 1952,
 * zlib's inflate with gzip framing) and zstd (RFC 8878, libzstd's streaming decoder), so that
 * every format reads a .gz or .zst input exactly as the plain bytes it holds. Multi-member gzip
 * (RFC 1952 section 2.2: members one after another, as `cat a.gz b.gz` or an appending writer
 * makes) and zstd files of several frames (section 3.1) are one input: the members' bytes
 * follow each other.
 *
 * The compressed bytes are untrusted: every decoder error becomes a sticky error of the reader
 * naming the input and the compressed byte offset reached; zstd frames are limited to a 16 MiB
 * window (ZSTD_d_windowLogMax 24), so memory stays bounded by the configuration, never by what a
 * frame header asks. A file whose last member or frame is not whole (the compressed bytes end
 * inside it: a file still being written) ends where the decoder got to, and is reported as cut
 * (s3l__unpack_cut): the formats then leave an unterminated last record unread. What a decoder
 * gives for a prefix of its input is a prefix of what it gives for the whole, so an offset into
 * the decompressed bytes stays valid when the member is completed or members are appended.
 */
#include <string.h>
#include <strings.h>

#include <zlib.h>
#include <zstd.h>

#include "input/input.h"
#include "os/os.h"

/* Compressed bytes read from the file at a time. */
#define RAW_BLOCK (128u << 10)

struct s3l__unpack {
    enum s3l_input_compression kind;
    uint8_t *in;       /* RAW_BLOCK bytes read from the file */
    size_t in_len;     /* bytes in `in` */
    size_t in_pos;     /* first byte of `in` not consumed by the decoder */
    uint64_t raw_read; /* compressed bytes read from the file so far */
    bool raw_eof;      /* the file's end was read */
    bool in_member;    /* bytes of a member (frame) were consumed and its end not seen yet */
    bool ended;        /* gzip: a member ended; the next one needs inflateReset */
    bool cut;          /* the file ended inside a member or frame */
    int failed;        /* a decoder error met after bytes it gave: returned at the next call */
    struct s3l_error failure;
    z_stream z;
    bool z_init;
    ZSTD_DStream *zs;
};

int s3l__unpack_new(enum s3l_input_compression kind, struct s3l__unpack **out,
                    struct s3l_error *err)
{
    struct s3l__unpack *u = s3l_calloc(1, sizeof(*u));
    if (!u || !(u->in = s3l_malloc(RAW_BLOCK))) {
        s3l_free(u);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a decompressor");
    }
    u->kind = kind;
    int ok = 1;
    if (kind == S3L_INPUT_GZIP) {
        /* 16 + MAX_WBITS: gzip framing only (zlib's inflateInit2 documentation). */
        ok = inflateInit2(&u->z, 16 + MAX_WBITS) == Z_OK;
        u->z_init = ok;
    } else {
        u->zs = ZSTD_createDStream();
        ok = u->zs && !ZSTD_isError(ZSTD_initDStream(u->zs)) &&
             !ZSTD_isError(ZSTD_DCtx_setParameter(u->zs, ZSTD_d_windowLogMax, 24));
    }
    if (!ok) {
        s3l__unpack_free(u);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a decompressor");
    }
    *out = u;
    return 0;
}

void s3l__unpack_free(struct s3l__unpack *u)
{
    if (!u)
        return;
    if (u->z_init)
        inflateEnd(&u->z);
    ZSTD_freeDStream(u->zs);
    s3l_free(u->in);
    s3l_free(u);
}

enum s3l_input_compression s3l__input_compression_of(const char *name)
{
    static const struct {
        const char *ext;
        enum s3l_input_compression kind;
    } known[] = {{".gz", S3L_INPUT_GZIP}, {".zst", S3L_INPUT_ZSTD}, {".zstd", S3L_INPUT_ZSTD}};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++) {
        size_t k = strlen(known[i].ext);
        if (n > k && strcasecmp(name + n - k, known[i].ext) == 0)
            return known[i].kind;
    }
    return S3L_INPUT_PLAIN;
}

uint64_t s3l__unpack_raw_offset(const struct s3l__unpack *u)
{
    return u->raw_read - (u->in_len - u->in_pos);
}

bool s3l__unpack_cut(const struct s3l__unpack *u)
{
    return u->cut;
}

static const char *kind_name(const struct s3l__unpack *u)
{
    return u->kind == S3L_INPUT_GZIP ? "gzip" : "zstd";
}

static int corrupt(struct s3l__unpack *u, const char *name, const char *why, struct s3l_error *err)
{
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s: the %s data is corrupt at compressed byte offset %llu (%s); "
                         "nothing after it can be read",
                         name, kind_name(u), (unsigned long long)s3l__unpack_raw_offset(u), why);
}

/* One decoder step from in[in_pos..) into dst[0..want): *got bytes out. 0 or an error. */
static int step(struct s3l__unpack *u, uint8_t *dst, size_t want, size_t *got, const char *name,
                struct s3l_error *err)
{
    size_t avail = u->in_len - u->in_pos;
    *got = 0;
    if (u->kind == S3L_INPUT_GZIP) {
        if (!u->in_member) {
            if (avail == 0)
                return 0; /* between members, nothing to start one with */
            if (u->ended && inflateReset(&u->z) != Z_OK)
                return corrupt(u, name, "inflateReset failed", err);
            u->in_member = true;
            u->ended = false;
        }
        u->z.next_in = u->in + u->in_pos;
        u->z.avail_in = (uInt)avail;
        u->z.next_out = dst;
        u->z.avail_out = (uInt)want;
        int rc = inflate(&u->z, Z_NO_FLUSH);
        u->in_pos = u->in_len - u->z.avail_in;
        *got = want - u->z.avail_out;
        if (rc == Z_STREAM_END) {
            u->in_member = false;
            u->ended = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            return corrupt(u, name, u->z.msg ? u->z.msg : "inflate failed", err);
        }
        return 0;
    }
    ZSTD_inBuffer in = {u->in + u->in_pos, avail, 0};
    ZSTD_outBuffer out = {dst, want, 0};
    if (avail == 0 && !u->in_member)
        return 0;
    size_t rc = ZSTD_decompressStream(u->zs, &out, &in);
    u->in_pos += in.pos;
    *got = out.pos;
    if (ZSTD_isError(rc))
        return corrupt(u, name, ZSTD_getErrorName(rc), err);
    /* 0: a frame is decoded and flushed whole (zstd.h, ZSTD_decompressStream). */
    u->in_member = rc != 0;
    return 0;
}

int s3l__unpack_read(struct s3l__unpack *u, s3l__raw_read_fn raw, struct s3l_reader *r,
                     const char *name, void *dst, size_t want, size_t *got,
                     struct s3l_error *err)
{
    *got = 0;
    if (u->failed) {
        if (err && !err->code)
            *err = u->failure;
        return u->failed;
    }
    for (;;) {
        if (u->in_pos == u->in_len && !u->raw_eof) {
            size_t n = 0;
            int rc = raw(r, u->in, RAW_BLOCK, &n, err);
            if (rc)
                return rc;
            u->in_pos = 0;
            u->in_len = n;
            u->raw_read += n;
            u->raw_eof = n == 0;
        }
        size_t before = u->in_pos, n = 0;
        struct s3l_error e = {0};
        int rc = step(u, dst, want, &n, name, &e);
        if (rc && n > 0) {
            /* The bytes decoded before the fault are the input's as well (the same whatever
             * the output's size): they come first, the error at the next call. */
            u->failed = rc;
            u->failure = e;
        } else if (rc) {
            if (err && !err->code)
                *err = e;
            return rc;
        }
        if (n > 0) {
            *got = n;
            return 1;
        }
        if (u->in_pos == before && u->in_pos == u->in_len && u->raw_eof) {
            u->cut = u->in_member; /* the file ends inside a member or frame */
            return 0;
        }
    }
}
