#!/usr/bin/python3
"""Turns a rendered kustomize overlay into files `podman kube play` runs.

Usage: k8s_podman_convert.py RENDERED.yaml OUT_DIR --image NAME=REFERENCE

podman 4.3's kube play creates pods from Pods and Deployments, named
volumes from PersistentVolumeClaims, and reads the ConfigMaps found in the
same file for env and volumes. Everything else of a rendering is either
turned into one of those or dropped, as follows; the rest is kept as
rendered (arguments, env, volumes, probes, security contexts, resources,
labels) but for the image reference, --image's.

Turned into something podman runs:
  StatefulSet  one Pod per ordinal, as the StatefulSet controller makes
               them: named <set>-<ordinal>, the template's labels plus
               apps.kubernetes.io/pod-index and
               statefulset.kubernetes.io/pod-name, hostname <set>-<ordinal>
               and subdomain <serviceName>. podman does not know the kind.
  Service      network aliases of the pods it selects, on the network the
               pods are played on: its name, and for a headless Service
               that a pod names as its subdomain, <hostname>.<service> too,
               the names cluster DNS would answer. There is no virtual IP
               or load balancing, so a Service's port must be the port the
               container listens on (checked here).
  $(VAR) in a container's command, args and env values: expanded here
               from the container's env as the kubelet expands it (podman
               4.3 passes "$(POD_INDEX)" on as written). Env entries keep
               their valueFrom; podman resolves configMapKeyRef and
               fieldRef to metadata labels itself.
  containers' ports  removed, after the Services' ports are checked
               against them: podman 4.3 publishes every containerPort on
               the host at the same port ("cannot listen on the TCP port:
               listen tcp4 :7070: bind: address already in use" for the
               second pod). In a cluster they only name ports; a pod's IP
               is reachable on every port, on the podman network as well.
  emptyDir     renamed <pod>-<volume>, in the pod's volumes and mounts:
               podman 4.3 makes one volume per emptyDir *name*, shared by
               every pod that has one of that name ("volume tmp is being
               used by the following container(s)" at kube down), where
               each pod should have its own.
  TFJob        (kubeflow.org/v1) one Pod per replica index, as the
               Kubeflow training operator makes them: named
               <job>-<type>-<index> (type lowercased: chief, ps, worker,
               evaluator), the template's labels plus the operator's
               (training.kubeflow.org/job-name, operator-name, replica-type,
               replica-index, and job-role master for the chief), and
               TF_CONFIG in the env of the container named tensorflow,
               with the addresses of the headless Service the operator
               gives each pod: <job>-<type>-<index>.<namespace>.svc and the
               container's port named tfjob-port (the evaluator is left out
               of "cluster" but gets its "task"). The pod joins the network
               under that Service's names: <pod>, <pod>.<namespace>,
               <pod>.<namespace>.svc, <pod>.<namespace>.svc.cluster.local.
               The replica's restartPolicy becomes the pod's: Always,
               OnFailure and Never as they are; ExitCode, which only the
               operator knows (it restarts a pod whose exit code is 128 or
               more, a signal's, and leaves 1 to 127 final), becomes
               OnFailure, which restarts on any non-zero code: podman
               would run an unknown policy as Always, restarting the pods
               that exit 0 when the job SUCCEEDED.
Dropped, with nothing in their place:
  Namespace            podman has no namespaces; metadata.namespace is
                       left in place and ignored.
  ServiceAccount       there is no API server to authenticate to (the pods
                       do not mount a token anyway).
  NetworkPolicy        podman's bridge network lets every pod reach every
                       other; nothing enforces the policies.
  PodDisruptionBudget  there is no eviction API to budget.
  ServiceMonitor,      custom resources of the Prometheus Operator, which
  PodMonitor           is not there.
Any other kind, a StatefulSet with volumeClaimTemplates, a TFJob's
restartPolicy podman has no counterpart for, or a Service that maps ports
is refused, so that a change to the manifests is noticed.

OUT_DIR gets:
  volumes.yaml       the PersistentVolumeClaims, to play first;
  NN-POD.yaml        per pod (a Deployment's pods count as one), the pod or
                     Deployment with the ConfigMaps it refers to;
  plan.tsv           per pod file: the file name, the workload's component
                     label, then the network aliases, comma-separated.
"""

import argparse
import copy
import json
import os
import re
import sys

