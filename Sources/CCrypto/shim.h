// OpenSSL's libcrypto (Debian libssl-dev): AES for the twin's legacy pairing functions, SHA-256 of
// capture files for `check --jsonl`. Only the EVP API.
#include <openssl/evp.h>
