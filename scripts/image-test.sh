#!/usr/bin/env bash
# Builds fanyi's images (docker/server.Dockerfile, docker/trainer.Dockerfile)
# with podman and checks them as a user would run them. Exits non-zero when a
# step or a check fails. Too slow for CI: a cold run builds LibTorch-linked
# binaries twice (docs/deploy.md gives its time).
#
#   scripts/image-test.sh          # the cpu images
#   scripts/image-test.sh --gpu    # the gpu images, on the GPU if podman can give one
#
# The trainer image trains for a minute into a host folder, the server image
# serves that checkpoint. Then, for the cpu images, plays deploy/overlays/cpu
# with `podman kube play`: the trainer Job's pod and the server Deployment,
# with the flags, ports, volumes and security contexts they give
# (scripts/kube_play_manifests.py says what podman does not run;
# tests/deploy_lint.sh checks those).
# Run as root on a Debian 12 host. Installs podman, runc and mmdebstrap;
# where no image registry can be reached, makes the Debian base images the
# Dockerfiles name (debian:bookworm, debian:bookworm-slim) from the Debian
# archive with mmdebstrap; the gpu images build on the same bases. With
# --gpu, the containers get the GPU where the NVIDIA Container Toolkit's CDI
# specification gives it (`--device nvidia.com/gpu=all`), and must run on
# it; on a host without a GPU the same checks run on the CPU, where the
# server must say that it serves on the CPU. WORK_DIR (a new temporary
# directory) holds what the checks write.
set -euo pipefail
cd "$(dirname "$0")/.."

target=cpu
case "${1:-}" in
  "") ;;
  --gpu) target=gpu ;;
  *) echo "usage: $0 [--gpu]" >&2; exit 2 ;;
esac
server_image=fanyi-server:$target
trainer_image=fanyi-trainer:$target

work_dir="${WORK_DIR:-$(mktemp -d /tmp/fanyi-image-test.XXXXXX)}"
mkdir -p "$work_dir"
echo "image-test: working in $work_dir"

step() { echo "== $(date +%H:%M:%S) $*"; }
fail() { echo "image-test: FAILED: $*" >&2; exit 1; }

step "installing podman, runc, mmdebstrap"
# catatonit: the pause process of the pods `podman kube play` makes;
# kubectl (kubernetes-client) renders the manifests; python3-yaml for
# scripts/kube_play_manifests.py.
packages=(podman runc mmdebstrap uidmap catatonit python3-yaml curl)
command -v kubectl >/dev/null || packages+=(kubernetes-client)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "  installing ${missing[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# podman's defaults fail on some hosts; settings only where they do, in a
# file of this run's own (CONTAINERS_CONF), never the host's configuration.
conf="$work_dir/containers.conf"
: >"$conf"
engine=()
# crun (podman's default runtime when both are there) refuses hosts with
# hybrid cgroups (v1 controllers beside a v2 mount); runc runs there.
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
  engine+=('runtime = "runc"')
fi
# Without systemd as init there is no systemd cgroup manager, nor journald.
if [ ! -d /run/systemd/system ]; then
  engine+=('cgroup_manager = "cgroupfs"' 'events_logger = "file"')
fi
if [ "${#engine[@]}" -gt 0 ]; then
  printf '[engine]\n' >>"$conf"
  printf '%s\n' "${engine[@]}" >>"$conf"
fi
# Containers get podman's default ulimits (nofile 1048576 and a process
# limit above this host's), which runc cannot set where the host's hard
# limits are lower ("error setting rlimit ... operation not permitted"):
# cap them. On the VMs this was written on (hard limits nofile 20000, nproc
# 96365), runc was refused any process limit above 32768.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
if [ "$nofile" != unlimited ] && [ "$nofile" -lt 1048576 ]; then
  if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
  printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
    "$nofile" "$nofile" "$nproc" "$nproc" >>"$conf"
fi
export CONTAINERS_CONF="$conf"
echo "containers.conf for this run:"
sed 's/^/  /' "$conf"

