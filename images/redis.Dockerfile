# Redis for docker-compose.yml, from the offline Debian base (no registry).
ARG BASE=llmsb/base:latest
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /data
EXPOSE 6379
CMD ["redis-server", "--appendonly", "yes", "--appendfsync", "everysec", "--dir", "/data", \
     "--bind", "0.0.0.0", "--protected-mode", "no"]
