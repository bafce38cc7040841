"""Kueue's own Configuration (config.kueue.x-k8s.io, the `controller_manager_config.yaml` of
ConfigMap kueue-system/kueue-manager-config): the few fields that change what the next admission
cycle does. Kueue reads it at start-up; it is not a cluster object the snapshot lists, so without
--kueue-config the model assumes Kueue's defaults (all the switches below off).

Read as Kueue v0.17.0 reads it (apis/config/v1beta2 configuration_types.go and defaults.go; the
older v1beta1 through configuration_conversion.go):
- v1beta2: a stanza present turns its feature on (fairsharing.Enabled, waitforpodsready.Enabled
  and admissionfairsharing.Enabled test the pointer for nil); blockAdmission defaults to false.
- v1beta1: fairSharing.enable and waitForPodsReady.enable turn them on (the conversion drops the
  stanza otherwise); blockAdmission defaults to waitForPodsReady.enable, i.e. true.
- admission fair sharing also needs the AdmissionFairSharing feature gate (beta, on by default
  since v0.15); `featureGates: {AdmissionFairSharing: false}` in the file turns it off.
- fairSharing.preemptionStrategies: v1beta1 defaults an empty list to the pair
  [LessThanOrEqualToFinalShare, LessThanInitialShare] (configuration_conversion.go); v1beta2
  requires it (pkg/config/validation.go validateFairSharing: one of the valid sets, or Kueue
  does not start).

Pure: the file is read (and the ConfigMap's embedded document parsed) by snapshot/io."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_wap.errors import UserError
from kubectl_wap.queueing.kueue.objects import (
    DEFAULT_FAIR_STRATEGIES,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
)

CONFIG_GROUP = "config.kueue.x-k8s.io"
CONFIGMAP_KEY = "controller_manager_config.yaml"
_VERSIONS = (f"{CONFIG_GROUP}/v1beta2", f"{CONFIG_GROUP}/v1beta1")


@dataclass(frozen=True, slots=True)
class KueueConfig:
    """What of Kueue's Configuration changes admission. `read` False: no file was given and these
    are Kueue's defaults, assumed (the Kueue stage's notes say so)."""

    read: bool = False
    fair_sharing: bool = False
    admission_fair_sharing: bool = False
    wait_for_pods_ready: bool = False
    block_admission: bool = False
    fair_strategies: tuple[str, ...] = DEFAULT_FAIR_STRATEGIES


DEFAULTS = KueueConfig()
# pkg/config/validation.go validStrategySets
_VALID_STRATEGIES = ((LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,), (LESS_THAN_INITIAL_SHARE,),
                     (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE))


def _strategies(fs: Mapping[str, Any], v1beta1: bool, what: str) -> tuple[str, ...]:
    raw = fs.get("preemptionStrategies")
    if raw is None or raw == []:
        if v1beta1:
            return DEFAULT_FAIR_STRATEGIES
        raise UserError(f"{what}: fairSharing.preemptionStrategies must be specified (Kueue v0.17.0 refuses to start "
                        f"without it in {_VERSIONS[0]}); e.g. [{', '.join(DEFAULT_FAIR_STRATEGIES)}]")
    got = tuple(str(s) for s in raw) if isinstance(raw, list) else ()
    if got not in _VALID_STRATEGIES:
        valid = "; ".join(",".join(v) for v in _VALID_STRATEGIES)
        raise UserError(f"{what}: fairSharing.preemptionStrategies {raw!r} is not one Kueue accepts ({valid})")
    return got


def embedded_configuration(doc: Any, what: str) -> str | None:
    """The Configuration text a ConfigMap carries under data[controller_manager_config.yaml]; None
    when `doc` is not a ConfigMap (then it is the Configuration itself)."""
    if not (isinstance(doc, Mapping) and doc.get("kind") == "ConfigMap"):
        return None
    data = doc.get("data")
    text = data.get(CONFIGMAP_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        keys = ", ".join(sorted(str(k) for k in data)) if isinstance(data, Mapping) else "none"
        raise UserError(f"{what}: the ConfigMap has no data[{CONFIGMAP_KEY}] (Kueue's kueue-manager-config has; keys: {keys})")
    return text


def _stanza(doc: Mapping[str, Any], key: str, what: str) -> Mapping[str, Any] | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise UserError(f"{what}: {key} is not a mapping")
    return value


def _flag(stanza: Mapping[str, Any], key: str, default: bool, what: str) -> bool:
    value = stanza.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise UserError(f"{what}: {key} must be true or false, not {value!r}")
    return value


def kueue_config(doc: Any, what: str) -> KueueConfig:
    """The admission switches of a Configuration document (parsed YAML); other fields are ignored."""
    if not isinstance(doc, Mapping):
        raise UserError(f"{what}: not a Kueue Configuration (a mapping with apiVersion {_VERSIONS[0]}, kind Configuration)")
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if kind != "Configuration" or api not in _VERSIONS:
        raise UserError(f"{what}: apiVersion {api} kind {kind} is not a Kueue Configuration ({' or '.join(_VERSIONS)}, "
                        f"kind Configuration; or the ConfigMap kueue-manager-config holding it)")
    v1beta1 = api == _VERSIONS[1]
    fs = _stanza(doc, "fairSharing", what)
    wfpr = _stanza(doc, "waitForPodsReady", what)
    afs = _stanza(doc, "admissionFairSharing", what)
    gates = _stanza(doc, "featureGates", what) or {}
    if v1beta1:
        # configuration_conversion.go: the stanza counts only with enable: true.
        fair = fs is not None and _flag(fs, "enable", False, what + ": fairSharing")
        wait = wfpr is not None and _flag(wfpr, "enable", False, what + ": waitForPodsReady")
    else:
        fair, wait = fs is not None, wfpr is not None
    # v1beta1 defaults.go: BlockAdmission defaults to Enable; v1beta2 defaults.go: to false.
    block = wait and wfpr is not None and _flag(wfpr, "blockAdmission", v1beta1, what + ": waitForPodsReady")
    afs_on = afs is not None and _flag(gates, "AdmissionFairSharing", True, what + ": featureGates")
    strategies = _strategies(fs, v1beta1, what) if fair and fs is not None else DEFAULT_FAIR_STRATEGIES
    return KueueConfig(read=True, fair_sharing=fair, admission_fair_sharing=afs_on, wait_for_pods_ready=wait,
                       block_admission=block, fair_strategies=strategies)


def not_modelled(cfg: KueueConfig) -> str | None:
    """Why the model cannot answer under `cfg`, in a clause; None when it can. Admission fair sharing
    is refused by objects.py (per ClusterQueue that uses it); blockAdmission is refused here: the next
    cycle admits nothing while an admitted Workload's pods are not ready, which the model does not
    track (cmd/kueue/main.go blockForPodsReady; pkg/scheduler/scheduler.go Scheduler.schedule waits
    on PodsReadyForAllAdmittedWorkloads)."""
    if cfg.block_admission:
        return ("Kueue's waitForPodsReady.blockAdmission is on: admission waits for admitted Workloads' pods to be ready, "
                "which is not modelled yet")
    return None


def defaults_note() -> str:
    return ("Kueue's configuration was not read: its defaults are assumed (fair sharing off, waitForPodsReady off); "
            "--kueue-config FILE reads it.")
