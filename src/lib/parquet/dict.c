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

static inline uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    if (n <= 8) { /* short strings, the common case: one load, one mix */
        uint64_t v = 0;
        memcpy(&v, p, n);
        return mix64(v ^ ((uint64_t)n << 59) ^ 0x9e3779b97f4a7c15ull);
    }
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
    d->hashed = 0;
    d->max_valid = false;
    if (d->slots)
        memset(d->slots, 0, ((size_t)d->slot_mask + 1) * sizeof(*d->slots));
}

void s3l__pq_dict_free(struct pq_dict *d)
{
    s3l_buf_free(&d->values);
    s3l_free(d->offsets);
    s3l_free(d->slots);
    memset(d, 0, sizeof(*d));
}

void s3l__pq_dict_drop_table(struct pq_dict *d)
{
    s3l_free(d->slots);
    d->slots = NULL;
    d->slot_mask = 0;
}

/*
 * Keys (values or hashes) are spread by Fibonacci hashing: one multiply, then the top bits of the
 * product (the low bits of a product only depend on the low bits of the key, which for short
 * strings and round numbers vary little).
 */
static inline uint32_t slot_of(uint64_t key, bool direct, uint32_t mask)
{
    (void)direct;
    int bits = 64 - __builtin_clzll((uint64_t)mask + 1) - 1; /* mask + 1 is a power of two */
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (63 - bits) >> 1) & mask;
}

/* Load at most 1/4 while the table is small (shorter probes), 1/2 past SPARSE_SLOTS. */
#define SPARSE_SLOTS (1u << 14)
static inline bool too_full(const struct pq_dict *d, size_t k)
{
    size_t slots = (size_t)d->slot_mask + 1;
    return (size_t)(d->n + k + 1) * (slots <= SPARSE_SLOTS ? 4 : 2) > slots;
}

static int grow_table(struct pq_dict *d, bool direct)
{
    size_t cap = d->slots ? ((size_t)d->slot_mask + 1) * 2 : INITIAL_SLOTS;
    if (cap > ((size_t)1 << 31))
        return S3L_ETOO_LARGE;
    struct pq_dict_slot *slots = s3l_calloc(cap, sizeof(*slots));
    if (!slots)
        return S3L_ENOMEM;
    uint32_t mask = (uint32_t)(cap - 1);
    for (size_t i = 0; d->slots && i <= d->slot_mask; i++) {
        if (!d->slots[i].idx)
            continue;
        uint32_t s = slot_of(d->slots[i].key, direct, mask);
        while (slots[s].idx)
            s = (s + 1) & mask;
        slots[s] = d->slots[i];
    }
    s3l_free(d->slots);
    d->slots = slots;
    d->slot_mask = mask;
    return 0;
}

static int add_offset(struct pq_dict *d, uint32_t off)
{
    if (d->n + 2 > d->offsets_cap &&
        s3l__array_reserve(&d->offsets, &d->offsets_cap, d->n + 2, sizeof(*d->offsets), 1024))
        return S3L_ENOMEM;
    d->offsets[d->n] = off;
    return 0;
}

static inline bool same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n <= 16) {
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return false;
        return true;
    }
    return memcmp(a, b, n) == 0;
}

/* Appends a new entry (PLAIN bytes p[0..n)) into slot s. */
static int add_entry(struct pq_dict *d, bool var, uint32_t s, uint64_t key, const uint8_t *p,
                     size_t n, uint32_t *index)
{
    /* An entry that would take the dictionary past its limit is not copied at all (a 15 MiB
     * string would otherwise grow the buffer to 16 MiB first): 1 tells the caller to fall back
     * to PLAIN. */
    if (d->values.len + n > d->limit)
        return 1;
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
    d->slots[s].key = key;
    d->slots[s].idx = d->n + 1;
    *index = d->n++;
    if (var)
        d->offsets[d->n] = (uint32_t)d->values.len;
    return 0;
}

/*
 * Looks value (PLAIN bytes p[0..n), for BYTE_ARRAY including the 4-byte length) up, adding it
 * when new. direct: key is the value's bits (fixed width <= 8), else its hash. *index gets its
 * index.
 */
