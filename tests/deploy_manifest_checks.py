#!/usr/bin/env python3
"""Checks what schemas cannot see in fanyi's rendered Kubernetes manifests
(tests/deploy_lint.sh runs it once per overlay), and splits the manifests for
the schema validator.

  deploy_manifest_checks.py OVERLAY RENDERED_YAML CORE_OUT RULES_OUT

Writes the built-in Kubernetes kinds to CORE_OUT (for kubernetes-validate) and
checks the two Prometheus Operator custom resources, which no offline
Kubernetes schema covers, here: their apiVersion, the PrometheusRule's groups
against deploy/prometheus/rules.yml (which promtool checks), the
ServiceMonitor's selector and port against the Service. Then the couplings:
the queue alert's threshold against the Deployment's --max_queue, gRPC probes
on the gRPC port, a grace period longer than the drain, GPUs only in the gpu
overlay, the trainer writing where the server reads, every fanyi_* metric
named in the rules and the dashboard being one the server exports (docs/metrics.md's
table); in an overlay with Redis (its name ends in -redis), the server's
--redis_url naming the Redis Service's name and port, which reach its
container. Writes every PromQL expression of the dashboard as recording rules to
RULES_OUT so that promtool parses them too.
"""
import json
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
CUSTOM_KINDS = {("monitoring.coreos.com/v1", "ServiceMonitor"),
                ("monitoring.coreos.com/v1", "PrometheusRule")}
EXPECTED_KINDS = sorted(["Deployment", "Service", "HorizontalPodAutoscaler",
                         "Job", "PersistentVolumeClaim",
                         "PersistentVolumeClaim", "ServiceMonitor",
                         "PrometheusRule"])
GRPC_PORT = 50051
HTTP_PORT = 5000
METRICS_PORT = 9464
PORTS = {"grpc": GRPC_PORT, "http": HTTP_PORT, "metrics": METRICS_PORT}
# fanyi-client's default deadline; queued texts end by theirs.
CLIENT_DEADLINE_S = 10

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def flag_value(args, name):
    """The value of --name=value in a container's args, or None."""
    for arg in args:
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
    return None


def exported_metrics():
    """Metric names in docs/metrics.md's table."""
    readme = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| `(fanyi_[a-z_]+)` \|", readme, re.M))


def referenced_metrics(text):
    names = set(re.findall(r"\bfanyi_[a-z_]+", text))
    return {re.sub(r"_(bucket|sum|count)$", "", name) for name in names}


