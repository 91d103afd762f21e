# lnbench-tui in a container. It drives the host's Docker engine, so run it with the
# engine's socket mounted and on the host network (the nodes' ports are published on the
# host's 127.0.0.1):
#
#   docker run --rm --network host \
#     -v /var/run/docker.sock:/var/run/docker.sock \
#     -v "$PWD/scenarios:/scenarios:ro" -v "$PWD/out:/out" \
#     lnbench-tui:dev /scenarios/alice-pays-bob.yaml --report /out/alice-pays-bob
#
# Build with `scripts/build-tool-image.sh`, which compiles the release binary on the host
# first (this file only packages it) and, where no registry is reachable, makes the Debian
# base image locally. Any Debian bookworm (or newer) base works: BASE=debian:bookworm-slim.
ARG BASE=debian:bookworm-slim
FROM ${BASE}
COPY target/release/lnbench-tui /usr/local/bin/lnbench-tui
# Scenario runs write their run directories under TMPDIR.
ENV TMPDIR=/tmp
ENTRYPOINT ["/usr/local/bin/lnbench-tui"]
CMD ["--help"]
