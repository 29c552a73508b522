#!/usr/bin/env python3
"""Checks fanyi's data-parallel training manifests (deploy/distributed/, run
by tests/deploy_lint.sh) where Kubernetes' schemas cannot:

  deploy_distributed_checks.py [--no-schema] PREPARE_YAML PYTORCHJOB_YAML
                               INDEXED_YAML CORE_OUT

PREPARE_YAML, PYTORCHJOB_YAML and INDEXED_YAML are the three kustomizations
rendered. The PyTorchJob (a custom resource) is checked against
tests/schemas/pytorchjob-kubeflow-v1.json, and its pod templates are written
to CORE_OUT as PodTemplate objects, beside the built-in kinds, for
kubernetes-validate. Then the couplings: every rank reads what
fanyi-prepare writes and writes what the servers serve, on the shared
volume; every rank resumes and has a collective timeout; the PyTorchJob's
Master and Worker run the same pod, in the container and on the port the
Training Operator looks for; the Indexed Job's world size, rank, MASTER_ADDR
and headless Service agree with each other.
"""
import json
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Where the servers read the model (deploy/base/server-deployment.yaml).
SERVED_MODEL = "/models/en-zh"
MODELS_CLAIM = "fanyi-models"

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def load(path):
    return [d for d in yaml.safe_load_all(
        pathlib.Path(path).read_text(encoding="utf-8")) if d]


def flag_value(args, name):
    for arg in args:
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
    return None


