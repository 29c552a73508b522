# syntax=docker/dockerfile:1
# fanyi-server image, two variants (targets) from the repository root:
#   docker build -f docker/server.Dockerfile -t fanyi-server:cpu .          # default: cpu
#   docker build -f docker/server.Dockerfile --target gpu -t fanyi-server:gpu .
#   docker run --stop-timeout 60 -p 50051:50051 -p 5000:5000 -p 9464:9464 \
#     -v "$PWD/models/demo:/model:ro" fanyi-server:cpu [--max_queue=256 ...]
#   (GPU: add --gpus all; the NVIDIA container toolkit brings the driver.)
#
# cpu: Debian bookworm, built by scripts/install-deps.sh and scripts/build.sh
#      exactly as the README does; runs on bookworm-slim.
# gpu: the same Debian bookworm, with LibTorch 2.x + CUDA taken from PyTorch's
#      CUDA wheel on PyPI and the nvidia-* wheels it depends on, built by
#      scripts/build-gpu.sh against the image's own gRPC stack
#      (install-deps.sh; DEBS_DIR empty), as hosts without apt build it from
#      scripts/fetch-gpu-debs.sh's .deb files; runs on bookworm-slim with
#      the wheels' libraries. Without a GPU it serves on the CPU.
#
# The runtime stages install no packages but tini: docker/runtime-libraries.sh
# copies the programs and the shared libraries they load (without the ones
# Debian's LibTorch links and never calls: OpenCV, FFmpeg, GDAL, Qt, ...),
# and the build fails if `ldd -r` finds a library or a symbol missing.
#
# The model is a volume (/model): a checkpoint directory or a training output
# directory whose best/ is served. The server drains on SIGTERM (new calls get
# UNAVAILABLE, queued and running texts finish) and exits 0, so the stop
# timeout must exceed the drain: `docker run --stop-timeout 60`, compose's
# stop_grace_period, Kubernetes' terminationGracePeriodSeconds (deploy/).
# Stages: build-gpu and gpu come first so that a plain build ends at cpu
# (BuildKit builds only the stages the target needs).

# PyTorch's Linux wheel on PyPI: 2.11.0 is a CUDA 13.0 build with the C++11
# ABI, the ABI of the distribution's gRPC, protobuf and abseil that the
# binaries link too (2.7 was the first such wheel). Its CUDA libraries come
# as the nvidia-* wheels it depends on.
ARG TORCH_VERSION=2.11.0
# The CUDA compiler, from NVIDIA's wheels of the same CUDA release as the
# wheel's runtime: nvcc (nvidia-cuda-nvcc), cicc (nvidia-nvvm), the crt
# headers (nvidia-cuda-crt) and CCCL's headers (nvidia-cuda-cccl). The
# TorchConfig.cmake of a CUDA wheel needs a toolkit of its CUDA major
# version; fanyi compiles no CUDA code of its own.
ARG CUDA_NVCC_VERSION=13.0.88
ARG CUDA_CCCL_VERSION=13.0.85

FROM debian:bookworm AS build-gpu
ARG TORCH_VERSION
ARG CUDA_NVCC_VERSION
ARG CUDA_CCCL_VERSION
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh
# A CUDA toolkit made of wheels: the CUDA 13 wheels all install into one
# folder, site-packages/nvidia/cu13, laid out as a toolkit's root (bin/nvcc,
# nvvm/bin/cicc, include/, lib/), where nvcc's own nvcc.profile looks.
# Links complete it: lib64 (nvcc.profile links from lib64), and the
# unversioned libcudart.so and libnvrtc.so that CMake's FindCUDA,
# FindCUDAToolkit and TorchConfig.cmake look for. /opt/cuda names that root.
# pip trusts its own copy of the certificate authorities. Behind a proxy that
# inspects TLS, give it the host's as the optional build secret
# ca-certificates, which no layer keeps:
#   --secret id=ca-certificates,src=/etc/ssl/certs/ca-certificates.crt
# hadolint ignore=DL3008
RUN --mount=type=secret,id=ca-certificates \
    apt-get update \
 && apt-get install -y --no-install-recommends python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/torch \
 && if [ -s /run/secrets/ca-certificates ]; then \
      export PIP_CERT=/run/secrets/ca-certificates; \
    fi \
 && /opt/torch/bin/pip install --no-cache-dir "torch==${TORCH_VERSION}" \
      "nvidia-cuda-nvcc==${CUDA_NVCC_VERSION}" "nvidia-nvvm==${CUDA_NVCC_VERSION}" \
      "nvidia-cuda-crt==${CUDA_NVCC_VERSION}" "nvidia-cuda-cccl==${CUDA_CCCL_VERSION}" \
 && site_packages="$(/opt/torch/bin/python -c 'import site; print(site.getsitepackages()[0])')" \
 && toolkit="${site_packages}/nvidia/cu${CUDA_NVCC_VERSION%%.*}" \
 && ln -s lib "${toolkit}/lib64" \
 && for library in cudart nvrtc; do \
      ln -s "$(basename "$(echo "${toolkit}/lib/lib${library}.so".[0-9]*)")" \
        "${toolkit}/lib/lib${library}.so" || exit 1; \
    done \
 && ln -s "${toolkit}" /opt/cuda \
 && /opt/cuda/bin/nvcc --version
