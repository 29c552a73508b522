# fanyi-server on the CPU: Debian bookworm, built with the same
# scripts/install-deps.sh and scripts/build.sh that the README uses.
#   docker build -f docker/server.Dockerfile -t fanyi-server .
#   docker run -p 50051:50051 -p 9464:9464 -v $PWD/models/demo:/model fanyi-server
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh
COPY . .
RUN bash scripts/build.sh

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libtorch1.13 libopenblas0-pthread libgrpc++1.51 libprotobuf32 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 fanyi
COPY --from=build /src/build/bin/fanyi-server /src/build/bin/fanyi-client /usr/local/bin/
USER fanyi
VOLUME /model
EXPOSE 50051 9464
# SIGTERM drains queued and running requests, then exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["fanyi-server", "--model_dir", "/model", \
            "--listen", "0.0.0.0:50051", "--metrics_listen", "0.0.0.0:9464"]
