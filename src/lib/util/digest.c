/*
 * Message digests over libcrypto's EVP interface: the one place outside the SigV4 signer where
 * the library calls OpenSSL to hash. SHA-256 names staged files in checkpoints (commit/lane.c),
 * proves an input unchanged on resume (pipeline/position.c) and makes file:// ETags and long
 * names (store/local.c); MD5 is S3's Content-MD5 (RFC 1864) of a part (s3/client.c). The
 * incremental context (struct s3l__md) is kept across init calls, so a caller hashing one part
 * after another allocates it once.
 */
#include <openssl/evp.h>

#include "util/util.h"

static const char *md_name(enum s3l__md_alg alg)
{
    return alg == S3L__MD_MD5 ? "MD5" : "SHA-256";
}

size_t s3l__md_size(enum s3l__md_alg alg)
{
    return alg == S3L__MD_MD5 ? 16 : 32;
}

int s3l__md_init(struct s3l__md *m, enum s3l__md_alg alg, struct s3l_error *err)
{
    if (!m->ctx && !(m->ctx = EVP_MD_CTX_new()))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting a %s digest",
                             md_name(alg));
    m->alg = alg;
    if (EVP_DigestInit_ex(m->ctx, alg == S3L__MD_MD5 ? EVP_md5() : EVP_sha256(), NULL) != 1)
        return s3l_error_set(err, S3L_EINTERNAL, "libcrypto refused to start a %s digest",
                             md_name(alg));
    return 0;
}

int s3l__md_update(struct s3l__md *m, const void *data, size_t len, struct s3l_error *err)
{
    if (!m->ctx || EVP_DigestUpdate(m->ctx, data, len) != 1)
        return s3l_error_set(err, S3L_EINTERNAL, "libcrypto failed a %s digest's update",
                             md_name(m->alg));
    return 0;
}

int s3l__md_final(struct s3l__md *m, uint8_t *out, struct s3l_error *err)
{
    unsigned int n = 0;
    if (!m->ctx || EVP_DigestFinal_ex(m->ctx, out, &n) != 1 || n != s3l__md_size(m->alg))
        return s3l_error_set(err, S3L_EINTERNAL, "libcrypto failed to finish a %s digest",
                             md_name(m->alg));
    return 0;
}

void s3l__md_free(struct s3l__md *m)
{
    EVP_MD_CTX_free(m->ctx);
    m->ctx = NULL;
}

int s3l__sha256(const void *data, size_t len, uint8_t out[32], struct s3l_error *err)
{
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != 32)
        return s3l_error_set(err, S3L_EINTERNAL, "libcrypto failed a SHA-256 digest of %zu bytes",
                             len);
    return 0;
}

int s3l__sha256_hex(const void *data, size_t len, char out[65])
{
    uint8_t md[32];
    int rc = s3l__sha256(data, len, md, NULL);
    if (rc == 0)
        s3l_hex_encode(md, 32, out);
    return rc;
}
