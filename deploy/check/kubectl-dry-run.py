#!/usr/bin/env python3
"""Runs `kubectl apply --dry-run=client --validate=false` on the Helm chart as `helm template`
renders it (default values, then deploy/helm/values-full.yaml) and deploy/k8s/namespace.yaml,
with no cluster.

A client dry run sends no object anywhere, but kubectl still asks an API server two things:
discovery (which kinds exist, under which API group and version) and whether each object
exists already. This script answers both from a stub on 127.0.0.1 (an ephemeral port):
discovery for the kinds the manifests use, and 404 for every object. So kubectl parses every
document, maps each kind to its REST resource, and prints what it would create. It does not
check field schemas (that is --validate, which needs the server's OpenAPI). Use
kubernetes-validate for schemas (see deploy/README.md).

Usage: python3 deploy/check/kubectl-dry-run.py [kubectl args...] (helm and kubectl on PATH)
"""

import http.server
import json
import pathlib
import subprocess
import sys
import tempfile
import threading

# The kinds the chart renders, by API group version: (resource, kind, namespaced).
RESOURCES = {
    "v1": [
        ("namespaces", "Namespace", False),
        ("configmaps", "ConfigMap", True),
        ("secrets", "Secret", True),
        ("services", "Service", True),
    ],
    "apps/v1": [("deployments", "Deployment", True), ("statefulsets", "StatefulSet", True)],
    "batch/v1": [("jobs", "Job", True)],
    "policy/v1": [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    "networking.k8s.io/v1": [("networkpolicies", "NetworkPolicy", True)],
    "autoscaling/v2": [("horizontalpodautoscalers", "HorizontalPodAutoscaler", True)],
    # CRDs the chart uses when asked to (KEDA, prometheus-operator).
    "keda.sh/v1alpha1": [("scaledobjects", "ScaledObject", True)],
    "monitoring.coreos.com/v1": [
        ("servicemonitors", "ServiceMonitor", True),
        ("prometheusrules", "PrometheusRule", True),
    ],
}
VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def resource_list(group_version):
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {"name": n, "singularName": k.lower(), "namespaced": ns, "kind": k, "verbs": VERBS}
            for n, k, ns in RESOURCES[group_version]
        ],
    }


def group_list():
    groups = []
    for gv in RESOURCES:
        if "/" in gv:
            group, version = gv.split("/")
            v = {"groupVersion": gv, "version": version}
            groups.append({"name": group, "versions": [v], "preferredVersion": v})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


class Stub(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        if path == "/version":
            body = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-stub"}
        elif path == "/api":
            body = {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        elif path == "/apis":
            body = group_list()
        elif path == "/api/v1":
            body = resource_list("v1")
        elif path.startswith("/apis/") and path[len("/apis/"):] in RESOURCES:
            body = resource_list(path[len("/apis/"):])
        else:
            # Every object: not there yet, so kubectl would create it.
            return self.send_json(404, {
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "NotFound", "code": 404, "message": f"{path} not found",
            })
        self.send_json(200, body)

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    deploy = pathlib.Path(__file__).resolve().parent.parent
    chart = deploy / "helm" / "shogi-arbiter"
    code = 0
    with tempfile.TemporaryDirectory() as home:
        kubeconfig = pathlib.Path(home) / "config"
        kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "stub",
            "clusters": [{"name": "stub", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
            "users": [{"name": "stub", "user": {}}],
            "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "stub"}}],
        }))
        for values in [[], ["--values", str(deploy / "helm" / "values-full.yaml")]]:
            rendered = subprocess.run(
                ["helm", "template", "shogi-arbiter", str(chart), "--namespace", "shogi-arbiter", *values],
                check=True, capture_output=True, text=True).stdout
            manifests = pathlib.Path(home) / "manifests.yaml"
            manifests.write_text((deploy / "k8s" / "namespace.yaml").read_text() + "\n---\n" + rendered)
            print("# helm template", *values, flush=True)
            cmd = ["kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(pathlib.Path(home) / "cache"),
                   "apply", "--dry-run=client", "--validate=false", "-f", str(manifests), *sys.argv[1:]]
            code = code or subprocess.call(cmd)
    server.shutdown()
    sys.exit(code)


if __name__ == "__main__":
    main()
