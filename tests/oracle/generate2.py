"""The second generator of the differential batch (`diff --generator 2`), written apart from the
first (generate.py) and from the engine, from the feature mixes the first never draws and from every
class of disagreement the oracle has shown (tests/oracle/cases, known/):

- pod shapes: several containers, limits-only containers (the API server defaults requests from
  limits), init containers larger than the app containers, sidecars (restartable init containers,
  whose requests add up), memory as the scarce resource as often as CPU;
- running pods of another scheduler (kube-scheduler preempts them like any other), terminating
  pods, pending noise the question must ignore (gated pods, another scheduler's pods);
- victim PodGroups under CompositePodGroup trees two levels deep with every mix of disruption modes;
- PDBs with matchLabels, In/NotIn/Exists/DoesNotExist expressions, `{}` (every pod of the
  namespace), pods already in `status.disruptedPods`, and a pod under two PDBs;
- nodes: zones, NoSchedule and PreferNoSchedule taints, a cordoned node;
- the preemptor: a pod, a gang or basic PodGroup, or a CompositePodGroup tree (gang or basic root,
  gang and basic children, modes on every level); with required and preferred node affinity, a
  nodeSelector, required pod affinity, required anti-affinity against others or against its own
  members, spread (hard and soft, zone and hostname), host ports, tolerations, preemptionPolicy
  Never, and a priority equal to the most important victims'.

Nominated pods are drawn as kube-scheduler's bystanders: gated, or another scheduler's (the oracle
creates them as they are; an ungated pending pod of kube-scheduler's would be scheduled in the same
run, so the oracle cannot ask our one-object question then, batch.not_runnable). Not drawn, and
why: gated members
of the question's own group (the oracle leaves gated pods out), equal start times of running pods
(upstream breaks that tie by its cache order or by UIDs a snapshot cannot know).

Its own seed stream (random.Random of a string), so nothing here moves a case of generate.py.
Objects are made with the fluent builders of tests/builders.py.
"""

from __future__ import annotations

import random
from typing import Any

from ..builders import cpu, make_cpg, make_node, make_pdb, make_pod, make_podgroup
from .generate import GenCase, for1_38

BASE = 1_795_000_000
NAMESPACES = ("prod", "dev")
APPS = ("api", "etl", "train", "cache")
ZONES = ("z0", "z1", "z2")


def generate2(seed: int, index: int = 0, version: str = "1.37") -> GenCase:
    """Case `index` of `seed` (the same numbers, the same cluster). `version` "1.38" stores it as a
    1.38 API server would (generate.for1_38)."""
    case = _Gen(random.Random(f"wap-gen2:{seed}:{index}"), seed, index).case()
    if version != "1.37":
        for1_38(case.items)
    return case


