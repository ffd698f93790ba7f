# Roost in a container: a release build, then a Debian slim runtime with
# only the libraries roostd needs (packaging/runtime-packages, the same list
# the .deb depends on), run as a non-root user with its data in a volume.
#
#   docker build -t roost .
#   docker run -p 8080:8080 -v roost-data:/var/lib/roost roost
#   docker logs <container> | grep setup=     # the one-time console link
#
# Not built in this project's CI (it has no container engine): keep it minimal.

FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY . .
RUN apt-get update && apt-get install -y --no-install-recommends \
        libevent-dev libsqlite3-dev libpcre2-dev libsodium-dev pkg-config libvips-dev libsystemd-dev \
        libcurl4-openssl-dev libnghttp2-dev libssl-dev zlib1g-dev libjemalloc-dev libpq-dev liblua5.4-dev \
    && swift build -c release \
    && sh packaging/stage-runtime.sh .build/release/roostd /out/lib/roost

FROM debian:bookworm-slim
COPY packaging/runtime-packages /tmp/runtime-packages
RUN apt-get update \
    && apt-get install -y --no-install-recommends $(grep -v '^#' /tmp/runtime-packages | sed 's/^recommends //') \
    && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages \
    && useradd --system --user-group --home-dir /var/lib/roost --shell /usr/sbin/nologin roost \
    && install -d -m 0700 -o roost -g roost /var/lib/roost
COPY --from=build /out/lib/roost /usr/lib/roost
COPY etc/roost/roost.yaml /etc/roost/roost.yaml
RUN ln -s /usr/lib/roost/roostd /usr/bin/roostd
USER roost
ENV ROOST_DATA_DIR=/var/lib/roost ROOST_LISTEN=0.0.0.0:8080 ROOST_LOG_TARGET=stderr
VOLUME /var/lib/roost
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s \
    CMD bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080 && printf "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" >&3 && head -1 <&3 | grep -q " 200 "'
ENTRYPOINT ["/usr/bin/roostd", "serve", "--config", "/etc/roost/roost.yaml"]
