# llm-sandbox - build, test, sanitize, fuzz, bench.
# `make` builds bin/llm-sandbox and the static bin/llmsb-agent.

CC      ?= cc
BUILD   ?= build
WARN    = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wformat=2 -Wstrict-prototypes \
          -Wmissing-prototypes -Wshadow -Wno-unused-parameter
HARDEN  = -O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong
CFLAGS  ?= $(HARDEN) -g
ALLCFLAGS = $(WARN) $(CFLAGS) -MMD -MP -I. $(shell pkg-config --cflags libcurl libcjson yaml-0.1 libmicrohttpd 2>/dev/null)
LDLIBS  = -lcurl -lcjson -lyaml -larchive -lhiredis -lpcre2-8 -lssl -lcrypto -lmicrohttpd -lpthread -lm
PIE     = -fPIE
PIELD   = -pie

COMMON_SRC  = common/common.c common/status.c common/strlist.c common/compare.c
PROTO_SRC   = proto/proto.c
AGENT_SRC   = agent/agent.c agent/run.c agent/step.c agent/live.c agent/warm.c agent/zygote.c agent/prespawn.c \
              agent/javac.c agent/artifacts.c agent/snapshot.c agent/child.c agent/user.c agent/confine.c
LIB_SRC     = $(COMMON_SRC) $(PROTO_SRC) common/json.c common/base64.c common/fields.c common/lane.c common/clock.c common/net.c common/random.c common/http_gate.c common/http_serve.c common/features.c \
              $(sort $(wildcard languages/*.c)) \
              $(sort $(wildcard security/*.c)) config/config.c config/jobfile.c \
              backends/backend.c backends/runtime.c backends/registry/registry.c backends/hardening.c backends/seccomp.c backends/http/http.c backends/http/websocket.c \
              backends/docker/docker.c backends/docker/stream.c backends/docker/egress.c backends/docker/tls.c \
              backends/docker/podman.c backends/kubernetes/kubernetes.c \
              backends/kubernetes/config.c backends/kubernetes/stream.c \
              sandbox/sandbox.c sandbox/pool.c images/images.c images/custom.c images/tree.c \
              job/job.c job/parse.c job/result.c job/dedup.c job/due.c \
              queue/queue.c queue/lanes.c queue/conn.c queue/url.c queue/live.c queue/workers.c queue/delayed.c queue/dead.c \
              scheduler/decide.c scheduler/scheduler.c \
              exec/exec.c exec/session.c exec/scan.c exec/identity.c exec/runner.c exec/image_check.c \
              batch/batch.c batch/local.c batch/queue.c batch/summary.c batch/report.c \
              worker/worker.c worker/entry.c worker/gate.c worker/live.c worker/store.c worker/janitor.c \
              worker/metrics.c mcp/jsonrpc.c mcp/tools.c mcp/server.c mcp/http.c mcp/http_check.c \
              $(sort $(wildcard front/*.c)) \
              eval/passk.c eval/report.c eval/timings.c eval/convert.c eval/convert_jobs.c \
              eval/fmt_humaneval.c eval/fmt_multiple.c eval/fmt_open.c eval/fmt_crux.c eval/fmt_stdio.c \
              eval/fmt_stdio_runners.c eval/extract.c eval/fmt_evalplus.c eval/fmt_evalplus_runner.c \
              eval/fmt_mbpp.c eval/fmt_bigcodebench.c
CLI_SRC     = cli/main.c cli/run.c cli/images.c cli/queue_cmds.c cli/worker.c cli/submit.c cli/scan.c \
              cli/artifacts.c cli/cancel.c cli/mcp.c cli/serve.c cli/convert.c cli/eval.c cli/dead.c \
              cli/convert_decode.c

LIB_OBJ   = $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ   = $(CLI_SRC:%.c=$(BUILD)/%.o)
AGENT_OBJ = $(AGENT_SRC:%.c=$(BUILD)/agent-static/%.o) \
            $(COMMON_SRC:%.c=$(BUILD)/agent-static/%.o) $(PROTO_SRC:%.c=$(BUILD)/agent-static/%.o)

TBIN    ?= bin/tests
UNIT_TESTS = $(patsubst tests/unit/%.c,$(TBIN)/%,$(wildcard tests/unit/test_*.c))
INTEG_TESTS = $(patsubst tests/integration/%.c,$(TBIN)/%,$(wildcard tests/integration/test_*.c))

.SECONDARY:
.PHONY: check-layers fuzzers all clean bench-queue test test-zygote test-evalplus-all test-cpp-cache-all test-java-cache-all test-podman test-gvisor test-k8s test-tls test-custom-images test-bigcodebench test-soak test-redis-ha soak unit integration sanitize fuzz bench images images-current format
all: bin/llm-sandbox bin/llmsb-agent

V ?= 0
Q = $(if $(filter 1,$(V)),,@)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",:)
	$(Q)$(CC) $(ALLCFLAGS) $(PIE) -c $< -o $@

# server.c embeds the OpenAPI document (.incbin)
$(BUILD)/front/server.o: front/openapi.json

# hooks.c embeds the files of languages/hooks/ (.incbin) and the zygote's
# library for R and Ruby
$(BUILD)/languages/hooks.o: $(wildcard languages/hooks/*) bin/llmsb_zygote.so

# The zygote's library (agent/zygote_lib.c), loaded by R and Ruby in the
# images (Debian 12's libc, as here): fixed flags whatever CFLAGS say (a
# sanitizer's runtime is not in the images), reproducible as the agent.
bin/llmsb_zygote.so: agent/zygote_lib.c agent/job_limits.h
	@mkdir -p bin
	@$(if $(Q),echo "  CC      $< (zygote library)",:)
	$(Q)$(CC) $(WARN) -O2 -g -fPIC -shared -ffile-prefix-map=$(CURDIR)=. -Wl,--build-id=sha1 -o $@ $<

# The agent is static and built without PIE so it needs nothing from the image.
# Its bytes name the image tags, so the build is reproducible: no checkout
# path reaches it (-ffile-prefix-map), whichever directory builds it.
$(BUILD)/agent-static/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (static agent)",:)
	$(Q)$(CC) $(WARN) -O2 -g -ffile-prefix-map=$(CURDIR)=. -MMD -MP -I. -c $< -o $@

bin/llmsb-agent: $(AGENT_OBJ)
	@mkdir -p bin
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) -static -o $@ $^ -lm

# A test double of the agent (tests/doubles/), static like the real one.
$(TBIN)/fake-agent: $(BUILD)/agent-static/tests/doubles/fake_agent.o \
                    $(COMMON_SRC:%.c=$(BUILD)/agent-static/%.o) $(PROTO_SRC:%.c=$(BUILD)/agent-static/%.o)
	@mkdir -p $(TBIN)
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) -static -o $@ $^ -lm

CLI_BIN ?= bin/llm-sandbox
$(CLI_BIN): $(CLI_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) $(PIELD) -o $@ $^ $(LDLIBS)

AGENT_LIB_OBJ = $(BUILD)/agent/run.o $(BUILD)/agent/step.o $(BUILD)/agent/live.o $(BUILD)/agent/warm.o \
                $(BUILD)/agent/zygote.o $(BUILD)/agent/prespawn.o $(BUILD)/agent/javac.o \
                $(BUILD)/agent/artifacts.o $(BUILD)/agent/snapshot.o $(BUILD)/agent/child.o \
                $(BUILD)/agent/user.o $(BUILD)/agent/confine.o
# the unit tests' fake engine (tests/doubles/fake_engine.c), whose
# containers run $(TBIN)/fake-agent as plain processes
UNIT_DOUBLES_OBJ = $(BUILD)/tests/doubles/fake_engine.o
$(TBIN)/test_%: tests/unit/test_%.c $(LIB_OBJ) $(AGENT_LIB_OBJ) $(UNIT_DOUBLES_OBJ)
	@mkdir -p $(TBIN)
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) $(ALLCFLAGS) $(PIE) $(PIELD) -o $@ $< $(LIB_OBJ) $(AGENT_LIB_OBJ) $(UNIT_DOUBLES_OBJ) $(LDLIBS)

$(TBIN)/test_integ_%: tests/integration/test_integ_%.c $(LIB_OBJ)
	@mkdir -p $(TBIN)
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) $(ALLCFLAGS) $(PIE) $(PIELD) -o $@ $< $(LIB_OBJ) $(LDLIBS)

# make test: the unit tests, plain and under ASan+UBSan, then every
# integration suite once, driving the sanitized CLI and test binaries (so
# the suites are the sanitizer run as well): against the real dockerd, on
# gVisor, then the Podman backend's and the Kubernetes backend's.  (The
# static agent runs inside the containers and is not instrumented.)
test: all images-current unit
	$(MAKE) $(SANFLAGS) bin/san/llm-sandbox
	LLMSB_BIN=$(CURDIR)/bin/san/llm-sandbox $(MAKE) $(SANFLAGS) unit integration test-soak test-redis-ha test-zygote test-gvisor test-podman test-k8s

# The integration tests run the agent inside the images: rebuild them when
# the agent or a recipe changed (only the agent layer, from the build cache).
images-current: all
	@mkdir -p $(BUILD)
	@bin/llm-sandbox images build > $(BUILD)/images.log 2>&1 || { cat $(BUILD)/images.log; exit 1; }

unit: $(UNIT_TESTS) $(TBIN)/fake-agent check-layers $(CLI_BIN)
	@sh tests/run-suite.sh unit $(UNIT_TESTS)
	@LLMSB_BIN=$(CLI_BIN) sh tests/eval/runners.sh
	@LLMSB_BIN=$(CLI_BIN) sh tests/eval/golden.sh

# The dependency rule of the source tree (docs/architecture.md), over the
# #include lines, the chains of headers and the symbols the objects use
# (nm: a prototype declared by hand shows there), so it builds them first;
# its self-test shows each kind of violation fails it.
check-layers: $(LIB_OBJ) $(CLI_OBJ) $(AGENT_OBJ) $(AGENT_LIB_OBJ)
	@CC="$(CC)" sh scripts/check-layers.sh --self-test
	@sh scripts/check-layers.sh --objects $(BUILD)

integration: $(INTEG_TESTS) $(TBIN)/fake-agent
	@FAKE_AGENT=$(CURDIR)/$(TBIN)/fake-agent sh tests/run-suite.sh integration $(INTEG_TESTS) tests/integration/test_cli.sh tests/integration/test_cases_state.sh tests/integration/test_plots.sh tests/integration/test_libraries.sh tests/integration/test_phases.sh tests/integration/test_live.sh tests/queue/test_queue.sh tests/queue/skew.sh tests/queue/lanes.sh tests/queue/delayed_dead.sh tests/dedup/run.sh tests/compose/test_compose.sh tests/hostile/run.sh tests/languages/run.sh tests/faults/run.sh tests/tls/run.sh tests/eval/run.sh tests/mcp/run.sh tests/mcp/http.sh tests/http/run.sh tests/mcp-conformance/run.sh tests/sessions/run.sh tests/metrics/run.sh tests/images/custom.sh

# The zygote against fresh interpreters (a differential corpus and
# HumanEval), then the hostile and integration suites with fresh
# interpreters (the rest of make test runs with the zygote, the default);
# then the C++ compile cache against the plain compile (a corpus and one
# HumanEval-X program of each include sequence; test-cpp-cache-all: all),
# the Java compile server against plain javac (a corpus, a quarter of
# HumanEval-X's programs, a job against the server; test-java-cache-all:
# all 164), the pre-spawned node against a plain start (a corpus and
# all 164 HumanEval-X JavaScript programs), and TypeScript's snapshot tsc
# against plain tsc (a corpus, a long file and MultiPL-E's TypeScript rows);
# and the HTTP front's compile once (calls of one program as a job's cases)
# against its plain path.
test-zygote: $(CLI_BIN) $(TBIN)/test_integ_docker
	@LLMSB_TBIN=$(CURDIR)/$(TBIN) sh tests/run-suite.sh zygote tests/zygote/run.sh tests/compile-cache/cpp.sh \
	    tests/compile-cache/java.sh tests/compile-cache/js.sh tests/compile-cache/ts.sh tests/http/compile_once.sh

# EvalPlus: every HumanEval+ and MBPP+ canonical solution on every input
# (make test runs a subset; about 2.5 minutes here), then the samples of
# tests/eval/evalplus.sh.
test-evalplus-all: $(CLI_BIN)
	@EVALPLUS_ALL=1 sh tests/eval/evalplus.sh

test-cpp-cache-all: $(CLI_BIN)
	@bash tests/compile-cache/cpp.sh all

test-java-cache-all: $(CLI_BIN)
	@bash tests/compile-cache/java.sh all

# The Podman backend against the real Podman API service, which
# scripts/podman-up.sh starts (and fills with the images): the hello/status
# suite, the hardening audit, the hostile suite and tests/podman/run.sh.
test-podman: $(CLI_BIN) $(TBIN)/test_integ_docker
	@PODMAN_LANGS="python javascript java cpp go go_test r ruby" scripts/podman-up.sh
	@LLMSB_BACKEND=podman sh tests/run-suite.sh podman $(TBIN)/test_integ_docker tests/hostile/run.sh tests/podman/run.sh

# The soak (tests/soak/run.sh): mixed jobs through three workers on a
# private dockerd and Redis, with faults at random (kill -9 of a worker, of
# a container, Redis restarted, the engine restarted once); every job one
# result with its verdict, the workers flat, nothing left.  `make soak` is
# 30 minutes in every language (outside CI; SOAK_SECONDS to change it);
# make test runs 3 minutes in Python and Ruby (the images it copies to the
# private engine).
soak: $(CLI_BIN)
	@SOAK_SECONDS=$${SOAK_SECONDS:-1800} sh tests/run-suite.sh soak tests/soak/run.sh

test-soak: $(CLI_BIN)
	@SOAK_SECONDS=180 SOAK_MONITOR_S=30 SOAK_LANGS="python ruby" sh tests/run-suite.sh soak tests/soak/run.sh

# The high-availability suites (tests/redis-ha/run.sh: every suite of the
# folder): real redis-server and redis-sentinel processes the tests start
# on 127.0.0.1 (LLMSB_HA_PORT_BASE, default 7200): a Sentinel failover
# under load (2,000 jobs, the primary killed -9 three times), a
# 3-primary Cluster with its slot moved mid-run, TLS and ACL users.
test-redis-ha: $(CLI_BIN)
	@sh tests/redis-ha/run.sh

# Custom images (images build --dockerfile) on the system dockerd (also in
# `make integration`).
test-custom-images: $(CLI_BIN)
	@sh tests/run-suite.sh images tests/images/custom.sh

# BigCodeBench (tests/eval/bigcodebench.sh): builds the image
# llmsb/custom/python-bigcodebench when missing (minutes cold), then the
# excerpt's verdicts against its evaluator's.  Not in `make test`.
test-bigcodebench: $(CLI_BIN)
	@LLMSB_BIN=$(CLI_BIN) sh tests/run-suite.sh bigcodebench tests/eval/bigcodebench.sh

# A remote Docker engine over TLS: a private dockerd with --tlsverify on
# 127.0.0.1 and certificates the suite makes (also in `make integration`).
test-tls: $(CLI_BIN)
	@sh tests/run-suite.sh tls tests/tls/run.sh

# gVisor: the status suite with the hardening audit (test_integ_docker) and
# the hostile suite on the runtime runsc (Debian's package) of the system
# dockerd, which scripts/gvisor-up.sh registers (docs/security.md; a no-op
# when setup.sh --with-gvisor did, as in CI); then runsc under another name
# (gvisor-test): the engine's answer agrees with the job's kernel, and a job
# leaves the next no IPC residue.  About 90 seconds.
test-gvisor: $(CLI_BIN) $(TBIN)/test_integ_docker
	@scripts/gvisor-up.sh
	@LLMSB_RUNTIME=runsc sh tests/run-suite.sh gvisor $(TBIN)/test_integ_docker tests/hostile/run.sh
	@for t in runs_on_the_configured_runtime ipc_objects_do_not_survive; do \
	    LLMSB_RUNTIME=gvisor-test TEST_ONLY=$$t sh tests/run-suite.sh gvisor_renamed $(TBIN)/test_integ_docker || exit 1; done

# The Kubernetes backend against a real API server and kubelet: the
# one-node cluster of scripts/k8s-up.sh (built once from Debian's source
# package, cached in /var/cache/llmsb-k8s), as the worker's service account.
test-k8s: $(CLI_BIN) $(TBIN)/test_integ_docker
	@LLMSB_TBIN=$(CURDIR)/$(TBIN) sh tests/run-suite.sh k8s tests/k8s/run.sh

# Unit and Docker integration tests under AddressSanitizer + UndefinedBehaviorSanitizer,
# with the eval suite's quick sets only: a shorter run for development
# (make test runs all of it under the sanitizers).
SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SANFLAGS = BUILD=build-san TBIN=bin/tests-san CLI_BIN=bin/san/llm-sandbox CFLAGS="-O1 -g $(SAN)" PIELD="-pie $(SAN)"
sanitize:
	$(MAKE) all images-current
	$(MAKE) $(SANFLAGS) bin/san/llm-sandbox
	LLMSB_BIN=$(CURDIR)/bin/san/llm-sandbox EVAL_SETS=quick $(MAKE) $(SANFLAGS) unit integration

# libFuzzer harnesses for every parser of untrusted input; each runs for
# FUZZ_SECONDS with its corpus under fuzz-corpus/ (not committed), FUZZ_JOBS
# (the cores) at a time.
FUZZERS = $(patsubst tests/fuzz/%.c,bin/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 20
FUZZ_JOBS ?= $(shell nproc)
FUZZ_SAN = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang CFLAGS="-O1 -g $(FUZZ_SAN) -Wno-unknown-warning-option" fuzzers
	@sh scripts/fuzz-all.sh $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZERS)

fuzzers: $(FUZZERS)

bin/fuzz/%: tests/fuzz/%.c $(LIB_OBJ)
	@mkdir -p bin/fuzz
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) $(ALLCFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_OBJ) $(LDLIBS)

# BENCH_N: bench_run's and bench_queue's samples (their defaults: 100, 200);
# BENCH_JOBS: bench_eval's jobs per language and set (164: all of HumanEval-X).
# bench_run's and bench_queue's output is kept for bench_eval's goals table.
BENCH_BARE_ROUNDS ?= 3
BENCH_JOBS ?= 24
# bench_dedup.sh's job file (cruxeval: CRUXEval's published generations of
# tests/eval/data/cruxeval; -: HumanEval samples with repeats, made by the bench)
BENCH_DEDUP_FILE ?= cruxeval
bench: all bin/bench/bench_run bin/bench/bench_queue bin/bench/bench_backends bin/bench/bench_confine \
       bin/bench/bench_stream bin/bench/bench_http
	bin/bench/bench_run >bin/bench/run.out; s=$$?; cat bin/bench/run.out; exit $$s
	bin/bench/bench_backends
	bin/bench/bench_queue bin/llm-sandbox >bin/bench/queue.out; s=$$?; cat bin/bench/queue.out; exit $$s
	sh bench/bench_cases.sh bin/llm-sandbox 20
	sh bench/bench_eval.sh bin/llm-sandbox $(BENCH_JOBS) bin/bench/run.out bin/bench/queue.out
	sh bench/bench_evalplus.sh bin/llm-sandbox
	sh bench/bench_dedup.sh $(BENCH_DEDUP_FILE) bin/llm-sandbox
	python3 bench/bench_bare.py bin/llm-sandbox $(BENCH_BARE_ROUNDS)
	@if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; then \
	    sh bench/bench_gvisor.sh bin/llm-sandbox && bin/bench/bench_stream; \
	else echo "bench_gvisor, bench_stream: not run: dockerd has no runtime runsc (scripts/gvisor-up.sh sets it up)"; fi
	sh bench/bench_http.sh bin/llm-sandbox bin/bench/bench_http

# The namespace filter's cost, run in containers by bench_gvisor.sh: static,
# as the agent it measures.
bin/bench/bench_confine: $(BUILD)/agent-static/bench/bench_confine.o $(BUILD)/agent-static/agent/confine.o \
                         $(COMMON_SRC:%.c=$(BUILD)/agent-static/%.o)
	@mkdir -p bin/bench
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) -static -o $@ $^ -lpthread -lm

bin/bench/%: bench/%.c $(LIB_OBJ)
	@mkdir -p bin/bench
	@$(if $(Q),echo "  LINK    $@",:)
	$(Q)$(CC) $(ALLCFLAGS) $(PIE) $(PIELD) -o $@ $< $(LIB_OBJ) $(LDLIBS)

# TEST ONLY: the CLI linked with a registry that adds the fake engine's
# backends (tests/doubles/fake_registry.c: --backend fake, --backend null)
# in place of backends/registry/registry.c; for make bench-queue, never
# installed.  The production binary knows neither name.
FAKE_CLI_OBJ = $(CLI_OBJ) $(filter-out $(BUILD)/backends/registry/registry.o,$(LIB_OBJ)) \
               $(BUILD)/tests/doubles/fake_registry.o $(UNIT_DOUBLES_OBJ)
bin/bench/llm-sandbox-fake: $(FAKE_CLI_OBJ)
	@mkdir -p bin/bench
	@$(if $(Q),echo "  LINK    $@ (test only)",:)
	$(Q)$(CC) $(PIELD) -o $@ $^ $(LDLIBS)

# The queue's ceiling: W worker processes of llm-sandbox-fake against one
# redis-server of the bench's own (port BENCH_QUEUE_PORT), N trivial jobs
# per run (bench/bench_queue_scale.c; docs/benchmarks.md).  Not in `make
# bench` nor CI: minutes, and its figures are the machine's.
BENCH_QUEUE_N ?= 100000
BENCH_QUEUE_WORKERS ?= 10 50 100 200
BENCH_QUEUE_RUNNERS ?= null fake
bench-queue: bin/bench/llm-sandbox-fake bin/bench/bench_queue_scale $(TBIN)/fake-agent
	FAKE_AGENT=$(CURDIR)/$(TBIN)/fake-agent BENCH_N="$(BENCH_QUEUE_N)" \
	    BENCH_WORKERS="$(BENCH_QUEUE_WORKERS)" BENCH_RUNNERS="$(BENCH_QUEUE_RUNNERS)" \
	    bin/bench/bench_queue_scale bin/bench/llm-sandbox-fake

images: all
	bin/llm-sandbox images build

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san build-fuzz bin fuzz-corpus

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
