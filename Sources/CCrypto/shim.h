// OpenSSL's libcrypto (Linux): SHA-256 of capture files for `check --jsonl`. Only the EVP digest API.
#include <openssl/evp.h>