static inline int lookup(struct pq_dict *d, bool var, bool direct, size_t width, const uint8_t *p,
                         size_t n, uint64_t key, uint32_t *index)
{
    if (!d->slots || too_full(d, 1)) {
        int rc = grow_table(d, direct);
        if (rc)
            return rc;
    }
    uint32_t s = slot_of(key, direct, d->slot_mask);
    for (;;) {
        const struct pq_dict_slot *sl = &d->slots[s];
        if (!sl->idx)
            return add_entry(d, var, s, key, p, n, index);
        if (sl->key == key) {
            uint32_t e = sl->idx;
            if (direct) {
                *index = e - 1;
                return 0;
            }
            const uint8_t *q;
            size_t qn;
            if (var) {
                q = d->values.ptr + d->offsets[e - 1];
                qn = d->offsets[e] - d->offsets[e - 1];
            } else {
                q = d->values.ptr + (size_t)(e - 1) * width;
                qn = width;
            }
            if (qn == n && same_bytes(p, q, n)) {
                *index = e - 1;
                return 0;
            }
        }
        s = (s + 1) & d->slot_mask;
    }
}

/*
 * Fixed-width values of at most 8 bytes, keyed by themselves: in blocks of 16, the slots are
 * computed and prefetched first, then probed, so the cache misses of a large table overlap.
 * Inlined per width, so that loading a key is one move (not a variable-size copy).
 */
static inline __attribute__((always_inline)) int
encode_direct_w(struct pq_dict *d, const struct pq_col *c, uint32_t *out, size_t width)
{
    enum { BLOCK = 16 };
    const uint8_t *p = c->values.ptr;
    uint64_t n = c->n_values, last_key = 0;
    uint32_t last_idx = UINT32_MAX;
    for (uint64_t base = 0; base < n; base += BLOCK) {
        size_t k = (size_t)S3L_MIN((uint64_t)BLOCK, n - base);
        while (!d->slots || too_full(d, k)) {
            int rc = grow_table(d, true);
            if (rc)
                return rc;
        }
        uint64_t keys[BLOCK];
        uint32_t at[BLOCK];
        for (size_t j = 0; j < k; j++) {
            uint64_t key = 0;
            memcpy(&key, p + (base + j) * width, width);
            keys[j] = key;
            at[j] = slot_of(key, true, d->slot_mask);
            __builtin_prefetch(&d->slots[at[j]]);
        }
        for (size_t j = 0; j < k; j++) {
            uint64_t key = keys[j];
            if (key == last_key && last_idx != UINT32_MAX) {
                out[base + j] = last_idx; /* a repeat of the previous value */
                continue;
            }
            uint32_t s = at[j];
            for (;;) {
                struct pq_dict_slot *sl = &d->slots[s];
                if (!sl->idx) {
                    int rc =
                        add_entry(d, false, s, key, p + (base + j) * width, width, &out[base + j]);
                    if (rc)
                        return rc; /* 1: full */
                    break;
                }
                if (sl->key == key) {
                    out[base + j] = sl->idx - 1;
                    break;
                }
                s = (s + 1) & d->slot_mask;
            }
            last_key = key;
            last_idx = out[base + j];
        }
    }
    return 0;
}

