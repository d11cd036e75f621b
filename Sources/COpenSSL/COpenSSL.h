// libcrypto (OpenSSL 3, Debian 12's libssl-dev), only what ECVKit needs: for the DTLS certificate,
// EC key generation, a self-signed X.509 certificate, PEM and DER encoding; for the STUN
// connectivity checks ECVKit sends itself (`ConnectivityNudge`), HMAC-SHA1.
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
