// OpenSSL's libcrypto (Debian libssl-dev, OpenSSL 3): AES for the twin's legacy pairing functions,
// P-256 ECDH and AES-CMAC for its LE Secure Connections pairing, SHA-256 of capture files for
// `check --jsonl`. The small inline functions below only call libcrypto: they hide OpenSSL 3's
// variadic and OSSL_PARAM interfaces, which Swift cannot call directly. No cryptography is written here.
#include <openssl/evp.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <string.h>

/// A new P-256 key pair (EVP_PKEY_keygen, group "P-256"); NULL on failure. Free with EVP_PKEY_free.
static inline EVP_PKEY *ccrypto_p256_generate(void) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) return NULL;
    char group[] = "P-256";
    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0), OSSL_PARAM_construct_end() };
    if (EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_CTX_set_params(ctx, params) != 1 || EVP_PKEY_keygen(ctx, &key) != 1) key = NULL;
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/// A P-256 key from its public point (65 bytes: 0x04 || X || Y, big-endian) and, when `priv` is not
/// NULL, its private scalar (32 bytes, big-endian). libcrypto rejects a point not on the curve.
static inline EVP_PKEY *ccrypto_p256_from(const unsigned char pub[65], const unsigned char *priv) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) return NULL;
    char group[] = "P-256";
    unsigned char point[65], scalar[32];
    memcpy(point, pub, 65);
    BIGNUM *d = priv ? BN_bin2bn(priv, 32, NULL) : NULL;
    // OSSL_PARAM integers are native-endian: BN_bn2nativepad writes the scalar that way.
    if (d != NULL && BN_bn2nativepad(d, scalar, 32) != 32) { BN_free(d); EVP_PKEY_CTX_free(ctx); return NULL; }
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, 65),
        d ? OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, scalar, 32) : OSSL_PARAM_construct_end(),
        OSSL_PARAM_construct_end(),
    };
    if (EVP_PKEY_fromdata_init(ctx) != 1 || EVP_PKEY_fromdata(ctx, &key, d ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    EVP_PKEY_CTX_free(ctx);
    BN_clear_free(d);
    if (key == NULL) return NULL;
    // The point must be on the curve (Core v5.4 Vol 3 Part H 2.3.5.6.1: a public key is validated).
    EVP_PKEY_CTX *check = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    int valid = check != NULL && EVP_PKEY_public_check(check) == 1;
    EVP_PKEY_CTX_free(check);
    if (!valid) { EVP_PKEY_free(key); return NULL; }
    return key;
}

/// The public point of `key` as 0x04 || X || Y (65 bytes, big-endian); 1 on success.
static inline int ccrypto_p256_public(EVP_PKEY *key, unsigned char out[65]) {
    size_t length = 0;
    return EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, out, 65, &length) == 1 && length == 65 && out[0] == 0x04;
}

/// ECDH (EVP_PKEY_derive): the X coordinate of own private key times the peer's point, 32 bytes
/// big-endian; 1 on success.
static inline int ccrypto_ecdh(EVP_PKEY *own, EVP_PKEY *peer, unsigned char out[32]) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, own, NULL);
    size_t length = 32;
    int ok = ctx != NULL && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, peer) == 1
        && EVP_PKEY_derive(ctx, out, &length) == 1 && length == 32;
    EVP_PKEY_CTX_free(ctx);
    return ok;
}

/// AES-CMAC (RFC 4493) of `message` with a 16-byte key: EVP_MAC "CMAC" with cipher AES-128-CBC; 1 on success.
static inline int ccrypto_aes_cmac(const unsigned char key[16], const unsigned char *message, size_t length, unsigned char out[16]) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    char cipher[] = "AES-128-CBC";
    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0), OSSL_PARAM_construct_end() };
    size_t written = 0;
    int ok = ctx != NULL && EVP_MAC_init(ctx, key, 16, params) == 1 && EVP_MAC_update(ctx, message, length) == 1
        && EVP_MAC_final(ctx, out, &written, 16) == 1 && written == 16;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    return ok;
}
