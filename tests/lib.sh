# lib.sh - shell helpers the suites share (sourced).
#
# Suites share a host with each other and with production workers, so a
# "nothing left" check counts only what its own run started.  Every sandbox
# carries the labels llmsb.host and llmsb.pid (the process that made it: a
# `run`, a `submit --local`, a worker, a test binary); a suite keeps the
# pids of the processes it starts (track, or $! of a worker) and asks for
# their containers, and for the processes inside those containers.
# ENGINE_SOCK is the engine's socket (default: the system dockerd).

ENGINE_SOCK=${ENGINE_SOCK:-/var/run/docker.sock}
RUN_PIDS=${RUN_PIDS:-}

# engine_get PATH: the engine's answer to GET /v1.41PATH; fails if it does not answer.
engine_get() {
    curl -fs --max-time 10 --unix-socket "$ENGINE_SOCK" "http://d/v1.41$1"
}

# track CMD...: runs CMD (in the background, to learn its pid, with this
# shell's stdin), adds its pid to RUN_PIDS and returns CMD's status.
track() {
    "$@" 0<&0 &
    RUN_PIDS="$RUN_PIDS $!"
    wait $!
}

# containers_of PID...: the ids of the containers (any state) the processes
# PID... of this host made, one a line; "engine-unreachable" if the engine
# does not answer, so that a count of them is not 0.
containers_of() {
    local p f list
    for p in "$@"; do
        f=$(jq -rn --arg h "$(hostname)" --arg p "$p" \
            '{label: ["llmsb.host=" + $h, "llmsb.pid=" + $p]} | tojson | @uri')
        list=$(engine_get "/containers/json?all=1&filters=$f") || { echo engine-unreachable; continue; }
        printf '%s' "$list" | jq -r '.[].Id'
    done
}

# worker_containers LABEL: how many containers (any state) carry the label
# llmsb.worker=LABEL (a worker's name, or an MCP server's host-pid).
worker_containers() {
    local f list
    f=$(jq -rn --arg w "$1" '{label: ["llmsb.worker=" + $w]} | tojson | @uri')
    list=$(engine_get "/containers/json?all=1&filters=$f") && printf '%s' "$list" | jq length || echo 0
}

# remove_containers_of PID...: removes the containers of the processes
# PID... (what workers a test killed with -9 left behind).
remove_containers_of() {
    local id
    for id in $(containers_of "$@"); do remove_container "$id"; done
}

# decoy_container IMAGE: starts a container labelled as another run's
# sandbox on this host (llmsb.pid of this shell, which no suite tracks) with
# a process of the sandbox uid in it, removed when it ends (10 minutes), and
# prints its id: a suite runs one while it checks the host, to show that it
# counts only its own.  (A sandbox's rlimits: Podman cannot start one with
# its defaults on every host.)
decoy_container() {
    local body id
    body=$(jq -cn --arg img "$1" --arg h "$(hostname)" --arg p "$$" '{Image: $img,
        Entrypoint: ["sleep", "600"], User: "10001:10001",
        HostConfig: {AutoRemove: true, Ulimits: [{Name: "nofile", Soft: 1024, Hard: 1024},
            {Name: "nproc", Soft: 256, Hard: 256}, {Name: "core", Soft: 0, Hard: 0}]},
        Labels: {"llmsb.managed": "1", "llmsb.kind": "local", "llmsb.host": $h, "llmsb.pid": $p}}')
    id=$(curl -fs -X POST -H 'Content-Type: application/json' -d "$body" --unix-socket "$ENGINE_SOCK" \
        "http://d/v1.41/containers/create" | jq -r .Id)
    [ -n "$id" ] || return 1
    curl -fs -X POST --unix-socket "$ENGINE_SOCK" "http://d/v1.41/containers/$id/start" >/dev/null ||
        { remove_container "$id"; return 1; }
    echo "$id"
}

# remove_container ID: removes it, running or not.
remove_container() {
    curl -s -X DELETE --unix-socket "$ENGINE_SOCK" "http://d/v1.41/containers/$1?force=1" >/dev/null
}

# watch_containers FILE: writes to FILE the engine's create event (one JSON
# a line) of every sandbox container made from now on, until the watcher
# (pid WATCH_PID) is killed: the record of a run's containers after they
# are gone.
watch_containers() {
    local f
    f=$(jq -rn '{type: ["container"], event: ["create"], label: ["llmsb.managed=1"]} | tojson | @uri')
    # since a second ago: the events between this call and the connection are replayed
    curl -sN --unix-socket "$ENGINE_SOCK" "http://d/v1.41/events?since=$(($(date +%s) - 1))&filters=$f" \
        >"$1" 2>/dev/null &
    WATCH_PID=$!
    for _ in $(seq 1 50); do [ -e "$1" ] && return 0; sleep 0.1; done
}

