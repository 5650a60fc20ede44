# lib.sh - shell helpers the suites share (sourced).

# Removes the containers of every llm-sandbox worker on the local dockerd
# (label llmsb.kind=worker): what workers a test killed with -9 left behind.
remove_worker_containers() {
    local id
    for id in $(curl -s --unix-socket /var/run/docker.sock \
        "http://d/v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22llmsb.kind%3Dworker%22%5D%7D" |
        grep -o '"Id":"[0-9a-f]*"' | cut -d'"' -f4); do
        curl -s -X DELETE --unix-socket /var/run/docker.sock "http://d/v1.41/containers/$id?force=1" >/dev/null
    done
}
