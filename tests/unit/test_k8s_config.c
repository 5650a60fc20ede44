/* test_k8s_config.c - kubeconfig and in-cluster credentials
 * (backends/kubernetes/config.c): the current context's server, namespace, CA,
 * token or client certificate, files relative to the kubeconfig, and the
 * errors a user meets first. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backends/kubernetes/internal.h"

static char dir[] = "/tmp/llmsb-k8scfg-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* "-----BEGIN CERTIFICATE-----\nAAA\n" in base64 */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQQo="

TEST(current_context_with_token_and_ca_data)
{
    struct llmsb_err err = {0};
    struct k8s_auth a;
    const char *p =
        write_file("kc1", "apiVersion: v1\n"
                          "clusters:\n"
                          "- name: other\n  cluster: {server: https://wrong:1}\n"
                          "- name: c1\n  cluster:\n"
                          "    server: https://10.200.0.1:16443\n"
                          "    certificate-authority-data: " CA_B64 "\n"
                          "contexts:\n"
                          "- name: ctx\n  context: {cluster: c1, user: u1, namespace: llmsb}\n"
                          "current-context: ctx\n"
                          "users:\n"
                          "- name: u1\n  user: {token: abc.def}\n");
    ASSERT_EQ(k8s_auth_load(p, &a, &err), 0);
    ASSERT_STR(a.server, "https://10.200.0.1:16443");
    ASSERT_STR(a.ns, "llmsb");
    ASSERT_STR(a.token, "abc.def");
    ASSERT_STR(a.ca_pem, "-----BEGIN CERTIFICATE-----\nAAA\n");
    ASSERT(a.cert_pem == NULL && a.key_pem == NULL && !a.insecure);
    ASSERT_CONTAINS(a.source, "context ctx");
    k8s_auth_release(&a);
}

TEST(client_certificate_files_relative_to_the_kubeconfig)
{
    struct llmsb_err err = {0};
    struct k8s_auth a;
    const char *p;

    write_file("client.crt", "CERT\n");
    write_file("client.key", "KEY\n");
    p = write_file("kc2", "clusters:\n- name: c\n  cluster: {server: 'https://h:6443', "
                          "insecure-skip-tls-verify: true}\n"
                          "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                          "current-context: x\n"
                          "users:\n- name: u\n  user: {client-certificate: client.crt, "
                          "client-key: client.key}\n");
    ASSERT_EQ(k8s_auth_load(p, &a, &err), 0);
    ASSERT_STR(a.cert_pem, "CERT\n");
    ASSERT_STR(a.key_pem, "KEY\n");
    ASSERT(a.insecure);
    ASSERT_STR(a.ns, "");
    ASSERT(a.token == NULL);
    k8s_auth_release(&a);
}

TEST(errors_name_the_file_and_what_is_missing)
{
    struct llmsb_err err = {0};
    struct k8s_auth a;
    const char *p = write_file("kc3", "contexts: []\ncurrent-context: gone\n");

    ASSERT(k8s_auth_load(p, &a, &err) != 0);
    ASSERT_CONTAINS(err.msg, "kc3: current-context \"gone\" is not among its contexts");
    k8s_auth_release(&a);

    memset(&err, 0, sizeof(err));
    p = write_file("kc4", "clusters:\n- name: c\n  cluster: {server: 'https://h'}\n"
                          "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                          "current-context: x\n"
                          "users:\n- name: u\n  user:\n    exec: {command: aws}\n");
    ASSERT(k8s_auth_load(p, &a, &err) != 0);
    ASSERT_CONTAINS(err.msg, "exec or auth-provider plugin");
    k8s_auth_release(&a);

    memset(&err, 0, sizeof(err));
    p = write_file("kc5", "clusters: [\n");
    ASSERT(k8s_auth_load(p, &a, &err) != 0);
    ASSERT_CONTAINS(err.msg, "kc5:");
    k8s_auth_release(&a);

    memset(&err, 0, sizeof(err));
    ASSERT(k8s_auth_load("/nonexistent/kubeconfig", &a, &err) != 0);
    ASSERT_CONTAINS(err.msg, "cannot read kubeconfig /nonexistent/kubeconfig");
    k8s_auth_release(&a);
}

TEST(kubeconfig_env_first_file_of_a_list)
{
    struct llmsb_err err = {0};
    struct k8s_auth a;
    char list[600];
    const char *p =
        write_file("kc6", "clusters:\n- name: c\n  cluster: {server: 'https://six'}\n"
                          "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                          "current-context: x\nusers:\n- name: u\n  user: {token: t}\n");

    snprintf(list, sizeof(list), "%s:/nonexistent", p);
    setenv("KUBECONFIG", list, 1);
    ASSERT_EQ(k8s_auth_load(NULL, &a, &err), 0);
    ASSERT_STR(a.server, "https://six");
    k8s_auth_release(&a);
    unsetenv("KUBECONFIG");
}

static void setup(void) __attribute__((constructor));
static void setup(void)
{
    if (!mkdtemp(dir))
        abort();
}

static void cleanup(void) __attribute__((destructor));
static void cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

TEST_MAIN("k8s_config", T(current_context_with_token_and_ca_data),
          T(client_certificate_files_relative_to_the_kubeconfig),
          T(errors_name_the_file_and_what_is_missing), T(kubeconfig_env_first_file_of_a_list))
