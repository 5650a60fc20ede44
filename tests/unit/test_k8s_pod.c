/* test_k8s_pod.c - what a pod's status says of its start
 * (kubernetes_pod_state in backends/kubernetes/kubernetes.c), read from pod objects as the
 * API server returns them: a pod no scheduler looked at, one the
 * scheduler cannot place, images the kubelet cannot get, a container
 * still being created, a running one, one that ended. */
#include "test.h"

#include "backends/kubernetes/internal.h"

struct reading {
    struct container_state st;
    char fatal[400], pending[400];
};

static void read_pod(const char *json, struct reading *r)
{
    cJSON *pod = cJSON_Parse(json);

    memset(r, 0, sizeof(*r));
    kubernetes_pod_state(pod, &r->st, r->fatal, sizeof(r->fatal), r->pending, sizeof(r->pending));
    cJSON_Delete(pod);
}

TEST(no_scheduler_no_node)
{
    struct reading r;

    /* the test cluster without kubernetes.node: nothing ever binds it */
    read_pod("{\"spec\":{},\"status\":{\"phase\":\"Pending\",\"qosClass\":\"Burstable\"}}", &r);
    ASSERT_EQ(r.st.running, 0);
    ASSERT_STR(r.st.status, "Pending");
    ASSERT_STR(r.fatal, "");
    ASSERT_CONTAINS(r.pending, "not scheduled: no node is assigned and no scheduler");
    ASSERT_CONTAINS(r.pending, "kubernetes.node");
}

TEST(unschedulable_names_the_schedulers_reason)
{
    struct reading r;

    read_pod("{\"spec\":{},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":"
             "\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":"
             "\"0/3 nodes are available: 3 Insufficient memory.\"}]}}",
             &r);
    ASSERT_STR(r.fatal, ""); /* a node may yet come: the start timeout ends it */
    ASSERT_STR(
        r.pending,
        "PodScheduled false: Unschedulable: 0/3 nodes are available: 3 Insufficient memory.");
}

TEST(images_it_cannot_get_are_fatal)
{
    static const char *const reasons[] = {"ErrImageNeverPull", "ImagePullBackOff", "ErrImagePull",
                                          "InvalidImageName", "CreateContainerConfigError"};
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        char json[600];
        struct reading r;
        snprintf(json, sizeof(json),
                 "{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\","
                 "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},{\"type\":"
                 "\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\"}],"
                 "\"containerStatuses\":[{\"name\":\"agent\",\"state\":{\"waiting\":{\"reason\":"
                 "\"%s\",\"message\":\"image \\\"llmsb/nope:1\\\" is not there\"}}}]}}",
                 reasons[i]);
        read_pod(json, &r);
        ASSERT_MSG(strstr(r.fatal, reasons[i]) == r.fatal, reasons[i]);
        ASSERT_MSG(strstr(r.fatal, "llmsb/nope:1") != NULL, reasons[i]);
        /* the readiness conditions only repeat the container's words */
        ASSERT_MSG(strstr(r.pending, "ContainersNotReady") == NULL, reasons[i]);
        ASSERT_MSG(strstr(r.pending, reasons[i]) == r.pending, reasons[i]);
    }
}

TEST(being_created_is_pending_not_fatal)
{
    struct reading r;

    read_pod("{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\","
             "\"containerStatuses\":[{\"state\":{\"waiting\":{\"reason\":"
             "\"ContainerCreating\"}}}]}}",
             &r);
    ASSERT_STR(r.fatal, "");
    ASSERT_STR(r.pending, "ContainerCreating");
    read_pod("{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\"}}", &r);
    ASSERT_STR(r.pending, "on node n1, whose kubelet has not reported on it");
}

TEST(running_and_ended)
{
    struct reading r;

    read_pod("{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\","
             "\"containerStatuses\":[{\"state\":{\"running\":{}}}]}}",
             &r);
    ASSERT_EQ(r.st.running, 1);
    ASSERT_STR(r.fatal, "");
    read_pod("{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Failed\","
             "\"containerStatuses\":[{\"state\":{\"terminated\":{\"exitCode\":137,\"reason\":"
             "\"OOMKilled\"}}}]}}",
             &r);
    ASSERT_EQ(r.st.oom_killed, 1);
    ASSERT_EQ(r.st.exit_code, 137);
    ASSERT_CONTAINS(r.fatal, "its container ended (OOMKilled, exit 137)");
    read_pod("{\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\",\"message\":\"over "
             "its ephemeral storage\"}}",
             &r);
    ASSERT_CONTAINS(r.fatal, "the pod was evicted: over its ephemeral storage");
}

TEST(not_an_object)
{
    struct reading r;

    read_pod("[]", &r);
    ASSERT_EQ(r.st.running, 0);
    ASSERT_STR(r.fatal, "");
    ASSERT_CONTAINS(r.pending, "not scheduled");
}

/* An image's id for a report: the running sandbox pod's container status
 * of the container whose spec names the image; a pod being deleted, or
 * another image, is no answer. */
TEST(image_id_from_the_pods_that_run_it)
{
    cJSON *list = cJSON_Parse(
        "{\"items\": ["
        "{\"metadata\": {\"deletionTimestamp\": \"x\"}, \"spec\": {\"containers\": [{\"name\": "
        "\"sandbox\", \"image\": \"llmsb/cpp:latest\"}]}, \"status\": {\"containerStatuses\": "
        "[{\"name\": \"sandbox\", \"imageID\": \"sha256:gone\"}]}},"
        "{\"metadata\": {}, \"spec\": {\"containers\": [{\"name\": \"sandbox\", \"image\": "
        "\"llmsb/python:latest\"}]}, \"status\": {\"containerStatuses\": [{\"name\": \"sandbox\", "
        "\"imageID\": \"docker.io/llmsb/python@sha256:py\"}]}},"
        "{\"metadata\": {}, \"spec\": {\"containers\": [{\"name\": \"sandbox\", \"image\": "
        "\"llmsb/cpp:latest\"}]}, \"status\": {\"containerStatuses\": [{\"name\": \"other\", "
        "\"imageID\": \"sha256:wrong\"}, {\"name\": \"sandbox\", \"imageID\": "
        "\"sha256:cpp\"}]}}]}");
    char out[128];

    ASSERT(list);
    ASSERT_EQ(kubernetes_pods_image_id(list, "llmsb/cpp:latest", out, sizeof(out)), 0);
    ASSERT_STR(out, "sha256:cpp");
    ASSERT_EQ(kubernetes_pods_image_id(list, "llmsb/python:latest", out, sizeof(out)), 0);
    ASSERT_STR(out, "docker.io/llmsb/python@sha256:py");
    ASSERT_EQ(kubernetes_pods_image_id(list, "llmsb/r:latest", out, sizeof(out)),
              LLMSB_ERR_NOTFOUND);
    cJSON_Delete(list);
}

TEST_MAIN("k8s_pod", T(no_scheduler_no_node), T(unschedulable_names_the_schedulers_reason),
          T(images_it_cannot_get_are_fatal), T(being_created_is_pending_not_fatal),
          T(running_and_ended), T(not_an_object), T(image_id_from_the_pods_that_run_it))
