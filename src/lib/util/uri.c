/*
 * URI encoding as SigV4 and S3 define it ("URI-encode each byte": RFC 3986 unreserved characters
 * are kept, everything else becomes %XY with uppercase hex). Object keys keep their '/' so that
 * the path on the wire and the canonical URI are one and the same string: S3 signs the path as
 * sent and does not encode it twice (SigV4 "Create a canonical request", CanonicalURI).
 */
#include "util/util.h"

static bool unreserved(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

int s3l__uri_encode(struct s3l_buf *out, const char *in, size_t len, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = s3l_buf_reserve(out, len);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        uint8_t c = (uint8_t)in[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            rc = s3l_buf_append_byte(out, c);
        } else {
            char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc = s3l_buf_append(out, esc, 3);
        }
    }
    return rc;
}