class _Gen:
    def __init__(self, rng: random.Random, seed: int, index: int):
        self.rng, self.seed, self.index = rng, seed, index
        self.items: list[dict] = []
        self.features: set[str] = set()
        self.free: dict[str, list[int]] = {}  # node -> [milli-cpu, MiB] left
        self.zone: dict[str, str] = {}
        self.tainted: set[str] = set()
        self.cordoned: set[str] = set()
        self._start = BASE
        self.prios: list[int] = []

    # --- helpers ----------------------------------------------------------------------------
    def start(self) -> int:
        """A start time no other running pod has (see the module docstring)."""
        self._start += self.rng.randint(7, 90)
        return self._start

    def shape(self, p: Any, milli: int, mib: int) -> None:
        """Give pod builder `p` containers whose effective request (what the scheduler counts) is at
        most `milli` CPU and `mib` memory, in one of several shapes."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            p.req(cpu=cpu(milli), memory=f"{mib}Mi")
            return
        if r < 0.6:
            # limits only: the API server copies them into requests
            p.limits_only(cpu=cpu(milli), memory=f"{mib}Mi")
            self.features.add("limits-only")
            return
        if r < 0.72:
            # two app containers, one with requests and limits, one with limits only
            a = max(50, milli // 2 // 50 * 50)
            p.container("app", requests={"cpu": cpu(a), "memory": f"{mib // 2}Mi"}, limits={"cpu": cpu(a * 2), "memory": f"{mib}Mi"})
            p.container("helper", limits={"cpu": cpu(milli - a), "memory": f"{mib - mib // 2}Mi"})
            self.features.add("limits-only")
            self.features.add("multi-container")
            return
        if r < 0.86:
            # an init container that asks more than the app container: the pod's request is its max
            app = max(50, milli // 2 // 50 * 50)
            p.init_container("init", requests={"cpu": cpu(milli), "memory": f"{mib}Mi"})
            p.req(cpu=cpu(app), memory=f"{mib // 2}Mi")
            self.features.add("init-containers")
            return
        # a sidecar (restartable init container): its request adds to the app container's
        side = max(50, milli // 4 // 50 * 50)
        p.init_container("proxy", requests={"cpu": cpu(side), "memory": f"{mib // 4}Mi"}, sidecar=True)
        p.req(cpu=cpu(milli - side), memory=f"{mib - mib // 4}Mi")
        self.features.add("sidecars")

    def fit_node(self, milli: int, mib: int, tolerate: bool = False) -> str | None:
        cands = [n for n, (c, m) in self.free.items() if c >= milli and m >= mib
                 and (tolerate or n not in self.tainted)]
        return self.rng.choice(cands) if cands else None

    def take(self, node: str, milli: int, mib: int) -> None:
        self.free[node][0] -= milli
        self.free[node][1] -= mib

    # --- the cluster ------------------------------------------------------------------------
    def nodes(self) -> None:
        rng = self.rng
        for i in range(rng.randint(3, 8)):
            name = f"n{i}"
            c = rng.choice([2000, 4000, 4000, 6000, 8000])
            m = rng.choice([4096, 8192, 8192, 16384])
            nb = make_node(name).zone(ZONES[i % rng.choice([2, 3])]).alloc(cpu=cpu(c), memory=f"{m}Mi")
            t = rng.random()
            if t < 0.12:
                nb.taint("gpu", "true", "NoSchedule")
                self.tainted.add(name)
                self.features.add("taints")
            elif t < 0.2:
                nb.taint("spot", "true", "PreferNoSchedule")
                self.features.add("prefer-no-schedule")
            elif t < 0.26 and i:
                nb.unschedulable()
                self.cordoned.add(name)
                self.features.add("cordoned")
            node = nb.obj()
            self.items.append(node)
            self.zone[name] = node["metadata"]["labels"]["topology.kubernetes.io/zone"]
            self.free[name] = [c, m]

    def running(self, ns: str, name: str, prio: int, milli: int, mib: int, labels: dict, group: str | None = None,
                node: str | None = None) -> dict | None:
        """A running pod on a node with room (or on `node`), or None when none has room."""
        rng = self.rng
        node = node or self.fit_node(milli, mib, tolerate=rng.random() < 0.5)
        if node is None:
            return None
        self.take(node, milli, mib)
        p = make_pod(name, ns).priority(prio).label(**labels).created(BASE - 600)
        self.shape(p, milli, mib)
        if node in self.tainted:
            p.toleration("gpu", "Exists", effect="NoSchedule")
        if group:
            p.group(group)
        if rng.random() < 0.08:
            p.scheduler("volcano")
            self.features.add("other-scheduler-victims")
        if rng.random() < 0.015:
            p.pod_affinity({"matchLabels": {"role": "preemptor"}}, "kubernetes.io/hostname", anti=True)
            self.features.add("victim-anti-affinity")
        p.on(node, self.start())
        if rng.random() < 0.02:
            p.terminating(BASE + 10_000)
            self.features.add("terminating")
        obj = p.obj()
        self.items.append(obj)
        return obj

    def victim_groups(self) -> None:
        rng = self.rng
        for gi in range(rng.choice([0, 1, 1, 2, 3])):
            ns = rng.choice(NAMESPACES)
            prio = rng.choice(self.prios)
            parent = None
            if rng.random() < 0.4:
                # a tree: a root CPG, sometimes a middle CPG, each with a random mode
                root = f"vt{gi}"
                self.items.append(make_cpg(root, ns).priority(prio).mode(rng.choice(["all", "single", None])).obj())
                parent = root
                self.features.add("cpg-victims")
                if rng.random() < 0.4:
                    mid = f"vt{gi}-mid"
                    self.items.append(make_cpg(mid, ns).priority(prio).parent(root).mode(rng.choice(["all", "single", None])).obj())
                    parent = mid
                    self.features.add("cpg-victims-nested")
            for k in range(rng.randint(1, 2) if parent else 1):
                gname = f"vg{gi}-{k}"
                size = rng.randint(1, 4)
                mode = rng.choice(["all", "single", None])
                self.features.add({"all": "all-victims", "single": "single-victims", None: "unset-mode-victims"}[mode])
                g = make_podgroup(gname, ns).priority(prio).mode(mode).parent(parent)
                if rng.random() < 0.5:
                    g.gang(rng.randint(1, size))
                self.items.append(g.obj())
                app = rng.choice(APPS)
                milli, mib = rng.choice([250, 500, 1000]), rng.choice([256, 512, 1024])
                for j in range(size):
                    self.running(ns, f"{gname}-{j}", prio, milli, mib, {"app": app, "wl": gname}, group=gname)

    def fill(self) -> None:
        rng = self.rng
        fill = rng.uniform(0.75, 1.0)
        i = 0
        for node in list(self.free):
            total_c, total_m = self.free[node]
            while self.free[node][0] > total_c * (1 - fill) and self.free[node][1] > total_m * (1 - fill):
                milli = min(self.free[node][0], rng.choice([250, 500, 500, 1000, 1500]))
                mib = min(self.free[node][1], rng.choice([128, 512, 1024, 2048]))
                if milli < 100 or mib < 64:
                    break
                ns = rng.choice(NAMESPACES)
                labels = {"app": rng.choice(APPS)}
                if rng.random() < 0.3:
                    labels["tier"] = rng.choice(["gold", "silver"])
                self.running(ns, f"r{i}", rng.choice(self.prios), milli, mib, labels, node=node)
                i += 1

    def pdbs(self) -> None:
        rng = self.rng
        if rng.random() >= 0.45:
            return
        self.features.add("pdb")
        running = [o for o in self.items if o["kind"] == "Pod" and o["spec"].get("nodeName")]
        for k in range(rng.randint(1, 3)):
            ns = rng.choice(NAMESPACES)
            b = make_pdb(f"pdb{k}", ns)
            r = rng.random()
            if r < 0.15:
                b.selector({})
                self.features.add("pdb-empty")
                match = lambda lb: True  # noqa: E731
            elif r < 0.25:
                b.match_expressions({"key": "app", "operator": "NotIn", "values": [rng.choice(APPS)]})
                excluded = b.obj()["spec"]["selector"]["matchExpressions"][0]["values"][0]
                match = lambda lb, x=excluded: lb.get("app") != x  # noqa: E731
                self.features.add("pdb-expr")
            elif r < 0.35:
                op = rng.choice(["Exists", "DoesNotExist"])
                b.match_expressions({"key": "tier", "operator": op})
                match = (lambda lb: "tier" in lb) if op == "Exists" else (lambda lb: "tier" not in lb)  # noqa: E731
                self.features.add("pdb-expr")
            elif r < 0.5:
                vals = rng.sample(APPS, 2)
                b.match_expressions({"key": "app", "operator": "In", "values": vals})
                match = lambda lb, v=vals: lb.get("app") in v  # noqa: E731
                self.features.add("pdb-expr")
            else:
                app = rng.choice(APPS)
                b.match_labels(app=app)
                match = lambda lb, a=app: lb.get("app") == a  # noqa: E731
            pods = [o for o in running if o["metadata"]["namespace"] == ns and match(o["metadata"].get("labels") or {})]
            b.allowed(rng.choice([0, 0, 1, 2]), len(pods))
            if pods and rng.random() < 0.2:
                b.disrupted(rng.choice(pods)["metadata"]["name"], BASE + 5_000)
                self.features.add("pdb-disrupted-pods")
            self.items.append(b.obj())
        if sum(1 for o in self.items if o["kind"] == "PodDisruptionBudget") > 1:
            self.features.add("pdb-several")

    def noise(self, preemptor_prio: int) -> None:
        """Pending pods that are not the question: kube-scheduler leaves the gated ones alone and
        another scheduler's pods to it. A nomination on a gated pod still counts: the queue's
        nominator records it (scheduling_queue.go, "even if gated"), so a node it is nominated to
        has that much less room for a pod of lower or equal priority (addGENominatedPods); another
        scheduler's pod never enters kube-scheduler's queue, so its nomination does not count."""
        rng = self.rng
        nodes = sorted(self.free)
        if rng.random() < 0.2:
            p = make_pod("gated-0", rng.choice(NAMESPACES)).priority(10_000).req(cpu="100m", memory="64Mi").gated("example.com/wait")
            self.items.append(p.obj())
            self.features.add("gated-noise")
        if rng.random() < 0.15:
            p = make_pod("volcano-0", rng.choice(NAMESPACES)).priority(10_000).req(cpu="100m", memory="64Mi").scheduler("volcano")
            self.items.append(p.obj())
            self.features.add("other-scheduler-noise")
        for k in range(rng.choice([0, 0, 1, 2])):
            prio = rng.choice([preemptor_prio - 1, preemptor_prio, preemptor_prio + 1, max(self.prios)])
            p = make_pod(f"nominated-{k}", rng.choice(NAMESPACES)).priority(prio).created(BASE + 15_000)
            self.shape(p, rng.choice([500, 1000, 2000]), rng.choice([256, 1024]))
            p.nominated(rng.choice(nodes))
            if rng.random() < 0.75:
                p.gated("example.com/wait")
                self.features.add("nominated-gated")
            else:
                p.scheduler("volcano")
                self.features.add("nominated-other-scheduler")
            self.items.append(p.obj())

    # --- the question -----------------------------------------------------------------------
    def preemptor_traits(self) -> list:
        """Functions that add the preemptor's scheduling constraints to a pod builder."""
        rng = self.rng
        traits: list = []

        def add(feature: str, fn) -> None:
            self.features.add(feature)
            traits.append(fn)
        zones = sorted(set(self.zone.values()))
        if rng.random() < 0.12:
            z = rng.sample(zones, max(1, len(zones) - 1))
            add("node-affinity", lambda p: p.node_affinity_in("topology.kubernetes.io/zone", z))
        elif rng.random() < 0.1:
            z = rng.choice(zones)
            add("node-affinity-preferred", lambda p: p.node_affinity_in("topology.kubernetes.io/zone", [z], required=False))
        elif rng.random() < 0.06:
            z = rng.choice(zones)
            add("node-selector", lambda p: p.node_selector(**{"topology.kubernetes.io/zone": z}))
        r = rng.random()
        if r < 0.08:
            app = rng.choice(APPS)
            add("anti-affinity", lambda p: p.pod_affinity({"matchLabels": {"app": app}}, "kubernetes.io/hostname", anti=True))
        elif r < 0.14:
            add("self-anti-affinity", lambda p: p.pod_affinity({"matchLabels": {"role": "preemptor"}}, "kubernetes.io/hostname", anti=True))
        elif r < 0.2:
            app = rng.choice(APPS)
            add("pod-affinity", lambda p: p.pod_affinity({"matchLabels": {"app": app}}, "topology.kubernetes.io/zone"))
        elif r < 0.27:
            app = rng.choice(APPS)
            add("affinity-preferred", lambda p: p.pod_affinity({"matchLabels": {"app": app}}, "topology.kubernetes.io/zone",
                                                               required=False))
        if rng.random() < 0.12:
            key = rng.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"])
            hard = rng.random() < 0.7
            skew = rng.choice([1, 1, 2])
            add("spread" if hard else "spread-soft",
                lambda p: p.spread(skew, key, {"matchLabels": {"role": "preemptor"}}, hard=hard))
        if rng.random() < 0.05:
            for o in rng.sample([o for o in self.items if o["kind"] == "Pod" and o["spec"].get("nodeName")] or [{}], 1):
                if o:
                    o["spec"]["containers"][0].setdefault("ports", []).append({"containerPort": 9000, "hostPort": 9000, "protocol": "TCP"})
            add("host-ports", lambda p: p.host_port(9000))
        if self.tainted and rng.random() < 0.5:
            add("tolerations", lambda p: p.toleration("gpu", "Exists", effect="NoSchedule"))
        if rng.random() < 0.06:
            add("never", lambda p: p.never())
        return traits

    def pending(self, ns: str, name: str, prio: int, milli: int, mib: int, traits: list, group: str | None = None) -> None:
        p = make_pod(name, ns).priority(prio).label(role="preemptor", app="new").created(BASE + 20_000)
        self.shape(p, milli, mib)
        if group:
            p.group(group)
        for t in traits:
            t(p)
        self.items.append(p.obj())

    def case(self) -> GenCase:
        rng = self.rng
        for ns in NAMESPACES:
            self.items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.nodes()
        self.prios = sorted(rng.sample([0, 1, 10, 100, 500], rng.randint(2, 4)))
        self.victim_groups()
        self.fill()
        self.pdbs()
        prio = 1000
        if rng.random() < 0.1:
            prio = self.prios[-1]
            self.features.add("equal-priority")
        self.noise(prio)
        traits = self.preemptor_traits()
        ns = rng.choice(NAMESPACES)
        cid = f"gen2-{self.seed}-{self.index}"
        r = rng.random()
        if r < 0.3:
            self.features.add("pod")
            self.pending(ns, "pre", prio, rng.choice([500, 1000, 2000, 3000]), rng.choice([512, 1024, 4096]), traits)
            return GenCase(cid, self.seed, self.items, "pod", ns, "pre", self.features)
        if r < 0.7:
            size = rng.randint(2, 6)
            g = make_podgroup("job", ns).priority(prio).mode(rng.choice([None, "all", "single"]))
            if rng.random() < 0.65:
                g.gang(rng.choice([size, rng.randint(1, size)]))
                self.features.add("gang")
            else:
                self.features.add("basic")
            self.items.append(g.obj())
            milli, mib = rng.choice([500, 1000, 2000]), rng.choice([256, 1024, 2048])
            for k in range(size):
                self.pending(ns, f"job-{k}", prio, milli, mib, traits, group="job")
            return GenCase(cid, self.seed, self.items, "podgroup", ns, "job", self.features)
        self.features.add("cpg")
        root = make_cpg("tree", ns).priority(prio).mode(rng.choice([None, "all", "single"]))
        children = rng.randint(2, 3)
        nested = rng.random() < 0.25
        if rng.random() < 0.6:
            # minGroupCount counts the root's own children: one (tree-mid) when nested. More than it
            # has is a tree kube-scheduler never pops (GangScheduling PreEnqueue waits for groups
            # that never come), which the oracle cannot read off (gen2-1-137 timed out 30 s).
            root.gang(1 if nested else rng.randint(1, children))
            self.features.add("cpg-gang")
        self.items.append(root.obj())
        parent = "tree"
        if nested:
            self.items.append(make_cpg("tree-mid", ns).priority(prio).parent("tree").mode(rng.choice([None, "single"])).obj())
            parent = "tree-mid"
            self.features.add("cpg-nested")
        for c in range(children):
            size = rng.randint(1, 3)
            g = make_podgroup(f"tree-{c}", ns).priority(prio).parent(parent).mode(rng.choice([None, "single", "all"]))
            if rng.random() < 0.7:
                g.gang(rng.randint(1, size))
            else:
                self.features.add("cpg-basic-child")
            self.items.append(g.obj())
            milli, mib = rng.choice([500, 1000, 2000]), rng.choice([256, 1024])
            for k in range(size):
                self.pending(ns, f"tree-{c}-{k}", prio, milli, mib, traits, group=f"tree-{c}")
        return GenCase(cid, self.seed, self.items, "compositepodgroup", ns, "tree", self.features)
