# syntax=docker/dockerfile:1
# fanyi-train image (batch job), two variants (targets) from the repository root:
#   docker build -f docker/trainer.Dockerfile -t fanyi-trainer:cpu .          # default: cpu
#   docker build -f docker/trainer.Dockerfile --target gpu -t fanyi-trainer:gpu .
#   docker run -v "$PWD/data/en-zh:/data:ro" -v "$PWD/models:/models" \
#     fanyi-trainer:cpu --train=/data/train.tsv --dev=/data/dev.tsv \
#     --out=/models/en-zh --max_minutes=40
#   (GPU: add --gpus all; the NVIDIA container toolkit brings the driver.)
#   On the CPU it trains with a rank per core the container is given (its
#   cpuset, lowered to its CPU limit); tini passes SIGTERM on to fanyi-train,
#   which passes it to every rank.
#
# cpu: Debian bookworm, built by scripts/install-deps.sh and scripts/build.sh
#      exactly as the README does; runs on bookworm-slim.
# gpu: NVIDIA's CUDA image (Ubuntu 24.04, same package names for
#      install-deps.sh) with LibTorch 2.x + CUDA taken from the PyTorch wheel
#      (torch.utils.cmake_prefix_path), built by scripts/build-gpu.sh against
#      the image's own gRPC stack (install-deps.sh; DEBS_DIR empty). Keep in
#      step with docker/server.Dockerfile.
#
# The runtime stages install no packages but tini: docker/runtime-libraries.sh
# copies the programs (with SentencePiece's spm_train, which fanyi-train runs
# for subword vocabularies) and the shared libraries they load, as in
# docker/server.Dockerfile.
#
# Volumes: /data (the corpus, read-only) and /models (--out: best/, last/ and
# train_log.jsonl; checkpoints are renamed into place, so a killed job leaves
# whole checkpoints and a rerun with --resume continues from last/).
# Stages: build-gpu and gpu come first so that a plain build ends at cpu.

ARG CUDA_VERSION=12.6.3
ARG UBUNTU_VERSION=24.04
# 2.7 is the first PyTorch whose Linux wheels use the C++11 ABI, the ABI of
# the distribution's gRPC, protobuf and abseil that the binaries link too.
ARG TORCH_VERSION=2.7.1

FROM nvidia/cuda:${CUDA_VERSION}-cudnn-devel-ubuntu${UBUNTU_VERSION} AS build-gpu
ARG TORCH_VERSION
ENV DEBIAN_FRONTEND=noninteractive
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/torch \
 && /opt/torch/bin/pip install --no-cache-dir "torch==${TORCH_VERSION}"
COPY . .
# build-gpu.sh puts the wheel's torch folder first in CMAKE_PREFIX_PATH, so
# its LibTorch wins over the CPU one install-deps.sh installs (libtorch-dev).
RUN --mount=type=cache,target=/root/.cache/ccache \
    TORCH_CMAKE_PREFIX="$(/opt/torch/bin/python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')" \
    DEBS_DIR="" BUILD_DIR=build bash scripts/build-gpu.sh \
 && bash docker/runtime-libraries.sh /staging build/bin/fanyi-train \
      build/bin/fanyi-prepare build/bin/fanyi-eval spm_train \
 && mkdir -p /staging/usr/share && cp -a /usr/share/opencc /staging/usr/share/ \
 && site_packages="$(/opt/torch/bin/python -c 'import site; print(site.getsitepackages()[0])')" \
 && mkdir -p "/staging${site_packages}/torch" \
 && cp -a "${site_packages}/torch/lib" "/staging${site_packages}/torch/" \
 && cp -a "${site_packages}/nvidia" "/staging${site_packages}/"

# The wheel's libraries (libtorch_cuda, cuDNN, cuBLAS, NCCL) keep the paths
# the binaries' RPATH and their own $ORIGIN RPATHs name.
FROM nvidia/cuda:${CUDA_VERSION}-base-ubuntu${UBUNTU_VERSION} AS gpu
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
 && report=$(ldd -r /usr/local/bin/* 2>&1) \
 && ! grep -E 'not found|undefined symbol' <<<"$report" | grep -v libcuda
USER 10001:10001
VOLUME ["/data", "/models"]
ENTRYPOINT ["tini", "--", "fanyi-train", "--device=cuda"]
CMD ["--train=/data/train.tsv", "--dev=/data/dev.tsv", "--out=/models/en-zh"]

FROM debian:bookworm AS build-cpu
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh
COPY . .
RUN --mount=type=cache,target=/root/.cache/ccache \
    BUILD_TARGETS="fanyi-train fanyi-prepare fanyi-eval" bash scripts/build.sh \
 && bash docker/runtime-libraries.sh /staging build/bin/fanyi-train \
      build/bin/fanyi-prepare build/bin/fanyi-eval spm_train \
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
 && report=$(ldd -r /usr/local/bin/* 2>&1) \
 && ! grep -E 'not found|undefined symbol' <<<"$report"
USER 10001:10001
VOLUME ["/data", "/models"]
ENTRYPOINT ["tini", "--", "fanyi-train"]
CMD ["--train=/data/train.tsv", "--dev=/data/dev.tsv", "--out=/models/en-zh"]
