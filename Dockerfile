# syntax=docker/dockerfile:1
# Images of the topograph fleet, one target per binary:
#   docker build --target render  -t topograph/render:dev  .
#   docker build --target applier -t topograph/applier:dev .
#   docker build --target gateway -t topograph/gateway:dev .
#   docker build --target kube    -t topograph/kube:dev    .   (demo management cluster)
#   docker build --target tools   -t topograph/tools:dev   .   (CLI + kubectl, seeding)
# One builder stage compiles every binary once; each runtime stage copies one of them
# onto a slim Debian with a non-root user. No Docker engine runs on the development or
# CI machines: tests/deploy.rs keeps this file, docker-compose.yml and k8s/ in step
# with what the binaries accept.

ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm

FROM rust:${RUST_VERSION}-slim-${DEBIAN_RELEASE} AS builder
WORKDIR /src
# Small images: no debug info (the workspace's release profile keeps some for
# profiling) and symbols stripped.
ENV CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
        -p topograph-render -p topograph-applier -p topograph-gateway \
        -p topograph-kube -p topograph-cli \
    && mkdir -p /out \
    && cp target/release/topograph-render target/release/topograph-applier \
          target/release/topograph-gateway target/release/topograph-kube \
          target/release/topograph /out/

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
# CA certificates for TLS to management clusters and managed Redis; nothing else.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin topograph
USER 10001:10001

FROM runtime AS render
COPY --from=builder /out/topograph-render /usr/local/bin/topograph-render
EXPOSE 50051 9090
ENTRYPOINT ["/usr/local/bin/topograph-render"]

FROM runtime AS applier
COPY --from=builder /out/topograph-applier /usr/local/bin/topograph-applier
EXPOSE 9091
ENTRYPOINT ["/usr/local/bin/topograph-applier"]

FROM runtime AS gateway
COPY --from=builder /out/topograph-gateway /usr/local/bin/topograph-gateway
EXPOSE 50052 9092
ENTRYPOINT ["/usr/local/bin/topograph-gateway"]

FROM runtime AS kube
COPY --from=builder /out/topograph-kube /usr/local/bin/topograph-kube
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/topograph-kube"]

FROM runtime AS tools
USER root
# Debian's kubectl, the one the tests use against topograph-kube.
RUN apt-get update \
    && apt-get install -y --no-install-recommends kubernetes-client \
    && rm -rf /var/lib/apt/lists/*
USER 10001:10001
COPY --from=builder /out/topograph /usr/local/bin/topograph
COPY examples /usr/share/topograph/examples
COPY deploy/compose/seed.sh /usr/local/bin/topograph-seed
ENTRYPOINT ["/usr/local/bin/topograph"]
