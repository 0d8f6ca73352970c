/*
 * Decimal text of an unscaled integer: the form both the Parquet footer dump (statistics of a
 * DECIMAL column, stored big-endian) and the Debezium reader (Connect's Decimal, base64 of the
 * same big-endian bytes) print. Parquet's LogicalTypes.md defines the value as the unscaled
 * two's complement integer times 10^-scale.
 */
#include <stdbool.h>

#include "util.h"

int s3l__decimal_be_text(const uint8_t *v, size_t n, int scale, char *buf)
{
    if (n == 0 || n > 16 || scale < 0 || scale > 76)
        return -1;
    unsigned __int128 u = (v[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++)
        u = u << 8 | v[i];
    bool neg = (__int128)u < 0;
    if (neg)
        u = ~u + 1;
    char digits[78]; /* 39 digits at most, or scale + 1 with the leading zeros */
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (nd <= scale)
        digits[nd++] = '0';
    int o = 0;
    if (neg)
        buf[o++] = '-';
    for (int k = nd - 1; k >= 0; k--) {
        buf[o++] = digits[k];
        if (k == scale && scale > 0)
            buf[o++] = '.';
    }
    buf[o] = 0;
    return o;
}