step "base images"
# Whether image $1 is here, or pulled now.
have_image() {
  podman image exists "$1" || timeout 600 podman pull -q "$1" >/dev/null 2>&1
}
# Debian's own images when a registry answers; otherwise the same release
# made from the archive as the official images are: minbase (their package
# set), /usr merged by mmdebstrap's hook rather than the usrmerge package
# (which brings Perl), apt keeping no package caches, and for slim no
# documentation, manuals or translations but the copyright files.
for tag in bookworm bookworm-slim; do
  image="docker.io/library/debian:$tag"
  if have_image "$image"; then
    continue
  fi
  echo "  no registry: $image made from the Debian archive (mmdebstrap)"
  options=(--variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    --aptopt='Dir::Cache::pkgcache ""' --aptopt='Dir::Cache::srcpkgcache ""')
  if [ "$tag" = bookworm-slim ]; then
    for folder in doc groff info linda lintian/overrides locale man; do
      options+=(--dpkgopt="path-exclude=/usr/share/$folder/*")
    done
    options+=(--dpkgopt='path-include=/usr/share/doc/*/copyright')
  fi
  log="$work_dir/mmdebstrap-$tag.log"
  mmdebstrap --quiet "${options[@]}" --format=tar bookworm - 2>"$log" |
    podman import --quiet - "$image" >/dev/null ||
    { tail "$log" >&2; fail "making $image with mmdebstrap"; }
done
podman run --rm docker.io/library/debian:bookworm true ||
  fail "podman cannot run a container with $conf"

# The device the server must report: the GPU where podman gives containers
# one, else the CPU.
run_args=()
device=cpu
if [ "$target" = gpu ]; then
  step "the GPU"
  gpu=(--device nvidia.com/gpu=all)
  if podman run --rm "${gpu[@]}" docker.io/library/debian:bookworm \
    nvidia-smi -L >"$work_dir/gpu.log" 2>&1; then
    run_args=("${gpu[@]}")
    device=cuda
    sed 's/^/  containers get /' "$work_dir/gpu.log"
  elif nvidia-smi -L >/dev/null 2>&1; then
    fail "this host has a GPU, but podman cannot give it to a container: install the NVIDIA Container Toolkit and write its CDI specification (nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml)"
  else
    echo "  no GPU on this host: the gpu images are checked on the CPU"
  fi
fi

# The gpu images' build installs wheels with pip, which trusts its own
# copy of the certificate authorities, not the system's. Where the host
# trusts one more (a proxy that inspects TLS), pip in the build must too:
# the Dockerfiles take the host's bundle as an optional build secret.
build_args=()
if [ "$target" = gpu ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  build_args+=(--secret "id=ca-certificates,src=/etc/ssl/certs/ca-certificates.crt")
fi
# --format docker: the OCI format has no SHELL or HEALTHCHECK, which the
# Dockerfiles use.
build() {
  local dockerfile=$1 tag=$2 started
  started=$(date +%s)
  podman build --format docker --target "$target" -f "docker/$dockerfile" \
    "${build_args[@]}" -t "$tag" . >"$work_dir/build-$tag.log" 2>&1 ||
    { tail -30 "$work_dir/build-$tag.log" >&2; fail "building $tag"; }
  echo "  $tag: built in $(($(date +%s) - started)) s," \
    "$(podman image inspect --format '{{.Size}}' "$tag" |
       awk '{printf "%.0f MB", $1 / 1e6}')"
}
step "building the images"
build server.Dockerfile "$server_image"
build trainer.Dockerfile "$trainer_image"
# podman's own complaints (here: no systemd to schedule the images' health
# checks) go to podman.log.
for image in "$server_image" "$trainer_image"; do
  identity=$(podman run --rm --entrypoint id "$image" 2>>"$work_dir/podman.log")
  [ "$identity" = "uid=10001(fanyi) gid=10001(fanyi) groups=10001(fanyi)" ] ||
    fail "$image runs as $identity, not the user and group fanyi (10001)"
