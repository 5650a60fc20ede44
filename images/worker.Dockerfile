# The llm-sandbox worker, built from the same offline Debian base as the
# sandbox images (llmsb/base:latest, made by `llm-sandbox images build`);
# with a registry, --build-arg BASE=debian:bookworm-slim works too.
ARG BASE=llmsb/base:latest
FROM ${BASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends build-essential pkg-config \
        libhiredis-dev libcurl4-openssl-dev libssl-dev libcjson-dev libarchive-dev libpcre2-dev libyaml-dev \
        libmicrohttpd-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make -j2 bin/llm-sandbox

FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends libhiredis0.14 libcurl4 \
        libssl3 libcjson1 libarchive13 libpcre2-8-0 libyaml-0-2 libmicrohttpd12 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/bin/llm-sandbox /usr/local/bin/llm-sandbox
ENTRYPOINT ["/usr/local/bin/llm-sandbox"]
CMD ["worker"]
