/* test_docker_tls.c - the Docker backend's TLS set-up (backends/docker/
 * tls.c): which variables turn TLS on and where the certificates are
 * looked for, as the docker CLI decides; the address the HTTP client gets;
 * and the errors for a missing, partial or broken certificate directory.
 * The handshake itself is tested against a real dockerd (tests/tls). */
#include "test.h"

#include "backends/docker/internal.h"
#include "config/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static struct docker_tls decide(const char *verify_cfg, const char *path_cfg, const char *verify,
                                const char *tls, const char *cert_path, const char *docker_config)
{
    struct docker_tls_env e = {verify_cfg, path_cfg,      verify,   tls,
                               cert_path,  docker_config, "/home/u"};
    struct docker_tls t;
    docker_tls_decide(&e, &t);
    return t;
}

TEST(decides_as_the_docker_cli)
{
    struct docker_tls t;

    t = decide("", "", NULL, NULL, NULL, NULL); /* nothing set: plain */
    ASSERT_EQ(t.on, 0);
    ASSERT_STR(t.dir, "/home/u/.docker");
    t = decide("", "", NULL, NULL, "/c", NULL); /* DOCKER_CERT_PATH alone turns nothing on */
    ASSERT_EQ(t.on, 0);
    ASSERT_STR(t.dir, "/c");
    t = decide("", "", "1", NULL, "/c", NULL);
    ASSERT(t.on && t.verify);
    ASSERT_STR(t.dir_from, "DOCKER_CERT_PATH=/c");
    ASSERT_STR(t.why, "DOCKER_TLS_VERIFY=1");
    t = decide("", "", "0", NULL, NULL, NULL); /* any non-empty value verifies, "0" too */
    ASSERT(t.on && t.verify);
    t = decide("", "", "", NULL, NULL, NULL); /* empty is unset */
    ASSERT_EQ(t.on, 0);
    t = decide("", "", NULL, "1", NULL, NULL); /* DOCKER_TLS: TLS, the daemon unchecked */
    ASSERT(t.on && !t.verify);
    t = decide("", "", NULL, NULL, NULL, "/cfg"); /* ~/.docker is $DOCKER_CONFIG when set */
    ASSERT_STR(t.dir, "/cfg");
    ASSERT_CONTAINS(t.dir_from, "DOCKER_CONFIG=/cfg");
    /* the config keys win over the environment */
    t = decide("false", "/k", "1", NULL, "/c", NULL);
    ASSERT(t.on && !t.verify);
    ASSERT_STR(t.dir, "/k");
    ASSERT_STR(t.dir_from, "backend.cert_path=/k");
    t = decide("true", "", NULL, NULL, NULL, NULL);
    ASSERT(t.on && t.verify);
    ASSERT_STR(t.dir, "/home/u/.docker");
}

