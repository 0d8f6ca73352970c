/*
 * UTF-8 validation (util.h), the one copy every module uses: RFC 3629 section 4's table of
 * well-formed byte sequences, through s3l_utf8_seq.
 */
#include "util/util.h"

bool s3l__utf8_valid(const uint8_t *p, size_t n, size_t *bad)
{
    const uint8_t *s = p, *end = p + n;
    while (s < end) {
        if (end - s >= 8) {
            uint64_t w;
            memcpy(&w, s, 8);
            if ((w & 0x8080808080808080ULL) == 0) {
                s += 8;
                continue;
            }
        }
        size_t k = s3l_utf8_seq(s, end);
        if (k == 0) {
            if (bad)
                *bad = (size_t)(s - p);
            return false;
        }
        s += k;
    }
    return true;
}
