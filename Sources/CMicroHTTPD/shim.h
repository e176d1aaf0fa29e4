#ifndef CCRELAY_CMICROHTTPD_SHIM_H
#define CCRELAY_CMICROHTTPD_SHIM_H
/* libmicrohttpd (with GnuTLS) for the ccsim simulator. MHD's start and info
   functions are variadic, which Swift cannot call: typed wrappers here. */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

/* Starts a daemon on addr. TLS when key and cert are given; with trust (a CA
   PEM) the TLS handshake asks for a client certificate. */
static inline struct MHD_Daemon *cmhd_start(unsigned int flags, const struct sockaddr *addr,
                                            MHD_AccessHandlerCallback handler, void *handler_context,
                                            MHD_RequestCompletedCallback completed, void *completed_context,
                                            MHD_NotifyConnectionCallback notify, void *notify_context,
                                            void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *con),
                                            void *uri_log_context,
                                            const char *key, const char *cert, const char *trust) {
    struct MHD_OptionItem options[9];
    int n = 0;
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)addr};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_context};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, notify_context};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 120, NULL};
    /* The request target exactly as sent (query and absolute form included). */
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_log, uri_log_context};
    if (key && cert) {
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key};
        options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert};
        if (trust) options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)trust};
    }
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(flags | ((key && cert) ? MHD_USE_TLS : 0), 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* The peer's IPv4/IPv6 address as text, or "" when unknown. */
static inline void cmhd_peer_address(struct MHD_Connection *connection, char *buffer, socklen_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    else if (address->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
}

/* Client-certificate check of a TLS connection: returns 0 when the peer
   presented a certificate that verifies against the trusted CA, 1 when it
   presented none, 2 when verification failed (status holds GnuTLS's flags),
   3 on a plain connection. cn receives the certificate's common name. */
static inline int cmhd_verify_client(struct MHD_Connection *connection, unsigned int *status, char *cn, size_t cn_size) {
    cn[0] = 0;
    *status = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!info || !info->tls_session) return 3;
    gnutls_session_t session = (gnutls_session_t)info->tls_session;
    unsigned int count = 0;
    const gnutls_datum_t *chain = gnutls_certificate_get_peers(session, &count);
    if (!chain || count == 0) return 1;
    gnutls_x509_crt_t certificate;
    if (gnutls_x509_crt_init(&certificate) == 0) {
        if (gnutls_x509_crt_import(certificate, &chain[0], GNUTLS_X509_FMT_DER) == 0) {
            size_t size = cn_size;
            if (gnutls_x509_crt_get_dn_by_oid(certificate, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &size) != 0) cn[0] = 0;
        }
        gnutls_x509_crt_deinit(certificate);
    }
    if (gnutls_certificate_verify_peers2(session, status) != 0) return 2;
    return *status == 0 ? 0 : 2;
}

static inline unsigned int cmhd_status_expired(void) { return GNUTLS_CERT_EXPIRED; }
#endif