def claim_at(pod, path):
    """The PersistentVolumeClaim mounted over `path` in the first container."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for mount in pod["containers"][0].get("volumeMounts", []):
        if path.startswith(mount["mountPath"].rstrip("/") + "/"):
            return volumes[mount["name"]].get(
                "persistentVolumeClaim", {}).get("claimName")
    return None


def check_rank_pod(where, pod, prepared):
    container = pod["containers"][0]
    args = container.get("args", [])
    data = flag_value(args, "data")
    out = flag_value(args, "out")
    check(data == prepared,
          f"{where}: --data {data} is not fanyi-prepare's --out {prepared}")
    check(out == SERVED_MODEL,
          f"{where}: --out {out} is not the served model {SERVED_MODEL}")
    check("--resume" in args, f"{where}: ranks must --resume (a restarted "
          "job continues from last/)")
    check(flag_value(args, "collective_timeout_minutes") is not None,
          f"{where}: no --collective_timeout_minutes")
    for path in (data or "", out or ""):
        check(claim_at(pod, path) == MODELS_CLAIM,
              f"{where}: {path} is not on the shared {MODELS_CLAIM} claim")
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True,
          f"{where}: runs as root")


def check_pytorchjob(job, prepared, core, with_schema):
    if with_schema:
        import jsonschema  # pylint: disable=import-outside-toplevel
        schema = json.loads(
            (ROOT / "tests/schemas/pytorchjob-kubeflow-v1.json")
            .read_text(encoding="utf-8"))
        try:
            jsonschema.validate(job, schema)
        except jsonschema.ValidationError as error:
            failures.append(f"PyTorchJob: {error.message} at "
                            f"{'/'.join(map(str, error.absolute_path))}")
            return
    specs = job["spec"]["pytorchReplicaSpecs"]
    check(specs.get("Master", {}).get("replicas") == 1,
          "PyTorchJob: one Master (rank 0) is required")
    check(specs.get("Master", {}).get("template") ==
          specs.get("Worker", {}).get("template"),
          "PyTorchJob: Master and Worker pod templates differ")
    for kind, spec in specs.items():
        pod = spec["template"]["spec"]
        container = pod["containers"][0]
        check(container["name"] == "pytorch",
              f"PyTorchJob {kind}: the operator sets the rendezvous "
              "variables in the container named pytorch")
        ports = {p.get("name") for p in container.get("ports", [])}
        check("pytorchjob-port" in ports,
              f"PyTorchJob {kind}: no port named pytorchjob-port "
              "(MASTER_PORT)")
        check_rank_pod(f"PyTorchJob {kind}", pod, prepared)
        core.append({"apiVersion": "v1", "kind": "PodTemplate",
                     "metadata": {"name": f"pytorchjob-{kind.lower()}"},
                     "template": spec["template"]})


def check_indexed_job(documents, prepared):
    by_kind = {d["kind"]: d for d in documents}
    job, service = by_kind.get("Job"), by_kind.get("Service")
    if not check(job and service, "indexed-job: a Job and a Service"):
        return
    spec = job["spec"]
    pod = spec["template"]["spec"]
    env = {e["name"]: e for e in pod["containers"][0].get("env", [])}
    world = int(env.get("WORLD_SIZE", {}).get("value", "0"))
    check(spec.get("completionMode") == "Indexed",
          "indexed-job: completionMode is not Indexed")
    check(spec.get("completions") == world == spec.get("parallelism"),
          f"indexed-job: completions {spec.get('completions')}, parallelism "
          f"{spec.get('parallelism')} and WORLD_SIZE {world} differ")
    rank_from = env.get("RANK", {}).get("valueFrom", {}).get(
        "fieldRef", {}).get("fieldPath", "")
    check("batch.kubernetes.io/job-completion-index" in rank_from,
          "indexed-job: RANK is not the pod's completion index")
    subdomain = pod.get("subdomain")
    master = env.get("MASTER_ADDR", {}).get("value")
    check(master == f"{job['metadata']['name']}-0.{subdomain}",
          f"indexed-job: MASTER_ADDR {master} is not rank 0's hostname "
          f"under subdomain {subdomain}")
    check(service["metadata"]["name"] == subdomain and
          service["spec"].get("clusterIP") == "None",
          "indexed-job: the pods' subdomain is not a headless Service")
    labels = spec["template"]["metadata"].get("labels", {})
    selector = service["spec"].get("selector", {})
    check(selector and all(labels.get(k) == v for k, v in selector.items()),
          f"indexed-job: Service selector {selector} misses the pods")
    port = env.get("MASTER_PORT", {}).get("value")
    ports = {str(p["containerPort"])
             for p in pod["containers"][0].get("ports", [])}
    check(port in ports, f"indexed-job: MASTER_PORT {port} is not a "
          "container port")
    check_rank_pod("indexed-job", pod, prepared)


def main():
    arguments = sys.argv[1:]
    with_schema = "--no-schema" not in arguments
    arguments = [a for a in arguments if a != "--no-schema"]
    prepare_path, pytorchjob_path, indexed_path, core_path = arguments[:4]
    prepare = load(prepare_path)
    check([d["kind"] for d in prepare] == ["Job"], "prepare: one Job")
    prepare_pod = prepare[0]["spec"]["template"]["spec"]
    prepare_container = prepare_pod["containers"][0]
    check(prepare_container.get("command", [])[-1:] == ["fanyi-prepare"],
          "prepare: the Job does not run fanyi-prepare")
    prepared = flag_value(prepare_container.get("args", []), "out")
    check(claim_at(prepare_pod, prepared or "") == MODELS_CLAIM,
          f"prepare: --out {prepared} is not on {MODELS_CLAIM}")
    core = list(prepare)
    jobs = load(pytorchjob_path)
    check([d["kind"] for d in jobs] == ["PyTorchJob"], "pytorchjob: one "
          "PyTorchJob")
    check_pytorchjob(jobs[0], prepared, core, with_schema)
    indexed = load(indexed_path)
    check_indexed_job(indexed, prepared)
    core.extend(indexed)
    with open(core_path, "w", encoding="utf-8") as out:
        yaml.safe_dump_all(core, out)
    for failure in failures:
        print(f"deploy_lint: distributed: {failure}", file=sys.stderr)
    if not failures:
        print("  distributed: PyTorchJob schema, ranks' data and output, "
              "resume, timeouts, rendezvous (operator port, indexed ranks, "
              "headless Service): ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