TEST(url_gets_scheme_and_default_port)
{
    struct llmsb_err err = {0};
    char u[300];

    ASSERT_EQ(docker_tls_url("tcp://h:2376", 1, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "https://h:2376");
    ASSERT_EQ(docker_tls_url("tcp://h", 1, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "https://h:2376");
    ASSERT_EQ(docker_tls_url("tcp://h", 0, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "tcp://h:2375");
    ASSERT_EQ(docker_tls_url("tcp://[::1]", 1, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "https://[::1]:2376");
    ASSERT_EQ(docker_tls_url("tcp://[::1]:9/p", 1, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "https://[::1]:9/p");
    ASSERT_EQ(docker_tls_url("tcp://h/api", 0, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "tcp://h:2375/api");
    ASSERT_EQ(docker_tls_url("unix:///run/d.sock", 1, u, sizeof(u), &err), 0);
    ASSERT_STR(u, "unix:///run/d.sock");
    ASSERT(docker_tls_url("tcp://h", 1, u, 10, &err) != 0);
    ASSERT_CONTAINS(err.msg, "too long");
}

static void put(const char *dir, const char *name, const char *text)
{
    char p[600];
    FILE *f;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    if ((f = fopen(p, "w")) != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static void rm(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    unlink(p);
}

#define PEM "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n"

/* apply on dir with DOCKER_TLS_VERIFY=1 (or DOCKER_TLS=1 when !verify) */
static int apply(const char *dir, int verify, struct http_client *c, char *note, size_t nsz,
                 struct llmsb_err *err)
{
    struct docker_tls t = decide("", "", verify ? "1" : NULL, verify ? NULL : "1", dir, NULL);
    http_client_release(c);
    if (http_client_init(c, "https://127.0.0.1:2376", "/v1.41", err) != 0)
        return err->code;
    return docker_tls_apply(&t, c, note, nsz, err);
}

TEST(certificate_files_and_their_errors)
{
    char dir[] = "/tmp/llmsb-tls-unit.XXXXXX", note[400];
    struct llmsb_err err = {0};
    struct http_client c = {0};

    ASSERT(mkdtemp(dir) != NULL);
    /* an empty directory: verifying needs ca.pem, named with its variable */
    ASSERT(apply(dir, 1, &c, note, sizeof(note), &err) != 0);
    ASSERT_CONTAINS(err.msg, "DOCKER_CERT_PATH=");
    ASSERT_CONTAINS(err.msg, "ca.pem: No such file or directory");
    ASSERT_CONTAINS(err.msg, "DOCKER_TLS_VERIFY=1");
    /* unchecked TLS needs no file at all */
    ASSERT_EQ(apply(dir, 0, &c, note, sizeof(note), &err), 0);
    ASSERT_EQ(c.insecure, 1);
    ASSERT_CONTAINS(note, "no client certificate");
    /* the CA alone: no client certificate, as the CLI */
    put(dir, "ca.pem", PEM);
    ASSERT_EQ(apply(dir, 1, &c, note, sizeof(note), &err), 0);
    ASSERT(c.ca_pem && !c.cert_pem && !c.key_pem && !c.insecure);
    ASSERT_CONTAINS(note, "the daemon checked against ca.pem");
    /* half a key pair is an error */
    put(dir, "cert.pem", PEM);
    ASSERT(apply(dir, 1, &c, note, sizeof(note), &err) != 0);
    ASSERT_CONTAINS(err.msg, "cert.pem without key.pem");
    put(dir, "key.pem", "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n");
    ASSERT_EQ(apply(dir, 1, &c, note, sizeof(note), &err), 0);
    ASSERT(c.ca_pem && c.cert_pem && c.key_pem);
    ASSERT_CONTAINS(note, "client certificate cert.pem");
    /* a file that is no PEM */
    put(dir, "ca.pem", "hello\n");
    ASSERT(apply(dir, 1, &c, note, sizeof(note), &err) != 0);
    ASSERT_CONTAINS(err.msg, "ca.pem: not a PEM file");
    http_client_release(&c);
    rm(dir, "ca.pem");
    rm(dir, "cert.pem");
    rm(dir, "key.pem");
    rmdir(dir);
}

TEST(config_keys)
{
    struct config c;
    struct llmsb_err err = {0};
    const char *y = "backend:\n  host: tcp://h:2376\n  tls_verify: true\n  cert_path: /k\n";

    config_defaults(&c);
    ASSERT_STR(c.kube.tls_verify, "");
    ASSERT_EQ(config_load_string(&c, y, strlen(y), "t.yaml", &err), 0);
    ASSERT_STR(c.kube.tls_verify, "true");
    ASSERT_STR(c.kube.cert_path, "/k");
    y = "backend:\n  tls_verify: 1\n";
    config_defaults(&c);
    ASSERT(config_load_string(&c, y, strlen(y), "t.yaml", &err) != 0);
    ASSERT_CONTAINS(err.msg, "t.yaml:2: backend.tls_verify must be one of true|false");
}

TEST_MAIN("docker_tls", T(decides_as_the_docker_cli), T(url_gets_scheme_and_default_port),
          T(certificate_files_and_their_errors), T(config_keys))
