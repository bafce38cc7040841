"""The selector shapes below the model: a label/field selector requirement and a node selector
term. Their own module because the pod model (model/__init__.py), PersistentVolume node affinity
(storage.py) and DRA device pools (dra.py) all hold them, and __init__.py holds storage's
objects: kept in __init__.py, storage.py and __init__.py would import each other. __init__.py imports
them back, so `from kubectl_wap.model import NodeSelectorTerm, Requirement` stays the usual spelling."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Requirement:
    """A label/field selector requirement (metav1.LabelSelectorRequirement and
    v1.NodeSelectorRequirement share this shape; operators In/NotIn/Exists/DoesNotExist/Gt/Lt)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class NodeSelectorTerm:
    """A node selector term (core/v1 NodeSelectorTerm): its expressions and fields, ANDed."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()
