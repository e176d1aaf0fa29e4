#ifndef CCRELAY_CCURL_SHIM_H
#define CCRELAY_CCURL_SHIM_H
/* CURLOPT_PROTOCOLS is deprecated from libcurl 7.85 on, but it is the only
   way to say the same to 7.81 (Ubuntu 22.04): the attribute is left out. */
#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>
#include <string.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
   call; one typed wrapper per argument kind. */
static inline CURLcode ccurl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_write_function(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode ccurl_setopt_header_function(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f);
}
static inline CURLcode ccurl_setopt_opensocket_function(CURL *h, curl_opensocket_callback f) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f);
}
static inline CURLcode ccurl_setopt_read_function(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_READFUNCTION, f);
}
/* Allows only `scheme` ("https", "http", "smtps" or "smtp"): CURLOPT_PROTOCOLS_STR
   where libcurl has it (7.85 and later), the older bitmask otherwise. */
static inline CURLcode ccurl_setopt_only_protocol(CURL *h, const char *scheme) {
    CURLcode result = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, scheme);
    if (result != CURLE_UNKNOWN_OPTION) return result;
    long mask = strcmp(scheme, "http") == 0 ? CURLPROTO_HTTP
        : strcmp(scheme, "smtp") == 0 ? CURLPROTO_SMTP
        : strcmp(scheme, "smtps") == 0 ? CURLPROTO_SMTPS : CURLPROTO_HTTPS;
    return curl_easy_setopt(h, CURLOPT_PROTOCOLS, mask);
}
static inline CURLcode ccurl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
/* CURLVERSION_NOW is a macro naming the newest struct layout. */
static inline curl_version_info_data *ccurl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
static inline CURLcode ccurl_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }

/* The multi interface: curl_multi_setopt is variadic too. */
static inline CURLMcode ccurl_multi_setopt_socket_function(CURLM *m, curl_socket_callback f) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f);
}
static inline CURLMcode ccurl_multi_setopt_timer_function(CURLM *m, curl_multi_timer_callback f) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f);
}
static inline CURLMcode ccurl_multi_setopt_pointer(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode ccurl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
/* CURL_SOCKET_TIMEOUT is a macro. */
static inline curl_socket_t ccurl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }

#endif
