/* bench/floor.c: the floor of the libraries, for bench/idle. The job of an
 * idle ccrelay daemon done in C with the same libraries, on one epoll thread:
 * libcurl's multi interface driven by its socket and timer callbacks (one
 * reused easy handle, mutual TLS), the session bus and, when there is one,
 * the system bus (each claimed, its descriptor on the loop), SQLite (WAL)
 * written when the session changes, a timerfd on CLOCK_BOOTTIME. It logs in,
 * then keeps the session alive every granted interval. No error recovery:
 * it measures, it is not shipped.
 *   floor URL CA CERT KEY STATE_DIR */
#include <curl/curl.h>
#include <dbus/dbus.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int epoll_fd, timer_fd;
static CURLM *multi;
static CURL *easy;
static long curl_timeout = -1;
static char reply[65536];
static size_t reply_length;
static char token[600], url[1024];
static long interval = 60;
static unsigned long seq;
static struct curl_slist *headers;
static DBusConnection *buses[2];
static int bus_fds[2] = {-1, -1};
static sqlite3 *db;

static void fail(const char *what) {
    fprintf(stderr, "floor: %s\n", what);
    exit(1);
}

static size_t take(char *data, size_t size, size_t count, void *unused) {
    size_t length = size * count;
    if (reply_length + length >= sizeof reply) return 0;
    memcpy(reply + reply_length, data, length);
    reply_length += length;
    reply[reply_length] = 0;
    return length;
}

static int socket_changed(CURL *handle, curl_socket_t s, int what, void *unused, void *known) {
    struct epoll_event event = {0};
    event.data.fd = s;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s, NULL);
        curl_multi_assign(multi, s, NULL);
        return 0;
    }
    event.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (known) {
        epoll_ctl(epoll_fd, EPOLL_CTL_MOD, s, &event);
    } else {
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, s, &event);
        curl_multi_assign(multi, s, (void *)1);
    }
    return 0;
}

static int timeout_changed(CURLM *unused, long milliseconds, void *unused2) {
    curl_timeout = milliseconds;
    return 0;
}

static void post(const char *path, const char *body) {
    char address[1200];
    snprintf(address, sizeof address, "%s%s", url, path);
    reply_length = 0;
    curl_easy_setopt(easy, CURLOPT_URL, address);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, body);
    curl_multi_add_handle(multi, easy);
}

static void arm(long seconds) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = now.tv_sec + seconds;
    spec.it_value.tv_nsec = now.tv_nsec;
    timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

static void keep_alive(void) {
    char body[64];
    snprintf(body, sizeof body, "{\"seq\":%lu}", ++seq);
    post("cc/v1/session/keepalive", body);
}

static void logged_in(void) {
    const char *field = strstr(reply, "\"session\":\"");
    if (!field) fail("no session in the login reply");
    field += strlen("\"session\":\"");
    size_t length = strcspn(field, "\"");
    if (length >= sizeof token - 32) fail("session too long");
    memcpy(token, field, length);
    token[length] = 0;
    const char *granted = strstr(reply, "\"interval\":");
    if (granted) interval = strtol(granted + strlen("\"interval\":"), NULL, 10);
    if (interval < 1) interval = 1;
    char authorization[700];
    snprintf(authorization, sizeof authorization, "Authorization: CC-Session %s", token);
    headers = curl_slist_append(headers, authorization);
    sqlite3_stmt *statement;
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO session (id, token, interval) VALUES (1, ?, ?)", -1, &statement, NULL);
    sqlite3_bind_text(statement, 1, token, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 2, interval);
    sqlite3_step(statement);
    sqlite3_finalize(statement);
}

static void finished(void) {
    CURLMsg *message;
    int left;
    while ((message = curl_multi_info_read(multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        long status = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(multi, easy);
        if (!token[0]) {
            if (status != 200 && status != 201) fail("login refused");
            logged_in();
        } else if (status != 200) {
            fail("keep-alive refused");
        }
        arm(interval);
    }
}

static void join(DBusBusType type, int index, const char *name) {
    DBusError error;
    dbus_error_init(&error);
    buses[index] = dbus_bus_get_private(type, &error);
    if (!buses[index]) {
        dbus_error_free(&error);
        return;
    }
    dbus_bus_request_name(buses[index], name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    dbus_error_free(&error);
    dbus_connection_get_unix_fd(buses[index], &bus_fds[index]);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = bus_fds[index]};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, bus_fds[index], &event);
}

int main(int argc, char **argv) {
    if (argc != 6) fail("usage: floor URL CA CERT KEY STATE_DIR");
    snprintf(url, sizeof url, "%s", argv[1]);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    timer_fd = timerfd_create(CLOCK_BOOTTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = timer_fd};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, timer_fd, &event);

    char path[1200];
    snprintf(path, sizeof path, "%s/floor.db", argv[5]);
    if (sqlite3_open(path, &db) != SQLITE_OK) fail("cannot open the database");
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY, token TEXT, interval INTEGER)",
                 NULL, NULL, NULL);

    join(DBUS_BUS_SESSION, 0, "io.github.ccrelay.Floor");
    join(DBUS_BUS_SYSTEM, 1, "io.github.ccrelay.Floor");

    curl_global_init(CURL_GLOBAL_DEFAULT);
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket_changed);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, timeout_changed);
    easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_CAINFO, argv[2]);
    curl_easy_setopt(easy, CURLOPT_SSLCERT, argv[3]);
    curl_easy_setopt(easy, CURLOPT_SSLKEY, argv[4]);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(easy, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 15000L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "ccrelay-floor/1");
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json");
    headers = curl_slist_append(headers, "Expect:");
    post("cc/v1/session", "{\"client\":{\"name\":\"floor\",\"version\":\"1\",\"platform\":\"linux\"},\"device\":\"floor\"}");

    struct epoll_event ready[16];
    for (;;) {
        int count = epoll_wait(epoll_fd, ready, 16, (int)curl_timeout);
        int running;
        if (count == 0 && curl_timeout >= 0) {
            curl_timeout = -1;
            curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        for (int i = 0; i < count; i++) {
            int fd = ready[i].data.fd;
            if (fd == timer_fd) {
                unsigned long long expirations;
                if (read(timer_fd, &expirations, sizeof expirations) > 0) keep_alive();
            } else if (fd == bus_fds[0] || fd == bus_fds[1]) {
                DBusConnection *bus = buses[fd == bus_fds[0] ? 0 : 1];
                dbus_connection_read_write(bus, 0);
                while (dbus_connection_dispatch(bus) == DBUS_DISPATCH_DATA_REMAINS) {}
            } else {
                int flags = (ready[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (ready[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0)
                    | (ready[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
                curl_multi_socket_action(multi, fd, flags, &running);
            }
        }
        finished();
    }
}
