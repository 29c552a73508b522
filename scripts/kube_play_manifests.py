#!/usr/bin/env python3
"""Turns fanyi's rendered Kubernetes manifests into what `podman kube play`
runs on one host (scripts/image-test.sh):

  kube_play_manifests.py RENDERED_YAML OUT_DIR GRPC_PORT METRICS_PORT HTTP_PORT

Writes OUT_DIR/volumes.yaml (the PersistentVolumeClaims, which podman makes
named volumes), OUT_DIR/trainer.yaml (the trainer Job's pod as a Pod: podman
plays no Jobs) and OUT_DIR/server.yaml (the server Deployment with one
replica, its gRPC, metrics and HTTP ports published on 127.0.0.1 as the host
ports given). Everything else in the pods (image, args, volumes, security
context, resources) is left as the manifests give it, except that the
trainer gets --max_minutes=1 appended (the last value of a flag wins, and
every flag the manifest passes is still parsed). Prints the fields podman
does not run, for the script to check another way.
"""
import pathlib
import sys

import yaml


def main():
    rendered, out_dir, grpc_port, metrics_port, http_port = sys.argv[1:6]
    documents = [d for d in yaml.safe_load_all(
        pathlib.Path(rendered).read_text(encoding="utf-8")) if d]
    by_kind = {}
    for document in documents:
        by_kind.setdefault(document["kind"], []).append(document)
    out = pathlib.Path(out_dir)

    with open(out / "volumes.yaml", "w", encoding="utf-8") as stream:
        yaml.safe_dump_all(by_kind["PersistentVolumeClaim"], stream)

    job = by_kind["Job"][0]
    trainer = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": job["metadata"]["name"],
                            "labels": job["spec"]["template"]["metadata"]
                            .get("labels", {})},
               "spec": job["spec"]["template"]["spec"]}
    trainer["spec"]["containers"][0]["args"].append("--max_minutes=1")
    with open(out / "trainer.yaml", "w", encoding="utf-8") as stream:
        yaml.safe_dump(trainer, stream)

    deployment = by_kind["Deployment"][0]
    deployment["spec"]["replicas"] = 1
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    host_ports = {"grpc": int(grpc_port), "metrics": int(metrics_port),
                  "http": int(http_port)}
    for port in container["ports"]:
        port["hostPort"] = host_ports[port["name"]]
        port["hostIP"] = "127.0.0.1"
    with open(out / "server.yaml", "w", encoding="utf-8") as stream:
        yaml.safe_dump(deployment, stream)

    unplayed = [f"{kind} (not a pod)" for kind in sorted(by_kind)
                if kind not in ("Deployment", "Job", "PersistentVolumeClaim")]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if "grpc" in container.get(probe, {}):
            unplayed.append(f"server {probe} (gRPC probes)")
    if "lifecycle" in container:
        unplayed.append("server lifecycle.preStop")
    print("\n".join(unplayed))


if __name__ == "__main__":
    sys.exit(main())