def check_custom_resources(by_kind, service):
    rule = by_kind["PrometheusRule"][0]
    local_rules = yaml.safe_load(
        (ROOT / "deploy/prometheus/rules.yml").read_text(encoding="utf-8"))
    check(rule["spec"] == local_rules,
          "PrometheusRule spec differs from deploy/prometheus/rules.yml")
    monitor = by_kind["ServiceMonitor"][0]
    selector = monitor["spec"]["selector"]["matchLabels"]
    labels = service["metadata"].get("labels", {})
    check(all(labels.get(k) == v for k, v in selector.items()),
          f"ServiceMonitor selector {selector} does not match the Service "
          f"labels {labels}")
    port_names = {port["name"] for port in service["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        check(endpoint["port"] in port_names,
              f"ServiceMonitor port {endpoint['port']} is not a Service port")
    return rule


def check_image_ports():
    """The server images expose and listen on the ports the manifests use."""
    dockerfile = (ROOT / "docker" / "server.Dockerfile").read_text(
        encoding="utf-8")
    for line in dockerfile.splitlines():
        if line.startswith("EXPOSE"):
            exposed = {int(port) for port in line.split()[1:]}
            check(exposed == set(PORTS.values()),
                  f"server.Dockerfile exposes {sorted(exposed)}, not "
                  f"{sorted(PORTS.values())}")
    entrypoints = re.findall(r"ENTRYPOINT \[(.*?)\]", dockerfile, re.S)
    check(len(entrypoints) == 2, "server.Dockerfile: expected two ENTRYPOINTs")
    for entrypoint in entrypoints:
        for flag, port in (("listen", GRPC_PORT), ("http_listen", HTTP_PORT),
                           ("metrics_listen", METRICS_PORT)):
            check(f'"--{flag}=0.0.0.0:{port}"' in entrypoint,
                  f"server.Dockerfile's ENTRYPOINT lacks --{flag}=0.0.0.0:"
                  f"{port}")


def check_server(overlay, deployment, service, rule):
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = container.get("args", [])
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    check(ports == PORTS, f"server container ports {ports}")
    service_ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    check(service_ports == PORTS, f"Service ports {service_ports}")
    check_image_ports()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        port = container.get(probe, {}).get("grpc", {}).get("port")
        check(port == GRPC_PORT, f"{probe} is not a gRPC probe on {GRPC_PORT}")

    max_queue = flag_value(args, "max_queue")
    if check(max_queue is not None, "the Deployment sets no --max_queue"):
        alerts = {r.get("alert"): r for g in rule["spec"]["groups"]
                  for r in g["rules"]}
        expr = alerts.get("FanyiQueueSaturated", {}).get("expr", "")
        check(re.search(rf"fanyi_queue_depth.*\*\s*{max_queue}\b", expr),
              f"FanyiQueueSaturated ({expr!r}) is not a fraction of the "
              f"Deployment's --max_queue={max_queue}")

    pre_stop = container.get("lifecycle", {}).get("preStop", {})
    pre_stop_s = 0
    command = pre_stop.get("exec", {}).get("command", [])
    if command[:1] == ["sleep"]:
        pre_stop_s = int(command[1])
    grace = pod.get("terminationGracePeriodSeconds", 30)
    check(grace > pre_stop_s + CLIENT_DEADLINE_S,
          f"terminationGracePeriodSeconds {grace} does not cover preStop "
          f"({pre_stop_s} s) plus a drain of {CLIENT_DEADLINE_S} s")

    gpus = container["resources"].get("limits", {}).get("nvidia.com/gpu")
    if overlay == "gpu":
        check(str(gpus) == "1", f"gpu overlay: server nvidia.com/gpu is {gpus}")
    else:
        check(gpus is None, f"{overlay} overlay asks for GPUs")
    for kind in ("requests", "limits"):
        check({"cpu", "memory"} <= set(container["resources"].get(kind, {})),
              f"server {kind} lack cpu or memory")
    return flag_value(args, "model_dir"), pod


def check_trainer(overlay, job):
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    gpus = container["resources"].get("limits", {}).get("nvidia.com/gpu")
    if overlay == "gpu":
        check(str(gpus) == "1", f"gpu overlay: trainer nvidia.com/gpu is {gpus}")
    else:
        check(gpus is None, f"{overlay} overlay gives the trainer GPUs")
    return flag_value(container.get("args", []), "out"), pod


def mounted_claim(pod, path):
    """(claim name, read-only) of the PersistentVolumeClaim mounted at the
    directory that holds `path`."""
    container = pod["containers"][0]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        if path.startswith(mount["mountPath"].rstrip("/") + "/"):
            claim = volumes[mount["name"]].get("persistentVolumeClaim", {})
            return claim.get("claimName"), mount.get("readOnly", False)
    return None, None


def write_dashboard_rules(path):
    dashboard = json.loads((ROOT / "deploy/grafana/fanyi-dashboard.json")
                           .read_text(encoding="utf-8"))
    rules = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = (target["expr"].replace("$__rate_interval", "1m")
                    .replace("$job", ".*"))
            rules.append({"record": f"dashboard:panel{panel['id']}:"
                                    f"{target['refId']}", "expr": expr})
    with open(path, "w", encoding="utf-8") as out:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]},
                       out)
    return json.dumps(dashboard)


