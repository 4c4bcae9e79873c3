"""What one policy's reconcile costs in the detector as templates of other namespaces pile up.

Run: ``python -m benchmarks.detector_bench [--namespaces N] [--per-namespace M]``. Offline: the
detector's template cache is filled by hand (through its own event handler, which keeps the
indexes) and its client is never contacted. Prints the templates read and the time of the
policy's look for unclaimed templates (``_enqueue_selected``) for a label selector in one
namespace and for a cluster-wide selector of every template.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Iterator
from typing import Any

from controlplane.detector import Detector
from karmada.kube import EventRecorder, Informer, KubeClient, ResourceMapper
from karmada.kube.config import ClusterConfig
from karmada.kube.informer_factory import InformerFactory
from karmada.kube.resources import Resource

Obj = dict[str, Any]
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)


class CountingInformer(Informer):
    reads = 0

    def get(self, name: str, namespace: str = "") -> Obj | None:
        self.reads += 1
        return super().get(name, namespace)

    def items(self) -> Iterator[Obj]:
        for obj in super().items():
            self.reads += 1
            yield obj


def _policy(kind: str, namespace: str, selector: Obj) -> Obj:
    meta: Obj = {"name": "p", "resourceVersion": "1", "labels": {f"{kind.lower()}.karmada.io/permanent-id": "x"}}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", **selector}]},
    }


async def run(namespaces: int, per_namespace: int) -> None:
    client = KubeClient(ClusterConfig(server="http://127.0.0.1:9"))  # never contacted
    detector = Detector(client, InformerFactory(client), ResourceMapper(client), EventRecorder(client, "bench"))
    informer = CountingInformer(client, DEPLOYMENTS)
    handler = detector._template_handler("apps/v1", "Deployment")
    for n in range(namespaces):
        for i in range(per_namespace):
            labels = {"tier": "front" if i % 10 == 0 else "back"}
            meta = {"name": f"app-{i}", "namespace": f"ns-{n}", "resourceVersion": "1", "labels": labels}
            obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {}}
            informer.store(obj)
            handler("ADDED", obj, None)
    detector.kinds[("apps/v1", "Deployment")] = informer
    cases = [
        (
            "PropagationPolicy ns-0, labelSelector",
            "PropagationPolicy",
            "ns-0",
            {"labelSelector": {"matchLabels": {"tier": "front"}}},
        ),
        ("ClusterPropagationPolicy, every Deployment", "ClusterPropagationPolicy", "", {}),
    ]
    print(f"{namespaces * per_namespace} Deployments in {namespaces} namespaces")
    for what, kind, namespace, selector in cases:
        (detector.pps if namespace else detector.cpps).store(_policy(kind, namespace, selector))
        parsed = detector._policy((kind, namespace, "p"))
        assert parsed is not None
        informer.reads = 0
        started = time.perf_counter()
        detector._enqueue_selected(parsed)
        elapsed = (time.perf_counter() - started) * 1000
        print(f"{what}: {informer.reads} templates read, {len(detector.templates.queue)} enqueued, {elapsed:.1f} ms")
        while len(detector.templates.queue):
            detector.templates.queue.done(await detector.templates.queue.get())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--per-namespace", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(run(args.namespaces, args.per_namespace))


if __name__ == "__main__":
    main()
