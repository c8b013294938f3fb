// OpenSSL's libcrypto (Debian libssl-dev): AES for the twin's legacy pairing functions.
#include <openssl/evp.h>