def named(documents, kind, name):
    """The document of `kind` named `name`."""
    found = [d for d in documents
             if d["kind"] == kind and d["metadata"]["name"] == name]
    check(len(found) == 1, f"{len(found)} {kind} named {name}")
    return found[0] if found else {}


def check_redis(documents, deployment):
    """--redis_url names the Redis Service, whose port reaches Redis."""
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    url = flag_value(args, "redis_url") or ""
    match = re.fullmatch(r"redis://([a-z0-9-]+):(\d+)", url)
    if not check(match, f"the server's --redis_url is {url!r}"):
        return
    service = named(documents, "Service", match.group(1))
    redis = named(documents, "Deployment", match.group(1))
    if not service or not redis:
        return
    port = [p for p in service["spec"]["ports"]
            if p["port"] == int(match.group(2))]
    container = redis["spec"]["template"]["spec"]["containers"][0]
    target = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(port and target.get(port[0]["targetPort"]) == 6379,
          f"Service {match.group(1)} port {match.group(2)} does not reach "
          "Redis's 6379")
    check(service["spec"]["selector"].items() <=
          redis["spec"]["template"]["metadata"]["labels"].items(),
          f"Service {match.group(1)} does not select the Redis pods")


def main():
    overlay, rendered_path, core_path, rules_path = sys.argv[1:5]
    documents = [d for d in yaml.safe_load_all(
        pathlib.Path(rendered_path).read_text(encoding="utf-8")) if d]
    kinds = sorted(d["kind"] for d in documents)
    with_redis = overlay.endswith("-redis")
    expected = sorted(EXPECTED_KINDS +
                      (["Deployment", "Service"] if with_redis else []))
    check(kinds == expected, f"rendered kinds {kinds}")
    by_kind = {}
    for document in documents:
        by_kind.setdefault(document["kind"], []).append(document)
    core = [d for d in documents
            if (d["apiVersion"], d["kind"]) not in CUSTOM_KINDS]
    custom = [d for d in documents if d not in core]
    check(len(custom) == 2, "ServiceMonitor and PrometheusRule must be "
          "monitoring.coreos.com/v1")
    with open(core_path, "w", encoding="utf-8") as out:
        yaml.safe_dump_all(core, out)
    if failures:
        return report(overlay)

    service = named(documents, "Service", "fanyi-server")
    deployment = named(documents, "Deployment", "fanyi-server")
    rule = check_custom_resources(by_kind, service)
    model_dir, server_pod = check_server(overlay, deployment, service, rule)
    if with_redis:
        check_redis(documents, deployment)
    out_dir, trainer_pod = check_trainer(overlay, by_kind["Job"][0])
    check(model_dir is not None and model_dir == out_dir,
          f"server --model_dir {model_dir} is not the trainer's --out "
          f"{out_dir}")
    server_claim, server_read_only = mounted_claim(server_pod, model_dir or "")
    trainer_claim, trainer_read_only = mounted_claim(trainer_pod, out_dir or "")
    check(server_claim is not None and server_claim == trainer_claim,
          f"server reads claim {server_claim}, trainer writes {trainer_claim}")
    check(server_read_only and not trainer_read_only,
          "the server should mount the models read-only, the trainer "
          "read-write")

    dashboard_text = write_dashboard_rules(rules_path)
    exported = exported_metrics()
    check(len(exported) >= 9, f"docs/metrics.md table: found only {exported}")
    for source, text in (("PrometheusRule", yaml.safe_dump(rule)),
                         ("dashboard", dashboard_text)):
        unknown = referenced_metrics(text) - exported
        check(not unknown, f"{source} names metrics the server does not "
              f"export: {sorted(unknown)}")
    return report(overlay)


def report(overlay):
    for failure in failures:
        print(f"deploy_lint: {overlay}: {failure}", file=sys.stderr)
    if not failures:
        print(f"  {overlay}: kinds, custom resources, probes, --max_queue vs "
              "alert, grace period, GPUs, model volume, metric names: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