done
echo "  both run as uid=10001(fanyi) gid=10001(fanyi)"
if [ "$target" = gpu ]; then
  # As far as a host without a GPU can check that the binaries find CUDA:
  # the loader finds LibTorch's CUDA library and the CUDA runtime, cuBLAS
  # and cuDNN it needs (the driver's libcuda comes with the GPU).
  for image in "$server_image" "$trainer_image"; do
    program=fanyi-server
    [ "$image" = "$trainer_image" ] && program=fanyi-train
    libraries=$(podman run --rm --entrypoint ldd "$image" \
      "/usr/local/bin/$program" 2>>"$work_dir/podman.log")
    for library in libtorch_cuda libcudart libcublas libcudnn; do
      grep -Eq "^\s*$library\.so[.0-9]* => /" <<<"$libraries" ||
        fail "$program in $image does not find $library"
    done
  done
  echo "  fanyi-server and fanyi-train find libtorch_cuda, CUDA's runtime, cuBLAS and cuDNN"
fi

data_dir=../shared/data/en-zh
[ -f "$data_dir/train_mini.tsv" ] || data_dir=$(bash scripts/get-data.sh)
train=train.tsv dev=dev.tsv
[ -f "$data_dir/train_mini.tsv" ] && train=train_mini.tsv dev=dev_mini.tsv
data_dir=$(realpath "$data_dir")

step "trainer container: one minute of training into a host folder"
# The images run as 10001:10001, not root: the host folder the trainer
# writes must belong to that user (docs/deploy.md).
models="$work_dir/models"
mkdir -p "$models"
chown 10001:10001 "$models"
# As the trainer Job runs it: read-only root filesystem, /tmp writable. A
# subword source side runs the image's spm_train, and the server then
# serves a SentencePiece model.
podman run --rm --read-only --tmpfs /tmp "${run_args[@]}" \
  -v "$data_dir:/data:ro" -v "$models:/models" "$trainer_image" \
  --train="/data/$train" --dev="/data/$dev" --out=/models/en-zh \
  --source_subwords=400 --max_minutes=1 --threads=2 \
  >"$work_dir/trainer.log" 2>&1 ||
  { tail -20 "$work_dir/trainer.log" >&2; fail "the trainer container"; }
[ -f "$models/en-zh/best/model.pt" ] || fail "no checkpoint in $models/en-zh/best"
[ -f "$models/en-zh/best/src_subwords.model" ] ||
  fail "no source subword model in $models/en-zh/best (spm_train)"
owner=$(stat -c %u:%g "$models/en-zh/best/model.pt")
[ "$owner" = 10001:10001 ] || fail "the checkpoint belongs to $owner, not 10001:10001"
echo "  $(grep -E '^epoch' "$work_dir/trainer.log" | tail -1)"
echo "  checkpoint on the host: $models/en-zh/best, owned by $owner"

# Runs the health check after $1 (a container) until it answers SERVING,
# for two minutes at most; fails with the container's log if it exits or
# never does.
wait_serving() {
  local container=$1 running
  shift
  for _ in $(seq 1 240); do
    "$@" >/dev/null 2>&1 && return 0
    running=$(podman inspect --format '{{.State.Running}}' "$container" \
      2>>"$work_dir/podman.log")
    [ "$running" = true ] ||
      { podman logs "$container" >&2; fail "$container exited"; }
    sleep 0.5
  done
  podman logs "$container" >&2
  fail "$container never answered SERVING"
}

