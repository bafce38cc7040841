"""Volume filters (issue 15): VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, and
the conversion of the storage objects. Expected reasons and codes are upstream v1.37.2's
(pkg/scheduler/framework/plugins/{volumerestrictions,nodevolumelimits,volumebinding,volumezone})."""

from __future__ import annotations

from typing import Any

from kubectl_wap.framework.buildstate import build_state
from kubectl_wap.framework.filtering import filter_all, pre_filter
from kubectl_wap.framework.schedule_one import Scheduler
from kubectl_wap.framework.status import ERROR, UNRESOLVABLE, UNSCHEDULABLE
from kubectl_wap.framework.volumes import build_volume_index
from kubectl_wap.framework.volumewarnings import unmodeled
from kubectl_wap.preemption.analyze import analyze
from kubectl_wap.snapshot.decode.convert import build_snapshot
from kubectl_wap.model.storage import PodVolume

NS = "ns"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, labels: dict | None = None, pods: str = "10") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": pods}}}


def pod(name: str, claims: list[str] = (), node_name: str = "", prio: int = 100, ephemeral: list[str] = ()) -> dict:
    vols: list[dict[str, Any]] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    vols += [{"name": e, "ephemeral": {"volumeClaimTemplate": {}}} for e in ephemeral]
    spec: dict[str, Any] = {"priority": prio, "containers": [{"name": "c", "image": "i"}], "volumes": vols}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": NS, "name": name, "uid": name}, "spec": spec,
            "status": {"phase": "Running" if node_name else "Pending"}}


def pvc(name: str, volume: str = "", modes: tuple = ("ReadWriteOnce",), sc: str | None = None, bound: bool = True,
        ann: dict | None = None, **extra: Any) -> dict:
    annotations = dict(ann or {})
    if bound and volume:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    spec: dict[str, Any] = {"accessModes": list(modes)}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    md = {"namespace": extra.pop("namespace", NS), "name": name, "annotations": annotations, **extra}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}


def pv(name: str, labels: dict | None = None, affinity: list | None = None, csi: tuple[str, str] | None = None) -> dict:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"]}
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    if csi:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def sc(name: str, mode: str | None = "Immediate", provisioner: str = "csi.example.com") -> dict:
    o = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        o["volumeBindingMode"] = mode
    return o


def csinode(name: str, limits: dict[str, int]) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": d, "nodeID": name, "allocatable": {"count": n}} for d, n in limits.items()]}}


# Every storage kind present (so every volume plugin runs); tests add what they need.
ALL_KINDS = [sc("unused"), csinode("unused", {}), pv("unused"), pvc("unused")]


def statuses(items: list[dict], name: str) -> dict[str, Any]:
    """Filter status per node name for pod `name` (None = feasible)."""
    snap = build_snapshot(items)
    state = build_state(snap)
    p = next(x for x in snap.pods if x.name == name)
    cycle = pre_filter(state, p)
    mask, st = filter_all(state, Scheduler(state).static, p, cycle)
    return {n.name: (None if mask[i] else st[i]) for i, n in enumerate(state.nodes)}


def codes(items: list[dict], name: str) -> dict[str, tuple | None]:
    return {k: None if s is None else (s.code, s.plugin, s.reasons) for k, s in statuses(items, name).items()}


# ---- conversion ---------------------------------------------------------------------------------

def test_conversion_keeps_what_the_plugins_read() -> None:
    snap = build_snapshot([
        pod("p", ["c1"], ephemeral=["scratch"]),
        pvc("c1", "v1", modes=("ReadWriteOncePod",), sc="spec-class", ann={"volume.beta.kubernetes.io/storage-class": "beta"}),
        pvc("c2", "v2", bound=False),
        pv("v1", labels={ZONE: "a__b", "team": "x"}, affinity=[{"matchExpressions": [{"key": "k", "operator": "In", "values": ["1"]}]}],
           csi=("d", "h1")),
        sc("fast", "WaitForFirstConsumer"), sc("nomode", None),
        csinode("n1", {"d": 3}),
    ])
    assert snap.pods[0].volumes == (PodVolume("v0", "c1"), PodVolume("scratch", "", True))
    assert snap.pods[0].volumes[1].claim_name("p") == "p-scratch"  # ephemeral.VolumeClaimName
    c1, c2 = snap.pvcs
    assert c1.read_write_once_pod and c1.fully_bound and c1.volume_name == "v1"
    assert c1.storage_class == "beta"  # GetPersistentVolumeClaimClass: the beta annotation wins
    assert not c2.fully_bound and c2.volume_name == "v2"  # volumeName without bind-completed
    v1 = snap.pvs[0]
    assert v1.labels == {ZONE: "a__b"} and v1.csi_driver == "d" and v1.csi_handle == "h1"
    assert v1.node_affinity is not None and v1.node_affinity[0].match_expressions[0].key == "k"
    assert [(s.name, s.volume_binding_mode) for s in snap.storage_classes] == [("fast", "WaitForFirstConsumer"), ("nomode", None)]
    assert snap.csi_nodes[0].limits == {"d": 3}
    assert snap.warnings == []  # storage kinds are read, not "ignored"