import yaml

DROPPED_KINDS = {
    "Namespace",
    "ServiceAccount",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "ServiceMonitor",
    "PodMonitor",
}
COMPONENT_LABEL = "app.kubernetes.io/component"
# The port the operator puts in TF_CONFIG: the tensorflow container's port
# of this name, or the default.
TFJOB_PORT_NAME = "tfjob-port"
TFJOB_DEFAULT_PORT = 2222
# A TFJob replica's restartPolicy -> the pod's, for podman. The operator
# itself gives pods of an ExitCode replica restartPolicy Never and decides
# on restarts by the exit code; podman has no such policy, and OnFailure is
# the closest (it also restarts after 1 to 127, which ExitCode leaves final).
TFJOB_RESTART_POLICIES = {
    "Always": "Always",
    "OnFailure": "OnFailure",
    "Never": "Never",
    "ExitCode": "OnFailure",
}


class ConversionError(Exception):
    pass


def describe(document):
    return f"{document.get('kind')} {document.get('metadata', {}).get('name')}"


def statefulset_pods(statefulset):
    """The Pods the StatefulSet controller would create, one per ordinal."""
    spec = statefulset["spec"]
    if spec.get("volumeClaimTemplates"):
        raise ConversionError(f"{describe(statefulset)}: volumeClaimTemplates are not converted")
    name = statefulset["metadata"]["name"]
    template = spec["template"]
    pods = []
    for ordinal in range(spec.get("replicas", 1)):
        pod_name = f"{name}-{ordinal}"
        metadata = copy.deepcopy(template.get("metadata", {}))
        metadata["name"] = pod_name
        if "namespace" in statefulset["metadata"]:
            metadata["namespace"] = statefulset["metadata"]["namespace"]
        labels = metadata.setdefault("labels", {})
        labels["apps.kubernetes.io/pod-index"] = str(ordinal)
        labels["statefulset.kubernetes.io/pod-name"] = pod_name
        pod_spec = copy.deepcopy(template["spec"])
        pod_spec["hostname"] = pod_name
        pod_spec["subdomain"] = spec["serviceName"]
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec})
    return pods


def tfjob_pods(tfjob):
    """The Pods the training operator would create, with TF_CONFIG and the
    DNS names of their Services: [(pod, aliases)]."""
    name = tfjob["metadata"]["name"]
    namespace = tfjob["metadata"].get("namespace", "default")
    replica_specs = tfjob["spec"]["tfReplicaSpecs"]

    def pod_name(replica_type, index):
        return f"{name}-{replica_type.lower()}-{index}"

    def tfjob_port(replica):
        for container in replica["template"]["spec"].get("containers", []):
            if container["name"] == "tensorflow":
                for port in container.get("ports", []):
                    if port.get("name") == TFJOB_PORT_NAME:
                        return port["containerPort"]
        return TFJOB_DEFAULT_PORT

    # The operator's cluster spec: every replica but the evaluator, by
    # lowercased type, each pod by the address of its own Service.
    cluster = {}
    for replica_type, replica in replica_specs.items():
        if replica_type.lower() == "evaluator":
            continue
        cluster[replica_type.lower()] = [
            f"{pod_name(replica_type, index)}.{namespace}.svc:{tfjob_port(replica)}"
            for index in range(replica.get("replicas", 1))]

    pods = []
    for replica_type, replica in replica_specs.items():
        policy = replica.get("restartPolicy", "Never")
        if policy not in TFJOB_RESTART_POLICIES:
            raise ConversionError(f"{describe(tfjob)}: {replica_type} has restartPolicy {policy}")
        template = replica["template"]
        for index in range(replica.get("replicas", 1)):
            this_pod = pod_name(replica_type, index)
            metadata = copy.deepcopy(template.get("metadata", {}))
            metadata["name"] = this_pod
            metadata["namespace"] = namespace
            labels = metadata.setdefault("labels", {})
            labels["training.kubeflow.org/job-name"] = name
            labels["training.kubeflow.org/operator-name"] = "tfjob-controller"
            labels["training.kubeflow.org/replica-type"] = replica_type.lower()
            labels["training.kubeflow.org/replica-index"] = str(index)
            if replica_type.lower() in ("chief", "master"):
                labels["training.kubeflow.org/job-role"] = "master"
            pod_spec = copy.deepcopy(template["spec"])
            pod_spec["restartPolicy"] = TFJOB_RESTART_POLICIES[policy]
            tf_config = {"cluster": cluster,
                         "task": {"type": replica_type.lower(), "index": index},
                         "environment": "cloud"}
            for container in pod_spec.get("containers", []):
                if container["name"] == "tensorflow":
                    container.setdefault("env", []).append(
                        {"name": "TF_CONFIG", "value": json.dumps(tf_config)})
            aliases = [this_pod, f"{this_pod}.{namespace}", f"{this_pod}.{namespace}.svc",
                       f"{this_pod}.{namespace}.svc.cluster.local"]
            pods.append(({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
                          "spec": pod_spec}, aliases))
    return pods


