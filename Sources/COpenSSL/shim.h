#ifndef CCRELAY_COPENSSL_SHIM_H
#define CCRELAY_COPENSSL_SHIM_H
/* libcrypto, for facts about the student's certificate (expiry, subject),
   for opening PKCS#12 bundles, and HMAC-SHA256 for signed bot messages. */
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/pkcs12.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <time.h>

/* ASN1_TIME_diff against now, in whole days and seconds; 1 on success. */
static inline int copenssl_seconds_until(const ASN1_TIME *when, long long *seconds) {
    int days = 0, secs = 0;
    if (!ASN1_TIME_diff(&days, &secs, NULL, when)) return 0;
    *seconds = (long long)days * 86400 + secs;
    return 1;
}
/* XN_FLAG_RFC2253 is a composite macro, which Swift does not import. */
static const unsigned long copenssl_xn_flag_rfc2253 = XN_FLAG_RFC2253;
#endif
