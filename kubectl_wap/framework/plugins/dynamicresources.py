"""DynamicResources (DRA) Filter, the common cases (issue 15).

Mirrors kube-scheduler v1.37.2 pkg/scheduler/framework/plugins/dynamicresources (PreFilter,
Filter) and the structured allocator of k8s.io/dynamic-resource-allocation (allocator.go):

* a pod's claims: ``resourceClaimName``, or the claim generated from ``resourceClaimTemplateName``
  (pod status ``resourceClaimStatuses``);
* a claim that is already allocated pins the pod to the nodes its allocation allows
  (``nodeSelectorFromAllocation``), else "resourceclaim not available on the node";
* an unallocated claim is allocated on each node from the devices the node can reach (the
  ResourceSlice's nodeName, allNodes or nodeSelector): for each request, ``count`` devices (or all
  of them, allocationMode All) of the request's DeviceClass that match the class's and the
  request's CEL selectors (dracel.py) and are free, else "cannot allocate all claims";
* devices are taken by allocated claims (``status.allocation``) and by claims the simulation
  allocated to pods it placed; partitionable devices consume their pool's shared counters and
  devices with ``allowMultipleAllocations`` share their capacity (consumable capacity).

Every failure is UnschedulableAndUnresolvable in v1.37 (``statusUnschedulable``), and the plugin
has no PreFilterExtensions, so removing victims frees no device and preemption is "not helpful".
With the ``DRAPreemption`` gate (newer upstream, KEP-5690) a victim's claim is released when every
pod it is reserved for is removed, and allocation failures are Unschedulable so preemption tries.

The allocation state is derived from the cluster state (which pods are where) and cached per
``ClusterState.version``: add/remove/rollback need no hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable

from ...model import Pod
from ...model.dra import AllocatedDevice, ClaimSpec, Device, DeviceClass, DeviceID, DeviceRequest, DraObjects, ResourceClaim
from ..status import ERROR, OK, UNRESOLVABLE, UNSCHEDULABLE, Status
from .dracel import CelRuntimeError, CelUnsupported, DeviceEnv, device_env, matches
from .selectors import match_node_selector_terms

if TYPE_CHECKING:
    from ..state import ClusterState

NAME = "DynamicResources"
# Reason strings as upstream prints them (dynamicresources.go).
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_IN_USE = "resourceclaim in use"
RESERVED_FOR_MAX = 256  # resourceapi.ResourceClaimReservedForMaxSize
MAX_SEARCH_STEPS = 20_000  # a bound on the allocator's backtracking per node


@dataclass(slots=True)
class _Claim:
    """One claim of a pod as PreFilter resolves it."""

    key: str  # namespace/name of the ResourceClaim, or pod/claim for a not-yet-generated one
    label: str  # how messages name it
    spec: ClaimSpec
    claim: ResourceClaim | None  # None: generated from a template by the simulation


@dataclass(slots=True)
class _InUse:
    # Exclusively allocated devices, each with how many allocated claims hold it. A count, not a set:
    # the base state steps incrementally as victims leave and come back, and a device two claims
    # hold (a cluster in an inconsistent state) stays taken until both are released, as
    # GatherAllocatedState, which rebuilds from every remaining claim, has it. A set made the
    # answer depend on the order of the steps (string hashing: PYTHONHASHSEED).
    taken: dict[DeviceID, int] = field(default_factory=dict)
    consumed: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)  # shared devices' capacity
    counters: dict[tuple[str, str, str], dict[str, Fraction]] = field(default_factory=dict)  # (driver, pool, set)
    # claims allocated by the simulation: claim key -> (node index, devices)
    sim: dict[str, tuple[int, tuple[AllocatedDevice, ...]]] = field(default_factory=dict)


def _split(name: str) -> tuple[str, str]:
    d, _, n = name.partition("/")
    return d, n


class DraIndex:
    """The snapshot's DRA objects, indexed for one ClusterState (built once per analysis)."""

    def __init__(self, dra: DraObjects, nodes: list, pods: Iterable[Pod], preemption: bool = False):
        self.preemption = preemption  # the DRAPreemption gate
        self.classes: dict[str, DeviceClass] = {c.name: c for c in dra.device_classes}
        self.claims: dict[tuple[str, str], ResourceClaim] = {(c.namespace, c.name): c for c in dra.claims}
        self.templates = {(t.namespace, t.name): t for t in dra.templates}
        self.devices: list[Device] = [d for s in dra.slices for d in s.devices]
        self.by_id: dict[DeviceID, Device] = {d.id: d for d in self.devices}
        # Every device belongs to one node (slice nodeName): a pod's devices then compete only with
        # pods on its node, which lets reprieval replay only the victim's nodes.
        self.node_local = all(d.node_name for d in self.devices)
        self.counter_totals: dict[tuple[str, str, str], dict[str, Fraction]] = {}
        for s in dra.slices:
            for name, counters in s.shared_counters.items():
                self.counter_totals.setdefault((s.driver, s.pool, name), {}).update(counters)
        self.nodes = nodes
        self._on_node: dict[int, list[Device]] = {}
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        self._envs: dict[DeviceID, DeviceEnv] = {}
        self._sel: dict[tuple[tuple[str, ...], DeviceID], bool | Status] = {}
        self._cands: dict[tuple, list[Device] | Status] = {}
        # Pods of the snapshot that use claims: scheduled ones hold their claims' devices; the
        # others get claims allocated when the simulation places them.
        self.claim_pods: dict[str, Pod] = {p.uid: p for p in pods if p.resource_claims}
        self.bound_at_start = {uid for uid, p in self.claim_pods.items() if p.scheduled}
        self._users: dict[str, list[str]] = {}  # claim key -> uids of scheduled pods naming it
        self._claims_of: dict[str, list[str]] = {}  # scheduled pod uid -> keys of the claims it uses or is reserved in
        self._by_key = {c.key: c for c in dra.claims}
        self._full: _InUse | None = None
        self._base_last: tuple[frozenset, _InUse] = (frozenset(), _InUse())
        for c in dra.claims:
            for r in c.reserved_for:
                if r.is_pod:
                    self._claims_of.setdefault(r.uid, []).append(c.key)
        for uid in self.bound_at_start:
            pod = self.claim_pods[uid]
            for c in self.pod_claims(pod, quiet=True)[0]:
                self._users.setdefault(c.key, []).append(uid)
                self._claims_of.setdefault(uid, []).append(c.key)
                if c.claim is None:
                    self.warn(f"DRA: pod {pod.key} runs but the input has no ResourceClaim generated for its {c.label.split(' of pod')[0]} "
                              "(status.resourceClaimStatuses): the devices it holds are counted as free")
        self.pending_claim_pods = set(self.claim_pods) - self.bound_at_start
        self._cache: tuple[int, _InUse] | None = None
        self._base: dict[frozenset, _InUse] = {}
        self._last: tuple[frozenset, tuple, _InUse] | None = None

    # ---- warnings ---------------------------------------------------------------------------
    def warn(self, msg: str) -> None:
        if msg not in self._warned:
            self._warned.add(msg)
            self.warnings.append(msg)

    # ---- claims of a pod (PreFilter's podResourceClaims) --------------------------------------
    def pod_claims(self, pod: Pod, quiet: bool = False) -> tuple[list[_Claim], Status]:
        out: list[_Claim] = []
        generated = dict(pod.claim_statuses)
        for ref in pod.resource_claims:
            name = ref.claim_name or generated.get(ref.name, "")
            if name:
                c = self.claims.get((pod.namespace, name))
                if c is None:
                    return out, Status(UNRESOLVABLE, (f'resourceclaim.resource.k8s.io "{name}" not found',), NAME)
                out.append(_Claim(c.key, f"ResourceClaim {c.key}", c.spec, c))
            elif ref.template_name:
                t = self.templates.get((pod.namespace, ref.template_name))
                if t is None:
                    return out, Status(UNRESOLVABLE, (f'resourceclaimtemplate.resource.k8s.io "{ref.template_name}" not found',), NAME)
                # UPSTREAM-DIFF: kube-scheduler waits until the claim controller has created the
                # pod's claim from the template (seconds); a what-if pod has none yet, so we
                # allocate the template's claim as that generated claim would be.
                out.append(_Claim(f"{pod.key}#{ref.name}", f"claim {ref.name} of pod {pod.key} (template {t.namespace}/{t.name})", t.spec, None))
        if not quiet:
            for c in out:
                for what in c.spec.unsupported:
                    self.warn(f"DRA: {c.label}: {what} is not modelled; the claim is allocated without it")
        return out, OK

    # ---- devices -----------------------------------------------------------------------------
    def devices_on(self, idx: int) -> list[Device]:
        hit = self._on_node.get(idx)
        if hit is None:
            node = self.nodes[idx]
            hit = self._on_node[idx] = [d for d in self.devices if _reaches(d, node)]
        return hit

    def _env(self, d: Device) -> DeviceEnv:
        env = self._envs.get(d.id)
        if env is None:
            attrs: dict[str, dict[str, Any]] = {}
            for k, v in d.attributes.items():
                dom, n = _split(k)
                attrs.setdefault(dom, {})[n] = v
            cap: dict[str, dict[str, Fraction]] = {}
            for k, v in d.capacity.items():
                dom, n = _split(k)
                cap.setdefault(dom, {})[n] = v
            env = self._envs[d.id] = device_env(d.driver, d.allow_multiple_allocations, attrs, cap)
        return env

    def _selects(self, exprs: tuple[str, ...], d: Device, whose: str) -> bool | Status:
        """All selectors match: True/False, or an Error status for a CEL runtime error (as the
        allocator's selectorsMatch). Expressions outside our CEL subset match nothing, with a
        warning naming `whose`. Cached per (expressions, device)."""
        key = (exprs, d.id)
        hit = self._sel.get(key)
        if hit is not None:
            return hit
        res: bool | Status = True
        for i, e in enumerate(exprs):
            try:
                ok = matches(e, self._env(d))
            except CelUnsupported as err:
                self.warn(f"DRA: {whose}: selector #{i} {e!r} is outside the CEL subset we evaluate ({err}); "
                          "it is treated as matching no device")
                ok = False
            except CelRuntimeError as err:
                res = Status(ERROR, (f"{whose}: selector #{i} on device {'/'.join(d.id)}: CEL runtime error: {err}",), NAME)
                break
            if not ok:
                res = False
                break
        self._sel[key] = res
        return res

    # ---- allocation state --------------------------------------------------------------------
    def in_use(self, state: "ClusterState") -> _InUse:
        """Devices taken in the current cluster state (GatherAllocatedState), cached per version.

        Two parts, each cached by what it depends on: the snapshot's allocated claims minus the
        released ones (which bound claim pods are gone), and the claims the simulation allocated
        to the pods it placed, replayed in the order they were placed (the undo log's adds) so each
        gets what Filter found for it. A replay that only appends placements (the common step of
        a gang placement or a reprieval replay) extends the previous answer instead of starting over."""
        c = self._cache
        if c is not None and c[0] == state.version:
            return c[1]
        where = state.where
        gone = frozenset(uid for uid in self.bound_at_start if uid not in where) if self.preemption else frozenset()
        base = self._base.get(gone)
        if base is None:
            if self._full is None:
                self._full = _InUse()
                for claim in self.claims.values():
                    for a in claim.allocated or ():
                        self._take(self._full, a)
                self._base_last = (frozenset(), self._full)
            prev_gone, prev = self._base_last
            base = _copy(prev)
            # Only claims used by a pod that left or came back can change state: step from the
            # previous base (reprieval puts victims back one unit at a time).
            for key in {k for uid in gone ^ prev_gone for k in self._claims_of.get(uid, ())}:
                claim = self._by_key.get(key)
                if claim is None or claim.allocated is None:
                    continue
                was, now = self._released(claim, prev_gone), self._released(claim, gone)
                if was != now:
                    for a in claim.allocated:
                        self._take(base, a, -1 if now else 1)
            if len(self._base) > 256:
                self._base.clear()
            self._base[gone] = base
            self._base_last = (gone, base)
        order: dict[str, int] = {}
        for added, pod, idx in state._log:
            if added is True and pod.uid in self.pending_claim_pods:
                order.pop(pod.uid, None)
                order[pod.uid] = idx
        placed = tuple((uid, idx) for uid, idx in order.items() if where.get(uid) == idx)
        last = self._last
        if last is not None and last[0] == gone and placed[:len(last[1])] == last[1]:
            u, todo = (last[2] if len(placed) == len(last[1]) else _copy(last[2])), placed[len(last[1]):]
        else:
            u, todo = _copy(base), placed
        for uid, idx in todo:
            claims, st = self.pod_claims(self.claim_pods[uid], quiet=True)
            want = [c for c in claims if (c.claim is None or c.claim.allocated is None) and c.key not in u.sim]
            if not st.ok or not want:
                continue
            got = self.allocate(u, want, idx)
            if isinstance(got, dict):
                for key, devs in got.items():
                    u.sim[key] = (idx, devs)
                    for a in devs:
                        self._take(u, a)
        self._last = (gone, placed, u)
        self._cache = (state.version, u)
        return u

    def _released(self, claim: ResourceClaim, gone: frozenset) -> bool:
        """DRAPreemption's RemovePod: a claim is released once every pod it is reserved for has
        been removed (`gone`: the scheduled claim pods no longer in the state); a claim reserved
        for anything else (a PodGroup) never is; an allocated claim reserved for nobody is
        released when a pod using it is removed."""
        if not self.preemption:
            return False
        res = claim.reserved_for
        if res:
            if not all(r.is_pod for r in res):
                return False
            return all(r.uid in gone for r in res)
        return any(uid in gone for uid in self._users.get(claim.key, ()))

    def _take(self, u: _InUse, a: AllocatedDevice, sign: int = 1) -> None:
        """Count (sign 1) or uncount (-1) one allocated device in `u`."""
        d = self.by_id.get(a.id)
        if d is None:
            return  # allocated from a slice the snapshot does not have: nothing to collide with
        if d.allow_multiple_allocations:
            acc = u.consumed.setdefault(d.id, {})
            for k, v in (a.consumed_capacity or d.capacity).items():
                k = _qualify(k, d.driver)
                acc[k] = acc.get(k, Fraction(0)) + sign * v
        else:
            n = u.taken.get(d.id, 0) + sign
            if n > 0:
                u.taken[d.id] = n
            else:
                u.taken.pop(d.id, None)
        for cc in d.consumes_counters:
            acc = u.counters.setdefault((d.driver, d.pool, cc.counter_set), {})
            for k, v in cc.counters.items():
                acc[k] = acc.get(k, Fraction(0)) + sign * v

    # ---- the allocator -----------------------------------------------------------------------
    def allocate(self, u: _InUse, claims: list[_Claim], idx: int) -> dict[str, tuple[AllocatedDevice, ...]] | Status:
        """Allocate every claim on node `idx` (Allocator.Allocate): a device per slot, depth
        first with backtracking over the candidates in slice order, like the structured
        allocator. Returns claim key -> devices, or the failing status."""
        slots: list[tuple[_Claim, DeviceRequest, list[Device]]] = []
        for c in claims:
            for r in c.spec.requests:
                cands = self._candidates(c, r, idx)
                if isinstance(cands, Status):
                    return cands
                if r.all_devices:
                    # allocationMode All: every matching device, all of them free.
                    if not cands:
                        return self._fail()
                    slots.extend((c, r, [d]) for d in cands)
                else:
                    slots.extend((c, r, cands) for _ in range(r.count))
        picked: list[Device] = []
        used: set[DeviceID] = set()
        consumed: dict[DeviceID, dict[str, Fraction]] = {}
        counters: dict[tuple[str, str, str], dict[str, Fraction]] = {}
        steps = [0]

        def fits(c: _Claim, r: DeviceRequest, d: Device) -> bool:
            if d.allow_multiple_allocations:
                want = _demand(r, d)
                have = u.consumed.get(d.id, {})
                extra = consumed.get(d.id, {})
                for k, total in d.capacity.items():
                    if have.get(k, 0) + extra.get(k, 0) + want.get(k, 0) > total:
                        return False
            elif d.id in u.taken or d.id in used:
                return False
            for cc in d.consumes_counters:
                key = (d.driver, d.pool, cc.counter_set)
                total = self.counter_totals.get(key, {})
                for k, v in cc.counters.items():
                    if u.counters.get(key, {}).get(k, 0) + counters.get(key, {}).get(k, 0) + v > total.get(k, 0):
                        return False
            return True

        def book(r: DeviceRequest, d: Device, sign: int) -> None:
            if d.allow_multiple_allocations:
                acc = consumed.setdefault(d.id, {})
                for k, v in _demand(r, d).items():
                    acc[k] = acc.get(k, 0) + sign * v
            elif sign > 0:
                used.add(d.id)
            else:
                used.discard(d.id)
            for cc in d.consumes_counters:
                acc2 = counters.setdefault((d.driver, d.pool, cc.counter_set), {})
                for k, v in cc.counters.items():
                    acc2[k] = acc2.get(k, 0) + sign * v

        def search(i: int, start: int) -> bool:
            if i == len(slots):
                return True
            steps[0] += 1
            if steps[0] > MAX_SEARCH_STEPS:
                return False
            c, r, cands = slots[i]
            # Slots of one request take devices in candidate order (no permutations of a set).
            same = i > 0 and slots[i - 1][1] is r and slots[i - 1][0] is c and not r.all_devices
            for j in range(start if same else 0, len(cands)):
                d = cands[j]
                if d.allow_multiple_allocations and same and picked and picked[-1] is d:
                    continue  # one request never takes the same shared device twice
                if not fits(c, r, d):
                    continue
                book(r, d, +1)
                picked.append(d)
                nxt_same = i + 1 < len(slots) and slots[i + 1][1] is r and slots[i + 1][0] is c
                if search(i + 1, j + 1 if nxt_same else 0):
                    return True
                picked.pop()
                book(r, d, -1)
            return False

        if not search(0, 0):
            if steps[0] > MAX_SEARCH_STEPS:
                self.warn(f"DRA: the allocation search on node {self.nodes[idx].name} gave up after {MAX_SEARCH_STEPS} steps")
            return self._fail()
        out: dict[str, list[AllocatedDevice]] = {c.key: [] for c in claims}
        for (c, r, _), d in zip(slots, picked):
            out[c.key].append(AllocatedDevice(r.name, d.driver, d.pool, d.name,
                                              _demand(r, d) if d.allow_multiple_allocations else {}))
        return {k: tuple(v) for k, v in out.items()}

    def _candidates(self, c: _Claim, r: DeviceRequest, idx: int) -> list[Device] | Status:
        """The devices node `idx` reaches that the request's class and selectors accept, in slice
        order (free or not), cached per (class, selectors, node)."""
        key = (r.device_class, r.selectors, idx)
        hit = self._cands.get(key)
        if hit is not None:
            return hit
        cls = self.classes.get(r.device_class)
        if cls is None:
            return Status(UNRESOLVABLE, (f"request {r.name}: device class {r.device_class} does not exist",), NAME)
        out: list[Device] | Status = []
        for d in self.devices_on(idx):
            ok = self._selects(cls.selectors, d, f"class {cls.name}")
            if ok is True:
                ok = self._selects(r.selectors, d, c.label)
            if isinstance(ok, Status):
                out = ok
                break
            if ok:
                out.append(d)
        self._cands[key] = out
        return out

    def _fail(self) -> Status:
        # UPSTREAM-DIFF [DRAPreemption, inferred from upstream's integration tests]: with the gate
        # the failure must be resolvable by preemption, so it is Unschedulable.
        return Status(UNSCHEDULABLE if self.preemption else UNRESOLVABLE, (ERR_CANNOT_ALLOCATE,), NAME)

    def holds_group_claim(self, pod: Pod) -> bool:
        """The pod uses a claim reserved for something other than pods (its PodGroup): with
        DRAPreemption, such a pod is no victim of a pod-by-pod preemptor (upstream's integration
        test "podgroup-preemption": "No preemption victims found")."""
        for c in self.pod_claims(pod, quiet=True)[0]:
            if c.claim is not None and any(not r.is_pod for r in c.claim.reserved_for):
                return True
        return False


