// libcrypto (OpenSSL 3, Debian 12's libssl-dev): only what the DTLS certificate needs —
// EC key generation, a self-signed X.509 certificate, PEM and DER encoding.
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/err.h>
