# lnbench-tui in a container, built from the sources: `docker build -t lnbench-tui .`
# works on a clean checkout wherever a registry is reachable (it pulls RUST_IMAGE and
# BASE). Where none is, package a binary built on the host instead: Dockerfile.package,
# which scripts/build-tool-image.sh uses.
#
# The tool drives the host's Docker engine, so run it with the engine's socket mounted
# and on the host network (the nodes' ports are published on the host's 127.0.0.1):
#
#   docker run --rm --network host \
#     -v /var/run/docker.sock:/var/run/docker.sock \
#     -v "$PWD/scenarios:/scenarios:ro" -v "$PWD/out:/out" \
#     lnbench-tui /scenarios/alice-pays-bob.yaml --report /out/alice-pays-bob
#
# Both images are overridable: --build-arg RUST_IMAGE=rust:1.95-bookworm (at least the
# rust-version in Cargo.toml), --build-arg BASE=debian:bookworm-slim (the same Debian
# release as the builder or newer, for glibc).
ARG RUST_IMAGE=rust:1.95-bookworm
ARG BASE=debian:bookworm-slim

FROM ${RUST_IMAGE} AS builder
# protoc: the LND gRPC client's build script generates its code with it (the Rust
# images do not carry it).
RUN apt-get update \
    && apt-get install -y --no-install-recommends protobuf-compiler \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what the build reads (.dockerignore keeps the rest out of the context).
COPY Cargo.toml Cargo.lock build.rs ./
COPY src ./src
COPY assets ./assets
COPY benches ./benches
RUN cargo build --release --locked --bin lnbench-tui \
    && cp target/release/lnbench-tui /usr/local/bin/lnbench-tui

FROM ${BASE}
COPY --from=builder /usr/local/bin/lnbench-tui /usr/local/bin/lnbench-tui
# Scenario runs write their run directories under TMPDIR.
ENV TMPDIR=/tmp
ENTRYPOINT ["/usr/local/bin/lnbench-tui"]
CMD ["--help"]