ENV PATH=/opt/cuda/bin:$PATH CUDA_PATH=/opt/cuda
COPY . .
# build-gpu.sh puts the wheel's torch folder first in CMAKE_PREFIX_PATH, so
# its LibTorch wins over the CPU one install-deps.sh installs (libtorch-dev).
# The runtime stage gets torch/lib but for libtorch_python (Python's), and
# the shared libraries of each nvidia/*/lib folder, all of which libtorch_cuda
# or its libraries name (cuDNN, cuBLAS, NCCL, cuSPARSELt, NVSHMEM, ...), but
# for nvcc's libnvvm: no compiler, headers or static libraries. The link
# /opt/cuda comes too: the binaries' RPATH names /opt/cuda/lib, where CMake
# found the CUDA runtime they load.
RUN --mount=type=cache,target=/root/.cache/ccache \
    TORCH_CMAKE_PREFIX="$(/opt/torch/bin/python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
    DEBS_DIR="" BUILD_DIR=build TARGETS="fanyi-server fanyi-client fanyi-keys fanyi-pdf-text" \
    bash scripts/build-gpu.sh \
 && bash docker/runtime-libraries.sh /staging build/bin/fanyi-server build/bin/fanyi-client build/bin/fanyi-keys build/bin/fanyi-pdf-text \
 && mkdir -p /staging/usr/share && cp -a /usr/share/opencc /staging/usr/share/ \
 && site_packages="$(/opt/torch/bin/python -c 'import site; print(site.getsitepackages()[0])')" \
 && mkdir -p "/staging${site_packages}/torch" \
 && cp -a "${site_packages}/torch/lib" "/staging${site_packages}/torch/" \
 && rm "/staging${site_packages}/torch/lib/libtorch_python.so" \
 && for lib_dir in "${site_packages}"/nvidia/*/lib; do \
      mkdir -p "/staging${lib_dir}" \
      && find "${lib_dir}" -maxdepth 1 -type f -name '*.so*' ! -name 'libnvvm.so*' \
           -exec cp -a -t "/staging${lib_dir}" {} + \
      || exit 1; \
    done \
 && cp -a /opt/cuda /staging/opt/

# The wheels' libraries keep the paths the binaries' RPATH and their own
# $ORIGIN RPATHs name.
FROM debian:bookworm-slim AS gpu
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 fanyi \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin fanyi
COPY --from=build-gpu /staging/ /
# The driver's libcuda comes from the host when the container starts.
RUN ldconfig \
 && report=$(ldd -r /usr/local/bin/fanyi-server /usr/local/bin/fanyi-client /usr/local/bin/fanyi-keys /usr/local/bin/fanyi-pdf-text 2>&1) \
 && ! grep -E 'not found|undefined symbol' <<<"$report" | grep -v libcuda
USER 10001:10001
VOLUME ["/model"]
EXPOSE 50051 5000 9464
# SIGTERM drains queued and running requests, then the server exits 0;
# tini (PID 1) forwards it and passes the exit status on.
STOPSIGNAL SIGTERM
# fanyi-client --health asks the standard grpc.health.v1 service, which
# answers without queueing behind traffic.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["fanyi-client", "--health", "--timeout_ms=3000"]
# --device is left at the server's default, auto: the GPU when the container
# is given one, else the CPU (the log's "on cpu" says which). Kubernetes'
# deploy/overlays/gpu asks for --device=cuda, which fails without a GPU.
ENTRYPOINT ["tini", "--", "fanyi-server", "--listen=0.0.0.0:50051", \
            "--http_listen=0.0.0.0:5000", "--metrics_listen=0.0.0.0:9464"]
CMD ["--model_dir=/model"]

FROM debian:bookworm AS build-cpu
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh
COPY . .
RUN --mount=type=cache,target=/root/.cache/ccache \
    BUILD_TARGETS="fanyi-server fanyi-client fanyi-keys fanyi-pdf-text" bash scripts/build.sh \
 && bash docker/runtime-libraries.sh /staging build/bin/fanyi-server build/bin/fanyi-client build/bin/fanyi-keys build/bin/fanyi-pdf-text \
 && mkdir -p /staging/usr/share && cp -a /usr/share/opencc /staging/usr/share/

FROM debian:bookworm-slim AS cpu
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 fanyi \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin fanyi
# OpenBLAS (pthreads) is the BLAS the build stage's alternative chose, the one
# docs/design.md measured; OpenCC's dictionaries convert Chinese scripts.
COPY --from=build-cpu /staging/ /
RUN ldconfig \
 && report=$(ldd -r /usr/local/bin/fanyi-server /usr/local/bin/fanyi-client /usr/local/bin/fanyi-keys /usr/local/bin/fanyi-pdf-text 2>&1) \
 && ! grep -E 'not found|undefined symbol' <<<"$report"
USER 10001:10001
VOLUME ["/model"]
EXPOSE 50051 5000 9464
# SIGTERM drains queued and running requests, then the server exits 0;
# tini (PID 1) forwards it and passes the exit status on.
STOPSIGNAL SIGTERM
# fanyi-client --health asks the standard grpc.health.v1 service, which
# answers without queueing behind traffic.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["fanyi-client", "--health", "--timeout_ms=3000"]
ENTRYPOINT ["tini", "--", "fanyi-server", "--listen=0.0.0.0:50051", \
            "--http_listen=0.0.0.0:5000", "--metrics_listen=0.0.0.0:9464"]
CMD ["--model_dir=/model"]