/* A value of an INT32/INT64 column as a signed integer (its dictionary key is its raw bits). */
static inline int64_t int_at(const uint8_t *p, size_t width)
{
    if (width == 8) {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The page's smallest and largest integer; stops early (a wide span) once they are more than
 * PQ_DENSE_RANGE apart, checked every 1024 values (timestamps: at once). */
static inline void int_range(const uint8_t *p, uint64_t n, size_t width, int64_t *lo, int64_t *hi)
{
    int64_t a = int_at(p, width), b = a;
    for (uint64_t i = 1; i < n;) {
        uint64_t end = S3L_MIN(n, i + 1024);
        for (; i < end; i++) {
            int64_t v = int_at(p + i * width, width);
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
        if ((uint64_t)b - (uint64_t)a >= PQ_DENSE_RANGE)
            break;
    }
    *lo = a, *hi = b;
}

/*
 * An integer page whose values lie within PQ_DENSE_RANGE of each other (delays, distances,
 * codes): an array indexed by value - lo holds index + 1, filled from the entries already in the
 * range; a value seen first goes through the hash table (lookup adds it there, as any page
 * would), so both stay complete and indices are the same first-seen order. No hashing, no probe
 * per value. Returns 1 when the dictionary is full, like lookup.
 */
static inline __attribute__((always_inline)) int
encode_dense_w(struct pq_dict *d, const struct pq_col *c, uint32_t *out, int64_t lo, uint64_t span,
               uint32_t *map, size_t width)
{
    memset(map, 0, (size_t)(span + 1) * sizeof(*map));
    for (uint32_t e = 0; e < d->n; e++) {
        uint64_t off = (uint64_t)int_at(d->values.ptr + (size_t)e * width, width) - (uint64_t)lo;
        if (off <= span)
            map[off] = e + 1;
    }
    const uint8_t *p = c->values.ptr;
    for (uint64_t i = 0; i < c->n_values; i++, p += width) {
        uint64_t off = (uint64_t)int_at(p, width) - (uint64_t)lo;
        uint32_t m = map[off];
        if (m) {
            out[i] = m - 1;
            continue;
        }
        uint64_t key = 0;
        memcpy(&key, p, width);
        int rc = lookup(d, false, true, width, p, width, key, &out[i]);
        if (rc)
            return rc; /* 1: full */
        map[off] = out[i] + 1;
    }
    return 0;
}

/* Puts entries [hashed, n) into the hash table (keys: their bits, as encode_direct_w's). */
static int catch_up(struct pq_dict *d, size_t width)
{
    d->max_valid = false; /* probes may add entries below max_int from now on */
    while (d->hashed < d->n) {
        if (!d->slots || too_full(d, 0)) {
            int rc = grow_table(d, true);
            if (rc)
                return rc;
        }
        uint64_t key = 0;
        memcpy(&key, d->values.ptr + (size_t)d->hashed * width, width);
        uint32_t s = slot_of(key, true, d->slot_mask);
        while (d->slots[s].idx)
            s = (s + 1) & d->slot_mask;
        d->slots[s].key = key;
        d->slots[s].idx = ++d->hashed;
    }
    return 0;
}

/*
 * Sorted integers (timestamps): while each value repeats the largest entry or is above it, it
 * needs no lookup: a repeat takes the last index, a larger value is a new entry appended without
 * the hash table (catch_up adds it later if a probe is ever needed). *done gets how many values
 * of the page were encoded so, from the first; the caller encodes the page again through the
 * table if that is not all (the same indices for those). 1 when the dictionary is full.
 */
static int encode_sorted(struct pq_dict *d, const struct pq_col *c, uint32_t *out, uint64_t *done)
{
    size_t width = c->value_width;
    const uint8_t *p = c->values.ptr;
    uint64_t i = 0;
    for (; i < c->n_values; i++, p += width) {
        int64_t v = int_at(p, width);
        if (d->n && v == d->max_int) {
            out[i] = d->n - 1; /* the largest entry is the last one added */
            continue;
        }
        if (d->n && v < d->max_int)
            break;
        if (d->values.len + width > d->limit)
            return 1;
        int rc = s3l_buf_append(&d->values, p, width);
        if (rc)
            return rc;
        out[i] = d->n++;
        d->max_int = v;
    }
    *done = i;
    return 0;
}

static int encode_direct(struct pq_dict *d, const struct pq_col *c, uint32_t *out,
                         struct s3l_buf *dense)
{
    size_t width = c->value_width;
    bool ints = c->phys == PQ_INT64 || c->phys == PQ_INT32;
    uint64_t done = 0;
    if (ints && (d->n == 0 || d->max_valid)) {
        d->max_valid = true;
        int rc = encode_sorted(d, c, out, &done);
        if (rc || done == c->n_values)
            return rc;
    }
    int rc = catch_up(d, width);
    if (rc)
        return rc;
    /* Pages of at least 1024 values (a short page does not pay for the array). */
    if (ints && c->n_values >= 1024) {
        int64_t lo, hi;
        int_range(c->values.ptr, c->n_values, width, &lo, &hi);
        uint64_t span = (uint64_t)hi - (uint64_t)lo;
        if (span < PQ_DENSE_RANGE) {
            s3l_buf_reset(dense);
            rc = s3l_buf_reserve(dense, (size_t)(span + 1) * sizeof(uint32_t));
            if (rc)
                return rc;
            uint32_t *map = (uint32_t *)(void *)dense->ptr;
            if (width == 8)
                return encode_dense_w(d, c, out, lo, span, map, 8);
            return encode_dense_w(d, c, out, lo, span, map, 4);
        }
    }
    switch (width) {
    case 8:
        return encode_direct_w(d, c, out, 8);
    case 4:
        return encode_direct_w(d, c, out, 4);
    default:
        return encode_direct_w(d, c, out, width);
    }
}

/* The probe key of the BYTE_ARRAY value at p (PLAIN: 4-byte length, bytes), *n its encoded size.
 * The same value must always get the same key: near the end of the buffer the bytes are copied
 * instead of loaded past it. */
static inline uint64_t var_key(const uint8_t *p, const uint8_t *end, size_t *n)
{
    uint32_t len;
    memcpy(&len, p, 4);
    *n = 4 + (size_t)len;
    if (len <= 3) {
        /* A PLAIN value of at most 7 bytes (length + 3) is its own key, flagged by the top bit:
         * equal keys mean equal values, with no hashing and no compare. */
        uint64_t v = 0;
        if (p + 8 <= end)
            v = load64(p) & ((1ull << (8 * *n)) - 1);
        else
            memcpy(&v, p, *n);
        return v | (1ull << 63);
    }
    if (len <= 8) {
        /* One unaligned load, masked to the string (no variable-size copy). */
        uint64_t v = 0;
        if (p + 12 <= end)
            v = load64(p + 4) & (len == 8 ? ~0ull : (1ull << (8 * len)) - 1);
        else
            memcpy(&v, p + 4, len);
        return mix64(v ^ ((uint64_t)len << 59) ^ 0x9e3779b97f4a7c15ull) & ~(1ull << 63);
    }
    return hash_bytes(p + 4, len) & ~(1ull << 63);
}

/* Forgets the entries this page added (the dictionary page keeps the earlier ones): the fall
 * back to PLAIN. Returns 1. */
static int forget_page(struct pq_dict *d, uint32_t n0, size_t len0)
{
    d->n = n0;
    d->hashed = S3L_MIN(d->hashed, n0);
    s3l_buf_truncate(&d->values, len0);
    return 1;
}

int s3l__pq_dict_encode(struct pq_dict *d, const struct pq_col *c, size_t limit,
                        struct s3l_buf *idx, struct s3l_buf *dense)
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
    if (c->n_values == 0)
        return 0;
    d->limit = limit;
    if (!var && width <= 8) {
        rc = encode_direct(d, c, out, dense);
        if (rc < 0)
            return rc;
        if (rc > 0 || d->values.len > limit)
            return forget_page(d, n0, len0);
        idx->len = c->n_values * sizeof(uint32_t);
        return 0;
    }
    /* BYTE_ARRAY, or FIXED_LEN_BYTE_ARRAY wider than 8 bytes: hashed keys. */
    const uint8_t *p = c->values.ptr;
    const uint8_t *end = p + c->values.len;
    for (uint64_t i = 0; i < c->n_values; i++) {
        size_t n = width;
        uint64_t key = var ? var_key(p, end, &n) : hash_bytes(p, n);
        rc = lookup(d, var, var && key >> 63, width, p, n, key, &out[i]);
        if (rc < 0)
            return rc;
        if (rc > 0)
            break; /* full */
        p += n;
        if (d->values.len > limit)
            break;
    }
    if (rc > 0 || d->values.len > limit)
        return forget_page(d, n0, len0);
    idx->len = c->n_values * sizeof(uint32_t);
    return 0;
}