# watched_containers FILE PID...: the ids of the containers in FILE the
# processes PID... of this host made, one a line.
watched_containers() {
    local file=$1
    shift
    jq -Rr --arg h "$(hostname)" 'fromjson? | .Actor.Attributes as $a
        | select($a["llmsb.host"] == $h and ($a["llmsb.pid"] | IN($ARGS.positional[]))) | .Actor.ID' \
        "$file" --args "$@"
}

# processes_in ID...: the processes (pid and command line) whose cgroup is
# one of the containers ID..., one a line.
processes_in() {
    local f d
    [ $# -gt 0 ] || return 0
    printf '%s\n' "$@" | grep -lFf - /proc/[0-9]*/cgroup 2>/dev/null | while read -r f; do
        d=${f%/cgroup}
        echo "${d#/proc/} $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | head -c 100)"
    done
}

# processes_outside_containers UID: the processes of UID (pid and command
# line) in no container's cgroup: a sandbox process that got out of its
# container, whichever run it came from.
processes_outside_containers() {
    local p
    for p in $(ps -u "$1" -o pid= 2>/dev/null); do
        grep -qE '[0-9a-f]{64}' "/proc/$p/cgroup" 2>/dev/null ||
            [ ! -e "/proc/$p" ] || echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | head -c 100)"
    done
}

# free_port: a TCP port on 127.0.0.1 free to bind now, at random below the
# kernel's ephemeral range, so suites running side by side never meet on one.
free_port() {
    python3 - <<'EOF'
import random, socket
# below the kernel's ephemeral range: a port the kernel picked for us could
# be the local end of someone's outgoing connection by the time a server
# binds it (seen in CI: dockerd's bind, address already in use)
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(10000, max(low, 10001))
    try:
        socket.socket().bind(("127.0.0.1", port))
    except OSError:
        continue
    print(port)
    break
EOF
}