# fanyi-client from the server image, on the host's network: it reaches the
# ports published on 127.0.0.1 as an application on the host would.
client() {
  podman run --rm --network host --health-cmd=none \
    --entrypoint fanyi-client "$server_image" "$@"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
grpc_port=$(free_port)
metrics_port=$(free_port)
http_port=$(free_port)
server=fanyi-image-test-server
podman rm -f "$server" >/dev/null 2>&1 || true
cleanup() {
  podman rm -f "$server" >/dev/null 2>&1 || true
  if [ -d "$work_dir/kube" ]; then
    for manifest in server trainer volumes; do
      podman kube down "$work_dir/kube/$manifest.yaml" >/dev/null 2>&1 || true
    done
  fi
}
trap cleanup EXIT

step "server container: the checkpoint read-only, root filesystem read-only"
started=$(date +%s.%N)
# Without systemd, podman cannot schedule the image's health check (it logs
# errors about the timer to podman.log): this script runs the check itself.
podman run -d --name "$server" --read-only --tmpfs /tmp "${run_args[@]}" \
  -p "127.0.0.1:$grpc_port:50051" -p "127.0.0.1:$metrics_port:9464" \
  -p "127.0.0.1:$http_port:5000" \
  -v "$models/en-zh:/model:ro" "$server_image" >/dev/null \
  2>>"$work_dir/podman.log" ||
  { tail "$work_dir/podman.log" >&2; fail "podman run of the server"; }
# The image's own HEALTHCHECK command (grpc.health.v1 Check); podman runs
# it on demand where no systemd timer schedules it.
wait_serving "$server" podman healthcheck run "$server"
healthy=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
echo "  SERVING (image health check) ${healthy} s after podman run"
# What it says of its device, in its own words (and LibTorch's, whose
# warnings start with [W).
podman logs "$server" >"$work_dir/server.log" 2>&1
grep -q " on $device" "$work_dir/server.log" ||
  { cat "$work_dir/server.log" >&2; fail "the server's log does not say it serves on $device"; }
if [ "$target" = gpu ] && [ "$device" = cpu ]; then
  grep -q "no CUDA device is visible" "$work_dir/server.log" ||
    { cat "$work_dir/server.log" >&2; fail "the gpu image's server does not say that it sees no GPU"; }
fi
grep -E "^fanyi-server: listening|^\[W|CUDA|GPU" "$work_dir/server.log" |
  sed 's/^/  log: /'

translation=$(client --server "127.0.0.1:$grpc_port" "I love you.") ||
  fail "fanyi-client through the published port"
[ -n "$translation" ] || fail "an empty translation"
echo "  fanyi-client: I love you. -> $translation"
http_translation=$(curl -fsS "http://127.0.0.1:$http_port/translate" \
  -d q="I love you." -d source=en -d target=zh) ||
  fail "HTTP /translate through the published port"
grep -q '"translatedText"' <<<"$http_translation" ||
  fail "HTTP /translate answered $http_translation"
echo "  HTTP /translate: $http_translation"
curl -fsS "http://127.0.0.1:$http_port/" | grep -q '<title>fanyi' ||
  fail "the page at / through the published port"
printf '1\n00:00:01,000 --> 00:00:02,000\nI love you.\n' >"$work_dir/talk.srt"
file_url=$(curl -fsS "http://127.0.0.1:$http_port/translate_file" \
  -F "file=@$work_dir/talk.srt" -F source=en -F target=zh |
  sed -n 's/.*"translatedFileUrl":"\([^"]*\)".*/\1/p')
[ -n "$file_url" ] || fail "HTTP /translate_file through the published port"
translated_srt=$(curl -fsS "$file_url") || fail "downloading $file_url"
grep -q -- '00:00:01,000 --> 00:00:02,000' <<<"$translated_srt" ||
  fail "the translated subtitles lost their timing: $translated_srt"
echo "  the page at / answers; /translate_file kept the subtitle's timing"
metrics=$(curl -fsS "http://127.0.0.1:$metrics_port/metrics") ||
  fail "scraping /metrics"
grep -q '^fanyi_requests_total{code="OK",method="Translate",model="en-zh"} 1' <<<"$metrics" ||
  fail "/metrics does not count the translation"
grep -q "^fanyi_model_info{.*device=\"$device" <<<"$metrics" ||
  fail "the server does not run on $device: $(grep '^fanyi_model_info' <<<"$metrics")"
echo "  /metrics: $(grep -c '^fanyi_' <<<"$metrics") fanyi_ samples, model on $device"
user=$(podman top "$server" huser user 2>>"$work_dir/podman.log" |
  awk 'NR == 2 {print $1 ":" $2}')
[ "$user" = "10001:fanyi" ] || fail "the server runs as $user, not 10001:fanyi"
echo "  process user: $user (host uid, in-container name)"

stopped=$(date +%s.%N)
podman stop -t 60 "$server" >/dev/null 2>>"$work_dir/podman.log" ||
  { tail "$work_dir/podman.log" >&2; fail "podman stop"; }
took=$(python3 -c "import time; print(f'{time.time() - $stopped:.1f}')")
code=$(podman inspect --format '{{.State.ExitCode}}' "$server")
[ "$code" = 0 ] || { podman logs "$server" | tail >&2; fail "exit status $code after SIGTERM"; }
echo "  podman stop (SIGTERM): exit status 0 after ${took} s"

if [ "$target" = gpu ]; then
  # A pod's nvidia.com/gpu limit is a device plugin's resource, which
  # podman kube play does not turn into a device.
  echo "image-test: all checks passed (deploy/overlays/gpu not played:" \
    "podman kube play gives pods no GPU; tests/deploy_lint.sh checks it)"
  exit 0
fi

step "the Kubernetes manifests (deploy/overlays/cpu), played by podman"
kube="$work_dir/kube"
mkdir -p "$kube"
kubectl kustomize deploy/overlays/cpu >"$kube/rendered.yaml" 2>/dev/null
grpc_port=$(free_port)
metrics_port=$(free_port)
http_port=$(free_port)
echo "  not played by podman, checked by tests/deploy_lint.sh instead:"
/usr/bin/python3 scripts/kube_play_manifests.py "$kube/rendered.yaml" \
  "$kube" "$grpc_port" "$metrics_port" "$http_port" | sed 's/^/    /'
for manifest in server trainer volumes; do
  podman kube down "$kube/$manifest.yaml" >/dev/null 2>&1 || true
done
podman volume rm -f fanyi-data fanyi-models >/dev/null 2>&1 || true
podman kube play "$kube/volumes.yaml" >/dev/null
# The corpus into fanyi-data, as an operator copies it in.
podman run --rm -v fanyi-data:/data -v "$data_dir:/corpus:ro" \
  docker.io/library/debian:bookworm \
  sh -c "cp /corpus/$train /data/train.tsv && cp /corpus/$dev /data/dev.tsv"
# The Job's pod, as it is but for a one-minute budget; every flag it passes
# must parse, or the trainer exits non-zero here.
podman kube play "$kube/trainer.yaml" >/dev/null 2>>"$work_dir/podman.log" ||
  { tail "$work_dir/podman.log" >&2; fail "podman kube play of the trainer Job's pod"; }
code=$(podman wait fanyi-train-trainer)
podman logs fanyi-train-trainer >"$work_dir/kube-trainer.log" 2>&1
[ "$code" = 0 ] ||
  { tail -20 "$work_dir/kube-trainer.log" >&2; fail "the trainer Job's pod exited $code"; }
echo "  trainer Job's pod: exit status 0; $(grep -E '^epoch' "$work_dir/kube-trainer.log" | tail -1 | cut -c1-60)..."

podman kube play "$kube/server.yaml" >/dev/null 2>>"$work_dir/podman.log" ||
  { tail "$work_dir/podman.log" >&2; fail "podman kube play of the server Deployment"; }
container=$(podman ps --filter label=app.kubernetes.io/name=fanyi-server \
  --format '{{.Names}}' 2>>"$work_dir/podman.log" | grep -v infra | head -1)
[ -n "$container" ] || fail "no server container from the Deployment"
# The probes' check (grpc.health.v1 Check on the gRPC port), run in the pod.
wait_serving "$container" \
  podman exec "$container" fanyi-client --health --timeout_ms=3000
translation=$(client --server "127.0.0.1:$grpc_port" "I love you.") ||
  fail "fanyi-client through the Deployment's gRPC port"
curl -fsS "http://127.0.0.1:$metrics_port/metrics" | grep -q '^fanyi_model_info' ||
  fail "/metrics through the Deployment's metrics port"
curl -fsS "http://127.0.0.1:$http_port/health" | grep -q '"ok"' ||
  fail "HTTP /health through the Deployment's HTTP port"
echo "  server Deployment: SERVING, I love you. -> $translation, /metrics scraped, HTTP /health ok"
podman kube down "$kube/server.yaml" >/dev/null 2>>"$work_dir/podman.log"

echo "image-test: all checks passed"