def pod_labels_and_spec(workload):
    if workload["kind"] == "Pod":
        return workload["metadata"].get("labels", {}), workload["spec"]
    template = workload["spec"]["template"]
    return template.get("metadata", {}).get("labels", {}), template["spec"]


def selects(selector, labels):
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def container_ports(pod_spec):
    """Container port numbers by name and by number."""
    ports = {}
    for container in pod_spec.get("containers", []):
        for port in container.get("ports", []):
            ports[port["containerPort"]] = port["containerPort"]
            if "name" in port:
                ports[port["name"]] = port["containerPort"]
    return ports


def network_aliases(services, workload):
    """The DNS names cluster DNS gives the pod through these Services."""
    labels, pod_spec = pod_labels_and_spec(workload)
    aliases = []
    for service in services:
        spec = service["spec"]
        if not selects(spec.get("selector"), labels):
            continue
        ports = container_ports(pod_spec)
        for port in spec.get("ports", []):
            target = ports.get(port.get("targetPort", port["port"]))
            if target != port["port"]:
                raise ConversionError(
                    f"{describe(service)}: port {port['port']} goes to "
                    f"{port.get('targetPort')} of {describe(workload)}; a network alias "
                    "cannot map ports")
        name = service["metadata"]["name"]
        aliases.append(name)
        if spec.get("clusterIP") == "None" and pod_spec.get("subdomain") == name:
            aliases.append(f"{pod_spec['hostname']}.{name}")
    return aliases


def referenced_config_maps(pod_spec):
    names = set()
    for container in pod_spec.get("initContainers", []) + pod_spec.get("containers", []):
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("configMapKeyRef")
            if ref:
                names.add(ref["name"])
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                names.add(source["configMapRef"]["name"])
    for volume in pod_spec.get("volumes", []):
        if "configMap" in volume:
            names.add(volume["configMap"]["name"])
    return names


def env_value(env, pod_metadata, config_maps):
    """The value the kubelet would give an env entry, or None if it is only known at run time."""
    if "value" in env:
        return env["value"]
    source = env.get("valueFrom", {})
    if "configMapKeyRef" in source:
        ref = source["configMapKeyRef"]
        return config_maps[ref["name"]].get("data", {}).get(ref["key"])
    field = source.get("fieldRef", {}).get("fieldPath", "")
    if field in ("metadata.name", "metadata.namespace"):
        return pod_metadata.get(field.split(".")[1])
    match = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", field)
    if match:
        return pod_metadata.get(match.group(1), {}).get(match.group(2))
    return None