# start_redis PORT DIR [ARG...]: a redis-server of the suite's own on
# 127.0.0.1:PORT, nothing persisted, its log, pid and files in DIR, with
# ARGs added; returns once it answers, fails if it does not within 5 s.
start_redis() {
    local port=$1 dir=$2 i
    shift 2
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
        --logfile "$dir/redis.log" --pidfile "$dir/redis.pid" --dir "$dir" "$@" || return 1
    for i in $(seq 1 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

# stop_worker_and_redis: the end of a suite that ran a worker ($WORKER, if
# it started one) on its own redis-server ($PORT): the worker stopped, the
# server shut down, the worker's containers removed.
stop_worker_and_redis() {
    [ -n "${WORKER:-}" ] && kill "$WORKER" 2>/dev/null && wait "$WORKER" 2>/dev/null
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
    [ -n "${WORKER:-}" ] && remove_containers_of "$WORKER"
    return 0
}

# start_named_worker BIN NAME SLOTS: a worker of the binary BIN named NAME
# on the suite's redis-server ($PORT, prefix $LLMSB_PREFIX or llmsb), its
# log appended to $T/NAME.log (a worker started again keeps its earlier
# lines), its pid added to WORKERS and kept in PID_NAME (- as _); returns
# once its heartbeat is there, fails saying so if it is not within 15 s.
start_named_worker() {
    "$1" worker --name "$2" --slots "$3" >>"$T/$2.log" 2>&1 &
    WORKERS="${WORKERS:-} $!"
    disown $! 2>/dev/null
    eval "PID_${2//-/_}=$!"
    for _ in $(seq 1 150); do
        [ "$(redis-cli -p "$PORT" exists "${LLMSB_PREFIX:-llmsb}:worker:$2")" = 1 ] && return 0
        sleep 0.1
    done
    echo "worker $2 did not come up"; tail -20 "$T/$2.log"
    return 1
}

# stop_named_worker NAME: SIGTERM (it drains), then waits up to 30 s for it.
stop_named_worker() {
    local p
    eval "p=\$PID_${1//-/_}"
    kill "$p" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.1; done
}

# stop_workers_and_redis: the end of a suite that ran workers ($WORKERS)
# on its own redis-server ($PORT): each stopped (SIGTERM, 10 s each at
# most), the server shut down, their containers and those of $RUN_PIDS
# removed.
stop_workers_and_redis() {
    local p
    for p in ${WORKERS:-}; do kill "$p" 2>/dev/null; done
    for p in ${WORKERS:-}; do
        for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1
    remove_containers_of ${WORKERS:-} $RUN_PIDS
    return 0
}

# suite NAME: a suite's counters.  `ok CASE` and `bad CASE WHY` add to pass
# and fail and print NAME.CASE; bad also prints what the case left in
# $WHY_FILE (default $T/why; set empty, nothing), through $WHY_SHOW
# (default: its first 12 lines).  suite_end [NAME] prints the line
# run-suite.sh reads, "NAME: N passed, N failed" (NAME: the suite's), and
# fails if a case failed: a suite's last command.
suite() {
    SUITE=$1
    pass=0
    fail=0
}
ok() {
    echo "ok   $SUITE.$1"
    pass=$((pass + 1))
}
bad() {
    local why=${WHY_FILE-${T:-/nonexistent}/why}
    echo "FAIL $SUITE.$1: $2"
    [ -n "$why" ] && [ -s "$why" ] && sed 's/^/  | /' "$why" | ${WHY_SHOW:-head -12}
    fail=$((fail + 1))
}
suite_end() {
    echo "${1:-$SUITE}: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}

# checks_of TEXT: the output of a script whose checks print ok/FAIL lines
# as ours do (a node client's): printed, its ok and FAIL lines added to
# pass and fail; fails if it holds no ok line (no check ran).
checks_of() {
    printf '%s\n' "$1"
    pass=$((pass + $(printf '%s\n' "$1" | grep -c '^ok ')))
    fail=$((fail + $(printf '%s\n' "$1" | grep -c '^FAIL ')))
    printf '%s\n' "$1" | grep -q '^ok '
}

# A private dockerd, for a suite that kills or restarts its engine: its own
# socket, data root, exec root, pidfile, bridge and cgroup parent; never the
# system daemon's (whose docker0 a second daemon with --bridge=none would
# delete).  pe_init DIR NAME sets PE_DIR, PE_SOCK and PE (the docker command
# for it) and makes the bridge NAME (a short DIR: the socket path must fit
# sun_path); pe_start starts the daemon and waits for it; pe_pid, pe_stop;
# pe_load IMAGE... copies the system daemon's images into it; pe_cleanup
# removes its containers, stops it, unmounts what it left and the bridge.
pe_init() {
    PE_DIR=$1
    PE_BR=$2
    PE_SOCK=$PE_DIR/d.sock
    PE="docker -H unix://$PE_SOCK"
    ip link add name "$PE_BR" type bridge && ip addr add "10.213.$(($$ % 200)).1/24" dev "$PE_BR" &&
        ip link set "$PE_BR" up
}
pe_start() {
    dockerd --host "unix://$PE_SOCK" --data-root "$PE_DIR/data" --exec-root "$PE_DIR/x" \
        --pidfile "$PE_DIR/d.pid" --bridge "$PE_BR" --iptables=false --ip-masq=false \
        --cgroup-parent "/llmsb-$PE_BR" >>"$PE_DIR/dockerd.log" 2>&1 &
    disown $! 2>/dev/null
    for _ in $(seq 1 100); do $PE version >/dev/null 2>&1 && return 0; sleep 0.2; done
    tail -5 "$PE_DIR/dockerd.log"
    return 1
}
pe_pid() { cat "$PE_DIR/d.pid" 2>/dev/null; }
pe_stop() {
    local pid
    pid=$(pe_pid)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    for _ in $(seq 1 150); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    # its containerd, when a kill -9 orphaned it
    pkill -f "containerd --config $PE_DIR/x/containerd" 2>/dev/null
    return 0
}
pe_load() {
    local img
    for img in "$@"; do
        docker save "$img" | $PE load >>"$PE_DIR/load.log" 2>&1 || { tail -2 "$PE_DIR/load.log"; return 1; }
    done
}
pe_cleanup() {
    local ids
    [ -n "${PE_DIR:-}" ] || return 0
    if $PE version >/dev/null 2>&1; then
        ids=$($PE ps -aq)
        [ -n "$ids" ] && $PE rm -f $ids >/dev/null 2>&1
    fi
    pe_stop
    grep -o " $PE_DIR[^ ]*" /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null
    ip link del "$PE_BR" 2>/dev/null
    return 0
}