def test_older_snapshot_without_storage_objects_skips_volume_filters_and_warns() -> None:
    items = [node("n1"), pod("p", ["missing"])]
    assert codes(items, "p") == {"n1": None}  # no "not found": PVCs were never captured
    snap = build_snapshot(items)
    w = unmodeled(build_volume_index(snap), snap.pods)
    assert len(w) == 1 and "PersistentVolumeClaims are not in the snapshot" in w[0]


def test_missing_kinds_skip_only_the_filters_that_need_them() -> None:
    snap = build_snapshot([node("n1"), pod("p", ["c"]), pvc("c")])
    w = unmodeled(build_volume_index(snap), snap.pods)
    assert w == ["not in the snapshot: PersistentVolumes, StorageClasses, CSINodes; filters not applied to the "
                 "preemptor's volumes: NodeVolumeLimits, VolumeBinding, VolumeZone"]


# ---- VolumeRestrictions -------------------------------------------------------------------------

RWOP_MSG = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"


def test_rwop_claim_in_use_is_unschedulable_on_every_node() -> None:
    items = ALL_KINDS + [node("n1"), node("n2"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"),
                         pod("holder", ["c"], "n1"), pod("p", ["c"])]
    want = (UNSCHEDULABLE, "VolumeRestrictions", (RWOP_MSG,))  # Unschedulable: preemption may help
    assert codes(items, "p") == {"n1": want, "n2": want}


def test_rwop_claim_not_in_use_and_rwo_claims_pass() -> None:
    rwop = ALL_KINDS + [node("n1"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"), pod("p", ["c"])]
    assert codes(rwop, "p") == {"n1": None}
    rwo = ALL_KINDS + [node("n1"), pvc("c", "v"), pv("v"), pod("holder", ["c"], "n1"), pod("p", ["c"])]
    assert codes(rwo, "p") == {"n1": None}  # ReadWriteOnce is not VolumeRestrictions' business


def test_rwop_claim_of_the_same_name_in_another_namespace_is_no_conflict() -> None:
    other = pod("holder", ["c"], "n1")
    other["metadata"]["namespace"] = "elsewhere"
    items = ALL_KINDS + [node("n1"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"),
                         pvc("c", "v", modes=("ReadWriteOncePod",), namespace="elsewhere"), other, pod("p", ["c"])]
    assert codes(items, "p") == {"n1": None}  # IsPVCUsedByPods keys by namespace/name


def test_missing_claim_is_unresolvable_with_upstreams_not_found_text() -> None:
    items = ALL_KINDS + [node("n1"), pod("p", ["nope"])]
    assert codes(items, "p") == {"n1": (UNRESOLVABLE, "VolumeRestrictions", ('persistentvolumeclaim "nope" not found',))}


def test_removing_the_holder_clears_the_conflict_and_adding_it_back_restores_it() -> None:
    # PreFilterExtensions RemovePod/AddPod (updateWithPod): what preemption's victim selection does.
    snap = build_snapshot(ALL_KINDS + [node("n1"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"),
                                       pod("holder", ["c"], "n1"), pod("p", ["c"])])
    state = build_state(snap)
    sched = Scheduler(state)
    holder, p = snap.pods
    cycle = pre_filter(state, p)
    assert not sched.filter_with_nominated(p, cycle, 0).ok
    idx = state.remove_pod(holder)
    assert cycle.remove_pod(state, p, holder, idx) is True
    assert sched.filter_with_nominated(p, cycle, 0).ok
    state.add_pod(holder, idx)
    cycle.add_pod(state, p, holder, idx)
    assert sched.filter_with_nominated(p, cycle, 0).reasons == (RWOP_MSG,)


def test_rwop_holder_is_preempted_by_a_higher_priority_pod() -> None:
    # kubernetes/kubernetes test/integration/scheduler/preemption/misc/miscpreemption_test.go
    # TestReadWriteOncePodPreemption 'preempt single pod' (also a scenario fixture); here on two
    # nodes: only the holder's node becomes feasible.
    snap = build_snapshot(ALL_KINDS + [node("n1"), node("n2"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"),
                                       pod("holder", ["c"], "n2", prio=100), pod("p", ["c"], prio=300)])
    res = analyze(snap, "pod", NS, "p")
    assert res.outcome == "Preempt"
    assert [v.key for v in res.victim_pods] == [f"{NS}/holder"]
    assert res.nominated_node == "n2"


def test_higher_priority_holder_is_not_preempted() -> None:
    snap = build_snapshot(ALL_KINDS + [node("n1"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"),
                                       pod("holder", ["c"], "n1", prio=500), pod("p", ["c"], prio=300)])
    assert analyze(snap, "pod", NS, "p").outcome == "Unschedulable"


# ---- NodeVolumeLimits ---------------------------------------------------------------------------

LIMIT_MSG = "node(s) exceed max volume count"


def _limits_cluster(p_claims: list[str]) -> list[dict]:
    return ALL_KINDS + [
        node("n1"), node("n2"), csinode("n1", {"d": 1}), csinode("n2", {"d": 2}),
        pvc("a", "va"), pv("va", csi=("d", "ha")), pvc("b", "vb"), pv("vb", csi=("d", "hb")),
        pvc("a2", "va2"), pv("va2", csi=("d", "ha")),  # another PV with the same handle as va
        pod("existing", ["a"], "n1"), pod("p", p_claims),
    ]


def test_csi_attach_limit_counts_the_volumes_already_on_the_node() -> None:
    assert codes(_limits_cluster(["b"]), "p") == {"n1": (UNSCHEDULABLE, "NodeVolumeLimits", (LIMIT_MSG,)), "n2": None}


def test_volumes_up_to_the_limit_fit() -> None:
    """csi.go Filter: `currentVolumeCount + count > maxVolumeLimit` fails, so a pod that brings n2 to
    exactly its limit of 2 fits; on n1, where "a" is attached already, "b" is one over its limit 1."""
    got = codes(_limits_cluster(["a", "b"]), "p")
    assert got == {"n1": (UNSCHEDULABLE, "NodeVolumeLimits", (LIMIT_MSG,)), "n2": None}, f"got {got} (0 + 2 volumes on n2 is not over 2)"


def test_a_volume_already_attached_to_the_node_is_not_counted_twice() -> None:
    assert codes(_limits_cluster(["a2"]), "p") == {"n1": None, "n2": None}  # same driver/handle as "a"


def test_no_csinode_or_no_limit_means_no_limit() -> None:
    items = ALL_KINDS + [node("n1"), pvc("a", "va"), pv("va", csi=("d", "ha")), pvc("b", "vb"), pv("vb", csi=("d", "hb")),
                         pod("existing", ["a"], "n1"), pod("p", ["b"])]
    assert codes(items, "p") == {"n1": None}
    assert codes(items + [csinode("n1", {"other": 0})], "p") == {"n1": None}


def test_unprovisioned_claim_counts_against_its_provisioner() -> None:
    # getCSIDriverInfoFromSC: no PV yet -> the StorageClass provisioner, a handle per claim.
    items = ALL_KINDS + [node("n1"), csinode("n1", {"csi.example.com": 1}), sc("wffc", "WaitForFirstConsumer"),
                         pvc("a", "va"), pv("va", csi=("csi.example.com", "ha")), pod("existing", ["a"], "n1"),
                         pvc("new", sc="wffc", bound=False), pod("p", ["new"])]
    assert codes(items, "p") == {"n1": (UNSCHEDULABLE, "NodeVolumeLimits", (LIMIT_MSG,))}


# ---- VolumeBinding ------------------------------------------------------------------------------

def test_bound_pv_node_affinity() -> None:
    term = [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["here"]}]}]
    items = ALL_KINDS + [node("n1", {"disk": "here"}), node("n2"), pvc("c", "v"), pv("v", affinity=term), pod("p", ["c"])]
    assert codes(items, "p") == {
        "n1": None, "n2": (UNRESOLVABLE, "VolumeBinding", ("node(s) didn't match PersistentVolume's node affinity",))}


def test_bound_claim_whose_pv_does_not_exist() -> None:
    # For a PVC volume VolumeZone's PreFilter already fails (the PV is not found) and a PreFilter
    # failure wins over every Filter; VolumeZone does not read ephemeral volumes, so there the
    # VolumeBinding Filter reason shows.
    items = ALL_KINDS + [node("n1"), pvc("c", "gone"), pod("p", ["c"])]
    assert codes(items, "p") == {"n1": (UNRESOLVABLE, "VolumeZone", ('persistentvolume "gone" not found',))}
    items = ALL_KINDS + [node("n1"), pvc("p-scratch", "gone"), pod("p", ephemeral=["scratch"])]
    assert codes(items, "p") == {
        "n1": (UNRESOLVABLE, "VolumeBinding", ("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",))}


def test_unbound_immediate_claim_makes_the_pod_unschedulable() -> None:
    items = ALL_KINDS + [node("n1"), sc("imm", "Immediate"), pvc("c", sc="imm", bound=False), pod("p", ["c"])]
    assert codes(items, "p") == {"n1": (UNRESOLVABLE, "VolumeBinding", ("pod has unbound immediate PersistentVolumeClaims",))}
    # a prebound claim (volumeName set, binding not completed) counts as immediate too
    items = ALL_KINDS + [node("n1"), sc("wffc", "WaitForFirstConsumer"), pvc("c", "v", sc="wffc", bound=False), pv("v"), pod("p", ["c"])]
    assert codes(items, "p")["n1"][2] == ("pod has unbound immediate PersistentVolumeClaims",)


def test_unbound_wait_for_first_consumer_claim_passes_with_a_warning() -> None:
    items = ALL_KINDS + [node("n1"), node("n2"), sc("wffc", "WaitForFirstConsumer"), pvc("c", sc="wffc", bound=False), pod("p", ["c"])]
    assert codes(items, "p") == {"n1": None, "n2": None}
    snap = build_snapshot(items)
    w = unmodeled(build_volume_index(snap), [p for p in snap.pods if p.name == "p"])
    assert w == [f"unbound WaitForFirstConsumer claim(s) {NS}/c: volume provisioning and binding are not simulated "
                 "(any node is assumed to get a volume)"]
    # with a selected node (provisioning started there), only that node fits
    items[-2] = pvc("c", sc="wffc", bound=False, ann={"volume.kubernetes.io/selected-node": "n2"})
    assert codes(items, "p") == {"n1": (UNRESOLVABLE, "VolumeBinding", ("node(s) didn't find available persistent volumes to bind",)), "n2": None}


def test_claim_states_that_prefilter_rejects() -> None:
    lost = pvc("c", "v")
    lost["status"] = {"phase": "Lost"}
    items = ALL_KINDS + [node("n1"), lost, pv("v"), pod("p", ["c"])]
    assert codes(items, "p")["n1"] == (UNRESOLVABLE, "VolumeBinding", ('persistentvolumeclaim "c" bound to non-existent persistentvolume "v"',))
    items = ALL_KINDS + [node("n1"), pvc("c", "v", deletionTimestamp="2026-01-01T00:00:00Z"), pv("v"), pod("p", ["c"])]
    assert codes(items, "p")["n1"] == (UNRESOLVABLE, "VolumeBinding", ('persistentvolumeclaim "c" is being deleted',))
    items = ALL_KINDS + [node("n1"), pod("p", ephemeral=["scratch"])]
    assert codes(items, "p")["n1"] == (
        UNRESOLVABLE, "VolumeBinding", ('waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',))
    items = ALL_KINDS + [node("n1"), sc("nomode", None), pvc("c", sc="nomode", bound=False), pod("p", ["c"])]
    assert codes(items, "p")["n1"] == (ERROR, "VolumeBinding", ('VolumeBindingMode not set for StorageClass "nomode"',))


# ---- VolumeZone ---------------------------------------------------------------------------------

ZONE_MSG = "node(s) had no available volume zone"


def test_zonal_pv_fits_only_nodes_of_its_zone() -> None:
    items = ALL_KINDS + [node("a1", {ZONE: "a"}), node("b1", {ZONE: "b"}), node("bare"),
                         pvc("c", "v"), pv("v", labels={ZONE: "a"}), pod("p", ["c"])]
    assert codes(items, "p") == {"a1": None, "b1": (UNRESOLVABLE, "VolumeZone", (ZONE_MSG,)), "bare": None}


def test_beta_zone_label_and_multi_zone_values() -> None:
    beta = "failure-domain.beta.kubernetes.io/zone"
    items = ALL_KINDS + [node("a1", {ZONE: "a"}), node("b1", {ZONE: "b"}), node("c1", {ZONE: "c"}),
                         pvc("c", "v"), pv("v", labels={beta: "a__b"}), pod("p", ["c"])]
    # the PV's beta key is looked up on the node under its GA name (translateToGALabel)
    assert codes(items, "p") == {"a1": None, "b1": None, "c1": (UNRESOLVABLE, "VolumeZone", (ZONE_MSG,))}


def test_volume_zone_prefilter_errors() -> None:
    # getPVbyPod: an unbound claim without a class, or with an Immediate class, has no PV to read
    # (VolumeBinding's PreFilter, earlier in order, already rejects the Immediate one).
    items = ALL_KINDS + [node("n1"), pvc("c", bound=False), pod("p", ["c"])]
    assert codes(items, "p")["n1"] == (UNRESOLVABLE, "VolumeBinding", ("pod has unbound immediate PersistentVolumeClaims",))
    items = ALL_KINDS + [node("n1"), sc("wffc", "WaitForFirstConsumer"), pvc("c", sc="wffc", bound=False), pod("p", ["c"])]
    assert codes(items, "p")["n1"] is None  # provisioned in the node's zone: skipped


# ---- workload-aware preemption ------------------------------------------------------------------

def test_wap_spares_the_rwop_holder_as_v1_37_2_does_and_warns() -> None:
    # Derived from upstream v1.37.2, not asserted by an upstream test: selectVictimsOnDomain removes
    # every potential victim (Snapshot.RemovePod decrements usedPVCRefCounts) before
    # podGroupSchedulingFunc builds fresh CycleStates, so VolumeRestrictions' PreFilter finds the
    # claim unused and returns Skip; RunPreFilterExtensionAddPod then skips the plugin when the holder
    # is put back, and the holder is reprieved. The per-pod path (test above) does preempt it.
    items = ALL_KINDS + [node("n1"), pvc("c", "v", modes=("ReadWriteOncePod",)), pv("v"), pod("holder", ["c"], "n1", prio=100)]
    p = pod("p", ["c"], prio=300)
    p["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    items += [p, {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": NS, "name": "pg"},
                  "spec": {"priority": 300, "schedulingPolicy": {"gang": {"minCount": 1}}}}]
    res = analyze(build_snapshot(items), "podgroup", NS, "pg")
    assert res.outcome == "Preempt" and res.victim_pods == []
    assert any(w.startswith(f"ReadWriteOncePod claim {NS}/c of pod {NS}/p stays held by {NS}/holder (not a victim)")
               for w in res.warnings)


def test_prefilter_rejection_is_printed_as_prefilter_msg() -> None:
    # schedulePod sets Diagnosis.PreFilterMsg when a PreFilter rejects; FitError.Error() then prints
    # "0/N nodes are available: <msg>." without the per-node count.
    snap = build_snapshot(ALL_KINDS + [node("n1"), node("n2"), pod("p", ["nope"])])
    res = analyze(snap, "pod", NS, "p")
    assert res.outcome == "Unschedulable"
    assert res.message.startswith('0/2 nodes are available: persistentvolumeclaim "nope" not found. preemption: ')


def test_wap_with_csi_limits_fast_reprieval_equals_literal() -> None:
    # NodeVolumeLimits counts the volumes of the pods on the node: the reprieval fast path's
    # node-local/cross-node split does not hold for it, so WAP falls back to the literal replay
    # (reprieval.reprieve_in_order); both must give the same victims.
    items = ALL_KINDS + [sc("wffc", "WaitForFirstConsumer"),
                         {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"namespace": NS, "name": "pg"},
                          "spec": {"priority": 300, "schedulingPolicy": {"gang": {"minCount": 2}}}}]
    for n in ("n1", "n2", "n3"):
        items += [node(n, {"kubernetes.io/hostname": n}), csinode(n, {"csi.example.com": 1})]
    for i, n in enumerate(("n1", "n2", "n3")):
        items += [pvc(f"old{i}", f"vold{i}"), pv(f"vold{i}", csi=("csi.example.com", f"h{i}")), pod(f"old{i}", [f"old{i}"], n, prio=100 + i)]
    for i in range(2):
        p = pod(f"g{i}", [f"new{i}"], prio=300)
        p["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
        # a spread constraint that never binds, only so the fast path takes its cross-node branch
        p["spec"]["topologySpreadConstraints"] = [{"maxSkew": 5, "topologyKey": "kubernetes.io/hostname",
                                                   "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"g": "x"}}}]
        items += [pvc(f"new{i}", sc="wffc", bound=False), p]
    fast = analyze(build_snapshot(items), "podgroup", NS, "pg", fast=True)
    literal = analyze(build_snapshot(items), "podgroup", NS, "pg", fast=False)
    assert fast.outcome == literal.outcome == "Preempt"
    assert sorted(p.key for p in fast.victim_pods) == sorted(p.key for p in literal.victim_pods)
    assert len(fast.victim_pods) == 2  # one attached volume freed on each of two nodes