def expand(text, variables):
    """Kubernetes' $(VAR) expansion: $$ escapes, unknown names stay as written."""
    def replace(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return variables[name] if variables.get(name) is not None else match.group(0)
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", replace, text)


def expand_variables(pod_metadata, pod_spec, config_maps, workload):
    for container in pod_spec.get("initContainers", []) + pod_spec.get("containers", []):
        variables = {}
        for env in container.get("env", []):
            if "value" in env:
                env["value"] = expand(env["value"], variables)
            variables[env["name"]] = env_value(env, pod_metadata, config_maps)
        for key in ("command", "args"):
            for arg in container.get(key, []):
                for match in re.finditer(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", arg):
                    name = match.group(1)
                    if name in variables and variables[name] is None:
                        raise ConversionError(
                            f"{describe(workload)}: $({name}) is only known at run time")
            if key in container:
                container[key] = [expand(arg, variables) for arg in container[key]]


def remove_ports(pod_spec):
    for container in pod_spec.get("initContainers", []) + pod_spec.get("containers", []):
        container.pop("ports", None)


def rename_empty_dirs(pod_name, pod_spec):
    renamed = {}
    for volume in pod_spec.get("volumes", []):
        if "emptyDir" in volume:
            renamed[volume["name"]] = volume["name"] = f"{pod_name}-{volume['name']}"
    for container in pod_spec.get("initContainers", []) + pod_spec.get("containers", []):
        for mount in container.get("volumeMounts", []):
            mount["name"] = renamed.get(mount["name"], mount["name"])


def replace_images(pod_spec, images):
    for container in pod_spec.get("initContainers", []) + pod_spec.get("containers", []):
        name = container["image"].rsplit(":", 1)[0]
        if name in images:
            container["image"] = images[name]


def convert(documents, images):
    """Returns (claims, [(file stem, component, aliases, documents)])."""
    by_kind = {}
    for document in documents:
        if document:
            by_kind.setdefault(document["kind"], []).append(document)
    unknown = set(by_kind) - DROPPED_KINDS - {
        "ConfigMap", "PersistentVolumeClaim", "Service", "Deployment", "StatefulSet", "Pod",
        "TFJob"}
    if unknown:
        raise ConversionError(f"kinds not converted: {', '.join(sorted(unknown))}")
    config_maps = {c["metadata"]["name"]: c for c in by_kind.get("ConfigMap", [])}
    services = by_kind.get("Service", [])

    workloads = by_kind.get("Deployment", []) + by_kind.get("Pod", [])
    for statefulset in by_kind.get("StatefulSet", []):
        workloads.extend(statefulset_pods(statefulset))
    # The operator's Services select nothing by label: one per pod, by name.
    operator_aliases = {}
    for tfjob in by_kind.get("TFJob", []):
        for pod, aliases in tfjob_pods(tfjob):
            workloads.append(pod)
            operator_aliases[pod["metadata"]["name"]] = aliases

    pods = []
    for workload in workloads:
        labels, pod_spec = pod_labels_and_spec(workload)
        replace_images(pod_spec, images)
        pod_metadata = (workload["metadata"] if workload["kind"] == "Pod"
                        else workload["spec"]["template"].get("metadata", {}))
        expand_variables(pod_metadata, pod_spec, config_maps, workload)
        wanted = referenced_config_maps(pod_spec)
        missing = wanted - set(config_maps)
        if missing:
            raise ConversionError(f"{describe(workload)} refers to missing ConfigMaps {sorted(missing)}")
        aliases = (network_aliases(services, workload)
                   + operator_aliases.get(workload["metadata"]["name"], []))
        remove_ports(pod_spec)
        rename_empty_dirs(workload["metadata"]["name"], pod_spec)
        pods.append((workload["metadata"]["name"], labels.get(COMPONENT_LABEL, ""), aliases,
                     [config_maps[name] for name in sorted(wanted)] + [workload]))
    return by_kind.get("PersistentVolumeClaim", []), pods


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rendered", help="the output of kubectl kustomize")
    parser.add_argument("out_dir")
    parser.add_argument("--image", action="append", default=[], metavar="NAME=REFERENCE",
                        help="use REFERENCE for containers whose image is NAME[:TAG]")
    args = parser.parse_args()
    images = {}
    for entry in args.image:
        name, _, reference = entry.partition("=")
        if not name or not reference:
            parser.error(f"--image wants NAME=REFERENCE, got '{entry}'")
        images[name] = reference

    with open(args.rendered, encoding="utf-8") as rendered:
        documents = list(yaml.safe_load_all(rendered))
    try:
        claims, pods = convert(documents, images)
    except ConversionError as error:
        print(f"k8s_podman_convert: {error}", file=sys.stderr)
        return 1

    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "volumes.yaml"), "w", encoding="utf-8") as out:
        yaml.safe_dump_all(claims, out, sort_keys=False)
    plan = []
    for number, (name, component, aliases, pod_documents) in enumerate(pods):
        file_name = f"{number:02d}-{name}.yaml"
        with open(os.path.join(args.out_dir, file_name), "w", encoding="utf-8") as out:
            yaml.safe_dump_all(pod_documents, out, sort_keys=False)
        plan.append(f"{file_name}\t{component}\t{','.join(aliases)}\n")
    with open(os.path.join(args.out_dir, "plan.tsv"), "w", encoding="utf-8") as out:
        out.writelines(plan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