def _copy(u: _InUse) -> _InUse:
    return _InUse(dict(u.taken), {k: dict(v) for k, v in u.consumed.items()}, {k: dict(v) for k, v in u.counters.items()}, dict(u.sim))


def _qualify(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _demand(r: DeviceRequest, d: Device) -> dict[str, Fraction]:
    """What one allocation consumes of a shared device: the request's capacity.requests, the
    whole capacity for names it does not request (no requestPolicy modelled)."""
    req = {_qualify(k, d.driver): v for k, v in r.capacity.items()}
    return {k: req.get(k, total) for k, total in d.capacity.items()}


def _reaches(d: Device, node: Any) -> bool:
    if d.node_name:
        return d.node_name == node.name
    if d.all_nodes:
        return True
    if d.node_selector is not None:
        return match_node_selector_terms(d.node_selector, node)
    return False


@dataclass(slots=True)
class DraData:
    claims: list[_Claim]
    to_allocate: list[_Claim]
    pinned: list[_Claim]  # allocated claims: the node must be one their allocation allows


class DynamicResources:
    """The cross-node plugin shape (base.py): cycle data from PreFilter, Filter per node."""

    name = NAME
    score_weight = 0  # Score only ranks prioritized-list choices (DRAPrioritizedList), not modelled

    def relevant(self, state: "ClusterState", pod: Pod) -> bool:
        return bool(pod.resource_claims) and getattr(state, "dra", None) is not None

    def pre_filter(self, state: "ClusterState", pod: Pod) -> tuple[DraData, Status]:
        ix: DraIndex = state.dra
        claims, st = ix.pod_claims(pod)
        if not st.ok:
            return DraData([], [], []), st
        pinned, todo = [], []
        for c in claims:
            if c.claim is not None and c.claim.allocated is not None:
                res = c.claim.reserved_for
                # Allocated and reserved for others: shared, usable by this pod too unless the
                # reservation list is full (resourceclaim.CanBeReserved, ResourceClaimReservedForMaxSize).
                if len(res) >= RESERVED_FOR_MAX and not any(r.uid == pod.uid for r in res):
                    return DraData(claims, [], []), Status(UNRESOLVABLE, (ERR_IN_USE,), NAME)
                pinned.append(c)
            else:
                for r in c.spec.requests:
                    if r.device_class not in ix.classes:
                        return DraData(claims, [], []), Status(
                            UNRESOLVABLE, (f"request {r.name}: device class {r.device_class} does not exist",), NAME)
                todo.append(c)
        return DraData(claims, todo, pinned), OK

    def clone(self, data: DraData) -> DraData:
        return data  # read-only: the allocation state lives in the cluster state

    def add_pod(self, state: "ClusterState", data: DraData, pod: Pod, added: Pod, node_idx: int) -> bool:
        return bool(added.resource_claims)

    def remove_pod(self, state: "ClusterState", data: DraData, pod: Pod, removed: Pod, node_idx: int) -> bool:
        return bool(removed.resource_claims) and state.dra.preemption

    def passes_everywhere(self, data: DraData) -> bool:
        return not data.claims

    def filter(self, state: "ClusterState", data: DraData, pod: Pod, node_idx: int) -> Status:
        ix: DraIndex = state.dra
        node = state.nodes[node_idx]
        u = ix.in_use(state)
        for c in data.pinned:
            sel = c.claim.allocation_node_selector if c.claim is not None else None
            if sel is not None and not match_node_selector_terms(sel, node):
                return Status(UNRESOLVABLE, (ERR_NOT_AVAILABLE,), NAME)
        todo = []
        for c in data.to_allocate:
            sim = u.sim.get(c.key)
            if sim is None:
                todo.append(c)
            elif not all(_reaches(ix.by_id[a.id], node) for a in sim[1] if a.id in ix.by_id):
                return Status(UNRESOLVABLE, (ERR_NOT_AVAILABLE,), NAME)
        if not todo:
            return OK
        got = ix.allocate(u, todo, node_idx)
        return got if isinstance(got, Status) else OK

    def score(self, state: "ClusterState", pod: Pod, feasible: list[int]) -> list[int]:
        return [0] * len(feasible)


PLUGIN = DynamicResources()


def reaches_other_nodes(pod: Pod, cycle: Any, state: "ClusterState") -> bool:
    """Whether `pod`'s DRA verdict on its node can change when pods on *other* nodes come and go:
    it has claims and some device is not bound to a single node (allNodes / nodeSelector slices)."""
    ix = getattr(state, "dra", None)
    return bool(pod.resource_claims) and ix is not None and not ix.node_local and any(p is PLUGIN for p, _ in cycle.plugins)


def attach(state: "ClusterState", snap: Any, preemption: bool = False) -> None:
    """Give `state` the snapshot's DRA index (state.dra; None when the snapshot has no DRA objects)."""
    dra = getattr(snap, "dra", None)
    state.dra = DraIndex(dra, state.nodes, snap.pods, preemption) if dra is not None else None
