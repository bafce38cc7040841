"""YAML as kube-scheduler's inputs reach us (hand-written manifests, `kubectl get -o yaml` dumps,
kubeconfigs): a C-speed safe loader whose alias expansion is budgeted, nesting depth an error, and
timestamps kept as strings as kubectl keeps them (YAML -> JSON). Every failure is one line."""

from __future__ import annotations

from typing import Any

from ...errors import UserError

YAML_ALIAS_BUDGET = 100_000


def _yaml_loader() -> type:
    """A C-speed safe loader that checks, before constructing each document, how far its aliases
    expand it: a repeated node (an alias) is shared by reference here, but anything that walks the
    result (a cache key, a copy, a dump) pays for the expanded size."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class BoundedLoader(base):  # type: ignore[misc, valid-type]
        def construct_document(self, node: Any) -> Any:
            _check_expansion(node)
            return super().construct_document(node)

    # Timestamps stay strings, as they do when kubectl reads YAML (YAML -> JSON): an unquoted
    # `startTime: 2020-01-01T00:00:00Z` must read exactly like the quoted one.
    BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
    _LOADER = BoundedLoader
    return _LOADER


_LOADER: type | None = None


class _AliasBomb(Exception):
    pass


def _check_expansion(root: Any) -> None:
    """Refuse a document whose aliases expand it by more than YAML_ALIAS_BUDGET nodes, or that
    contains itself (a recursive alias). Iterative: a deeply nested document is no problem here."""
    import yaml

    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if isinstance(node, yaml.ScalarNode):
            size[nid] = 1
            continue
        kids = [x for kv in node.value for x in kv] if isinstance(node, yaml.MappingNode) else node.value
        if done:
            on_path.discard(nid)
            size[nid] = 1 + sum(size[id(k)] for k in kids)
            if size[nid] > len(size) + YAML_ALIAS_BUDGET:
                raise _AliasBomb(f"YAML aliases expand the document beyond {YAML_ALIAS_BUDGET:,} extra nodes (line {node.start_mark.line + 1}); write the values out")
            continue
        if nid in size:
            continue
        if nid in on_path:
            raise _AliasBomb(f"a YAML alias refers to a node that contains it (line {node.start_mark.line + 1})")
        on_path.add(nid)
        stack.append((node, True))
        stack.extend((k, False) for k in kids)


def safe_yaml(text: str, what: str, error: type[Exception] = UserError, many: bool = False) -> Any:
    """yaml.safe_load (or the list of non-empty documents with `many`), bounded: alias expansion
    is budgeted, nesting depth is an error, and every failure is one line naming `what`."""
    import yaml  # lazily: YAML is only for hand-written files

    loader = _yaml_loader()
    try:
        if many:
            return [d for d in yaml.load_all(text, Loader=loader) if d is not None]
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except _AliasBomb as e:
        raise error(f"{what}: {e}") from None
    except RecursionError:
        raise error(f"{what}: invalid YAML: nested too deeply") from None
    except ValueError as e:  # the int constructor on a number of more than 4300 digits
        raise error(f"{what}: invalid YAML: {str(e).split(';')[0]}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise error(f"{what}: invalid YAML{where}: {problem}") from None
