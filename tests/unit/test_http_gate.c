/* test_http_gate.c - the front door of the HTTP servers (common/http_gate.c)
 * on a loopback port, with real sockets and a short deadline: a connection
 * is handed over only once its header block is in (however it comes:
 * whole, in pieces, after the deadline of another), one that dribbles is
 * answered 408 at the deadline and never handed over, a new connection
 * takes the place of the oldest waiting when the room is full (503), a
 * header block over the cap is 431, and a client that leaves is dropped;
 * and the end-of-headers scan itself. */
#include "test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/http_gate.h"

TEST(head_end)
{
    static const struct {
        const char *text;
        size_t end;
    } rows[] = {
        {"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27},
        {"GET / HTTP/1.1\r\nHost: x\r\n\r\nbody", 27},
        {"GET / HTTP/1.1\nHost: x\n\n", 24},
        {"GET / HTTP/1.1\r\n\r\n", 18},
        {"\r\n\r\nGET / HTTP/1.1\r\n\r\n", 22}, /* empty lines before the request line */
        {"GET / HTTP/1.1\r\nHost: x\r\n", 0},
        {"GET / HTTP/1.1\r\nHost: x\r\n\r", 0},
        {"\r\n\r\n\r\n", 0},
        {"POST /m", 0},
        {"", 0},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ASSERT_MSG(http_head_end(rows[i].text, strlen(rows[i].text)) == rows[i].end, rows[i].text);
}

/* What the gate handed over: the first bytes of each, read by the test;
 * each answered 204 and closed (the gate told), or with hold kept open, as
 * a server busy with it would (held[], closed by the test). */
struct taken {
    pthread_mutex_t mu;
    int n;
    char first[8][64];
    struct http_gate **g;
    int hold, nheld, held[8];
};

static int take(void *ud, int fd, const struct sockaddr *sa, socklen_t salen)
{
    struct taken *t = ud;
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t k = 0;

    (void)sa;
    (void)salen;
    pthread_mutex_lock(&t->mu);
    if (t->n < 8 && poll(&p, 1, 1000) == 1 &&
        (k = recv(fd, t->first[t->n], sizeof(t->first[0]) - 1, 0)) > 0)
        t->first[t->n][k] = '\0';
    t->n++;
    if (t->hold && t->nheld < 8) {
        t->held[t->nheld++] = fd;
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    pthread_mutex_unlock(&t->mu);
    (void)!send(fd, "HTTP/1.1 204 No Content\r\n\r\n", 27, MSG_NOSIGNAL);
    close(fd);
    http_gate_closed(*t->g);
    return 0;
}

static int dial(unsigned port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The status code of the answer on fd within ms (0: none, -1: closed
 * without one). */
static int answer(int fd, int ms)
{
    char b[256];
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t k;

    if (poll(&p, 1, ms) != 1)
        return 0;
    k = recv(fd, b, sizeof(b) - 1, 0);
    if (k < 13)
        return -1;
    b[k] = '\0';
    return atoi(b + 9);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int taken_n(struct taken *t)
{
    int n;

    pthread_mutex_lock(&t->mu);
    n = t->n;
    pthread_mutex_unlock(&t->mu);
    return n;
}

TEST(door)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    struct http_gate *g = NULL;
    struct taken t = {PTHREAD_MUTEX_INITIALIZER, 0, {{0}}, &g, 0, 0, {0}};
    const struct http_gate_opts o = {"test gate", 4, 400, 8, take, &t};
    struct llmsb_err err = {0};
    char big[HTTP_GATE_HEAD_MAX + 100];
    int slow, a, b, fds[5];
    unsigned port;

    ASSERT(getaddrinfo("127.0.0.1", "0", &hints, &ai) == 0);
    ASSERT_EQ(http_gate_start(ai, &o, &g, &err), 0);
    freeaddrinfo(ai);
    port = http_gate_port(g);
    ASSERT(port > 0);

    /* a dribbler: never handed over, 408 at the deadline; meanwhile a
     * request in two pieces is handed over whole */
    slow = dial(port);
    ASSERT(slow >= 0 && send(slow, "POST /m", 7, 0) == 7);
    a = dial(port);
    ASSERT(a >= 0 && send(a, "GET /x HTTP/1.1\r\nHo", 19, 0) == 19);
    sleep_ms(100);
    ASSERT_EQ(taken_n(&t), 0);
    ASSERT(send(a, "st: y\r\n\r\n", 9, 0) == 9);
    ASSERT_EQ(answer(a, 2000), 204);
    ASSERT_STR(t.first[0], "GET /x HTTP/1.1\r\nHost: y\r\n\r\n");
    ASSERT(send(slow, "s", 1, MSG_NOSIGNAL) == 1);
    ASSERT_EQ(answer(slow, 2000), 408);
    ASSERT_EQ(taken_n(&t), 1);
    close(a);
    close(slow);

    /* a full room: the oldest waiting gives way (503), the newest is in */
    for (int i = 0; i < 5; i++) {
        ASSERT((fds[i] = dial(port)) >= 0);
        sleep_ms(20);
    }
    ASSERT_EQ(answer(fds[0], 2000), 503);
    ASSERT(send(fds[4], "GET / HTTP/1.0\r\n\r\n", 18, 0) == 18);
    ASSERT_EQ(answer(fds[4], 2000), 204);
    for (int i = 0; i < 5; i++)
        close(fds[i]);

    /* headers over the cap: 431; a client that leaves is dropped unanswered */
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    b = dial(port);
    ASSERT(b >= 0 && send(b, big, sizeof(big), MSG_NOSIGNAL) == (ssize_t)sizeof(big));
    ASSERT_EQ(answer(b, 2000), 431);
    close(b);
    b = dial(port);
    ASSERT(b >= 0 && send(b, "GET", 3, 0) == 3);
    shutdown(b, SHUT_WR);
    ASSERT_EQ(answer(b, 2000), -1);
    close(b);
    ASSERT_EQ(taken_n(&t), 2);
    http_gate_stop(g);
}

/* The server holding as many as the gate hands it (admitted_max): one
 * more is answered 503 by the gate, never handed over (libmicrohttpd
 * deadlocked on one past its own cap); one closed, the next is taken. */
TEST(server_full_is_503)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    struct http_gate *g = NULL;
    struct taken t = {PTHREAD_MUTEX_INITIALIZER, 0, {{0}}, &g, 1, 0, {0}};
    const struct http_gate_opts o = {"test gate", 4, 2000, 2, take, &t};
    struct llmsb_err err = {0};
    int c[4];
    unsigned port;

    ASSERT(getaddrinfo("127.0.0.1", "0", &hints, &ai) == 0);
    ASSERT_EQ(http_gate_start(ai, &o, &g, &err), 0);
    freeaddrinfo(ai);
    port = http_gate_port(g);
    for (int i = 0; i < 3; i++) {
        ASSERT((c[i] = dial(port)) >= 0);
        ASSERT(send(c[i], "GET / HTTP/1.0\r\n\r\n", 18, 0) == 18);
        sleep_ms(100);
    }
    ASSERT_EQ(answer(c[2], 2000), 503);
    ASSERT_EQ(taken_n(&t), 2);
    /* the server closes one of its two: the gate takes the next */
    pthread_mutex_lock(&t.mu);
    close(t.held[0]);
    t.hold = 0;
    pthread_mutex_unlock(&t.mu);
    http_gate_closed(g);
    ASSERT((c[3] = dial(port)) >= 0);
    ASSERT(send(c[3], "GET / HTTP/1.0\r\n\r\n", 18, 0) == 18);
    ASSERT_EQ(answer(c[3], 2000), 204);
    ASSERT_EQ(taken_n(&t), 3);
    for (int i = 0; i < 4; i++)
        close(c[i]);
    close(t.held[1]);
    http_gate_stop(g);
}

TEST_MAIN("http_gate", T(head_end), T(door), T(server_full_is_503))
