/*
 * The dictionary of a column chunk (Encodings.md, "Dictionary Encoding (PLAIN_DICTIONARY = 2 and
 * RLE_DICTIONARY = 8)"): distinct values in first-seen order, written PLAIN in the dictionary page,
 * and the page's values replaced by their indices. An open-addressing hash table (linear probing,
 * power-of-two size, load <= 1/2) maps a value to its index without per-value allocation.
 */
#include "parquet/pq.h"

#define INITIAL_SLOTS 1024u

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    return x;
}

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
    while (n >= 8) {
        h = (h ^ load64(p)) * 0x9fb21c651e98df25ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, p, n);
    h = (h ^ tail) * 0x9fb21c651e98df25ull;
    return mix64(h);
}

void s3l__pq_dict_init(struct pq_dict *d)
{
    memset(d, 0, sizeof(*d));
    s3l_buf_init(&d->values, SIZE_MAX / 2);
}

void s3l__pq_dict_reset(struct pq_dict *d)
{
    s3l_buf_reset(&d->values);
    d->n = 0;
    if (d->slots)
        memset(d->slots, 0, ((size_t)d->slot_mask + 1) * sizeof(*d->slots));
}

void s3l__pq_dict_free(struct pq_dict *d)
{
    s3l_buf_free(&d->values);
    s3l_free(d->offsets);
    s3l_free(d->slots);
    s3l_free(d->hashes);
    memset(d, 0, sizeof(*d));
}

static int grow_table(struct pq_dict *d)
{
    size_t cap = d->slots ? ((size_t)d->slot_mask + 1) * 2 : INITIAL_SLOTS;
    if (cap > ((size_t)1 << 31))
        return S3L_ETOO_LARGE;
    uint32_t *slots = s3l_calloc(cap, sizeof(*slots));
    uint64_t *hashes = s3l_malloc(cap * sizeof(*hashes));
    if (!slots || !hashes) {
        s3l_free(slots);
        s3l_free(hashes);
        return S3L_ENOMEM;
    }
    uint32_t mask = (uint32_t)(cap - 1);
    for (size_t i = 0; d->slots && i <= d->slot_mask; i++) {
        if (!d->slots[i])
            continue;
        uint32_t s = (uint32_t)d->hashes[i] & mask;
        while (slots[s])
            s = (s + 1) & mask;
        slots[s] = d->slots[i];
        hashes[s] = d->hashes[i];
    }
    s3l_free(d->slots);
    s3l_free(d->hashes);
    d->slots = slots;
    d->hashes = hashes;
    d->slot_mask = mask;
    return 0;
}

static int add_offset(struct pq_dict *d, uint32_t off)
{
    if (d->n + 2 > d->offsets_cap) {
        size_t cap = d->offsets_cap ? d->offsets_cap * 2 : 1024;
        uint32_t *p = s3l_realloc(d->offsets, cap * sizeof(*p));
        if (!p)
            return S3L_ENOMEM;
        d->offsets = p;
        d->offsets_cap = cap;
    }
    d->offsets[d->n] = off;
    return 0;
}

/*
 * Looks value (PLAIN bytes p[0..n), for BYTE_ARRAY including the 4-byte length) up, adding it
 * when new. *index gets its index.
 */
static inline int lookup(struct pq_dict *d, bool var, size_t width, const uint8_t *p, size_t n,
                         uint64_t h, uint32_t *index)
{
    if (!d->slots || (size_t)(d->n + 1) * 2 > (size_t)d->slot_mask + 1) {
        int rc = grow_table(d);
        if (rc)
            return rc;
    }
    uint32_t s = (uint32_t)h & d->slot_mask;
    for (;;) {
        uint32_t e = d->slots[s];
        if (!e)
            break;
        if (d->hashes[s] == h) {
            const uint8_t *q;
            size_t qn;
            if (var) {
                q = d->values.ptr + d->offsets[e - 1];
                qn = d->offsets[e] - d->offsets[e - 1];
            } else {
                q = d->values.ptr + (size_t)(e - 1) * width;
                qn = width;
            }
            if (qn == n && memcmp(p, q, n) == 0) {
                *index = e - 1;
                return 0;
            }
        }
        s = (s + 1) & d->slot_mask;
    }
    if (var) {
        if (d->values.len + n > UINT32_MAX)
            return S3L_ETOO_LARGE;
        int rc = add_offset(d, (uint32_t)d->values.len);
        if (rc)
            return rc;
    }
    int rc = s3l_buf_append(&d->values, p, n);
    if (rc)
        return rc;
    d->slots[s] = d->n + 1;
    d->hashes[s] = h;
    *index = d->n++;
    if (var)
        d->offsets[d->n] = (uint32_t)d->values.len;
    return 0;
}

int s3l__pq_dict_encode(struct pq_dict *d, const struct pq_col *c, size_t limit,
                        struct s3l_buf *idx)
{
    uint32_t n0 = d->n;
    size_t len0 = d->values.len;
    bool var = c->phys == PQ_BYTE_ARRAY;
    size_t width = c->value_width;
    s3l_buf_reset(idx);
    int rc = s3l_buf_reserve(idx, c->n_values * sizeof(uint32_t));
    if (rc)
        return rc;
    uint32_t *out = (uint32_t *)(void *)idx->ptr;
    if (var && d->n == 0) {
        rc = add_offset(d, 0);
        if (rc)
            return rc;
        d->offsets[0] = 0;
    }
    const uint8_t *p = c->values.ptr;
    for (uint64_t i = 0; i < c->n_values; i++) {
        size_t n;
        uint64_t h;
        if (var) {
            uint32_t len;
            memcpy(&len, p, 4);
            n = 4 + (size_t)len;
            h = hash_bytes(p + 4, len);
        } else {
            n = width;
            h = width == 8 ? mix64(load64(p)) : hash_bytes(p, n);
        }
        rc = lookup(d, var, width, p, n, h, &out[i]);
        if (rc)
            return rc;
        p += n;
        if (d->values.len > limit)
            break;
    }
    if (d->values.len > limit) {
        /* Fall back: forget this page's entries; the dictionary page keeps the earlier ones. */
        d->n = n0;
        s3l_buf_truncate(&d->values, len0);
        return 1;
    }
    idx->len = c->n_values * sizeof(uint32_t);
    return 0;
}
