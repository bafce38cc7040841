"""Krew plugin manifest rules (validator) and the in-place sha256/uri updater used by the build.

The rules follow kubernetes-sigs/krew:
- internal/index/validation/validate.go (ValidatePlugin, validatePlatform, validateFiles,
  validateSelector, IsSafePluginName),
- internal/installation/semver (version must start with "v" and be a full semantic version,
  parsed with k8s.io/apimachinery's ParseSemantic),
- cmd/validate-krew-manifest (the krew-index CI check: every platform selector must match a
  supported <os,arch>, no <os,arch> may be matched by two platforms, the archive must carry a
  LICENSE-like file),
- internal/installation (bin must end up inside the install dir; file operation `to` must be a
  clean relative path; files' `from` must not escape the archive).
The manifest is read the way krew reads it (sigs.k8s.io/yaml: YAML -> JSON -> Go structs), so
unknown fields are tolerated, but wrong types are errors.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
KIND = "Plugin"
SHA256_RE = re.compile(r"^[a-f0-9]{64}$")
SAFE_NAME_RE = re.compile(r"^[\w-]+$", re.ASCII)
WINDOWS_FORBIDDEN = {
    "CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10)),
}
# k8s.io/apimachinery/pkg/util/version ParseSemantic: exactly MAJOR.MINOR.PATCH, no leading zeros,
# optional -prerelease and +build; krew additionally demands the leading "v".
SEMVER_RE = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
# cmd/validate-krew-manifest allPlatforms()
SUPPORTED_PLATFORMS = [
    ("windows", "386"), ("windows", "amd64"), ("windows", "arm64"),
    ("linux", "386"), ("linux", "amd64"), ("linux", "arm"), ("linux", "arm64"), ("linux", "ppc64le"),
    ("darwin", "386"), ("darwin", "amd64"), ("darwin", "arm64"),
]
LICENSE_FILES = {"license", "license.txt", "license.md", "licenses", "licenses.txt", "licenses.md",
                 "copying", "copying.txt"}
SELECTOR_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def is_safe_plugin_name(name: Any) -> bool:
    return (isinstance(name, str) and bool(SAFE_NAME_RE.match(name))
            and name.upper() not in WINDOWS_FORBIDDEN)


def parse_semver(version: Any) -> tuple[int, int, int] | None:
    if not isinstance(version, str):
        return None
    m = SEMVER_RE.match(version)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _selector_errors(sel: Any) -> list[str]:
    if sel is None:
        return ["nil selector is not supported"]
    if not isinstance(sel, dict):
        return ["selector must be a mapping"]
    labels = sel.get("matchLabels")
    exprs = sel.get("matchExpressions")
    if labels is not None and not isinstance(labels, dict):
        return ["matchLabels must be a mapping"]
    if exprs is not None and not isinstance(exprs, list):
        return ["matchExpressions must be a list"]
    if labels is None and not exprs:
        return ["empty selector is not supported"]
    errs = []
    keys = list(labels or {}) + [e.get("key") if isinstance(e, dict) else None for e in exprs or []]
    for key in keys:
        if key not in ("os", "arch"):
            errs.append(f"key {key!r} not supported")
    if labels is not None and len(labels) == 0:
        errs.append("`matchLabels` specified but empty")
    if exprs is not None and len(exprs) == 0:
        errs.append("`matchExpressions` specified but empty")
    for value in (labels or {}).values():
        if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE_RE.match(value):
            errs.append(f"invalid label value {value!r}")
    for e in exprs or []:
        if not isinstance(e, dict):
            errs.append("matchExpressions items must be mappings")
            continue
        op, values = e.get("operator"), e.get("values") or []
        if op not in SELECTOR_OPERATORS:
            errs.append(f"{op!r} is not a valid label selector operator")
        elif op in ("In", "NotIn") and not values:
            errs.append(f"values: must be specified when `operator` is {op}")
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(f"values: may not be specified when `operator` is {op}")
    return errs


def selector_matches(sel: dict, os_: str, arch: str) -> bool:
    """metav1.LabelSelectorAsSelector(sel).Matches({os, arch}) for a valid selector."""
    labels = {"os": os_, "arch": arch}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, values = e["key"], e["operator"], e.get("values") or []
        present = k in labels
        if op == "In" and not (present and labels[k] in values):
            return False
        if op == "NotIn" and present and labels[k] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _files_errors(files: Any, bin_: Any) -> list[str]:
    if files is None:
        return []  # krew then applies the default [{from: "*", to: "."}]
    if not isinstance(files, list):
        return ["`files` must be a list"]
    if len(files) == 0:
        return ["`files` has to be unspecified or non-empty"]
    errs = []
    for op in files:
        if not isinstance(op, dict):
            errs.append("`files` items must be mappings")
            continue
        frm, to = op.get("from"), op.get("to")
        if not frm:
            errs.append("`from` field has to be set")
        elif not to:
            errs.append("`to` field has to be set")
        else:
            if posixpath.normpath(to) != to:
                errs.append(f"the provided path is not clean, {to!r} should be "
                            f"{posixpath.normpath(to)!r}")
            for field, path in (("from", frm), ("to", to)):
                norm = posixpath.normpath(path)
                if path.startswith("/") or norm == ".." or norm.startswith("../"):
                    errs.append(f"`{field}` path {path!r} escapes its directory")
    return errs


def installed_paths(files: list[dict] | None, archive_members: list[str]) -> list[str]:
    """Where krew's move logic puts each archive member (relative to the install dir)."""
    import fnmatch

    ops = files if files is not None else [{"from": "*", "to": "."}]
    out = []
    for op in ops:
        frm, to = op["from"], op["to"]
        if frm in archive_members:  # direct single-file move
            out.append(posixpath.basename(frm) if posixpath.normpath(to) == "." else
                       posixpath.normpath(to))
            continue
        for m in archive_members:
            if "/" not in m.rstrip("/") or "/" in frm:
                if fnmatch.fnmatchcase(m, frm):
                    out.append(posixpath.normpath(posixpath.join(to, posixpath.basename(m))))
    return out


def validate(manifest: Any, name: str | None = None, *, warnings: list[str] | None = None
             ) -> list[str]:
    """Return every rule the manifest breaks (empty list: krew would accept it)."""
    if not isinstance(manifest, dict):
        return ["manifest must be a mapping"]
    errs: list[str] = []
    if manifest.get("apiVersion") != API_VERSION:
        errs.append(f"plugin manifest has apiVersion={manifest.get('apiVersion')!r}, "
                    f"want {API_VERSION!r}")
    if manifest.get("kind") != KIND:
        errs.append(f"plugin manifest has kind={manifest.get('kind')!r}, only {KIND!r} is supported")
    meta = manifest.get("metadata") or {}
    pname = meta.get("name") if isinstance(meta, dict) else None
    expected = name if name is not None else pname
    if not is_safe_plugin_name(expected):
        errs.append(f"the plugin name {expected!r} is not allowed, must match {SAFE_NAME_RE.pattern}")
    if pname != expected:
        errs.append(f"plugin should be named {expected!r}, not {pname!r}")
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        return errs + ["spec must be a mapping"]
    for field in ("version", "shortDescription", "description", "caveats", "homepage"):
        if field in spec and not isinstance(spec[field], str):
            errs.append(f"spec.{field} must be a string")
    short = spec.get("shortDescription")
    if not short:
        errs.append("should have a short description")
    elif isinstance(short, str) and ("\r" in short or "\n" in short):
        errs.append("should not have line breaks in short description")
    platforms = spec.get("platforms")
    if not platforms:
        errs.append("should have a platform specified")
        platforms = []
    elif not isinstance(platforms, list):
        errs.append("spec.platforms must be a list")
        platforms = []
    version = spec.get("version")
    if not version:
        errs.append("should have a version specified")
    elif parse_semver(version) is None:
        errs.append(f"failed to parse plugin version {version!r} (want v-prefixed semver)")
    valid_selectors: list[tuple[int, dict]] = []
    for i, p in enumerate(platforms):
        if not isinstance(p, dict):
            errs.append(f"spec.platforms[{i}] must be a mapping")
            continue
        where = f"spec.platforms[{i}]"
        if not p.get("uri"):
            errs.append(f"{where}: `uri` has to be set")
        sha = p.get("sha256")
        if not sha:
            errs.append(f"{where}: `sha256` sum has to be set")
        elif not isinstance(sha, str) or not SHA256_RE.match(sha):
            errs.append(f"{where}: `sha256` value {sha!r} is not valid, must match "
                        f"{SHA256_RE.pattern}")
        bin_ = p.get("bin")
        if not bin_:
            errs.append(f"{where}: `bin` has to be set")
        elif isinstance(bin_, str):
            norm = posixpath.normpath(bin_)
            if bin_.startswith("/") or norm == ".." or norm.startswith("../"):
                errs.append(f"{where}: `bin` {bin_!r} is not inside the installation directory")
        errs += [f"{where}: `files` is invalid: {e}" for e in _files_errors(p.get("files"), bin_)]
        sel_errs = _selector_errors(p.get("selector"))
        errs += [f"{where}: invalid platform selector: {e}" for e in sel_errs]
        if not sel_errs:
            valid_selectors.append((i, p["selector"]))
            if not any(selector_matches(p["selector"], o, a) for o, a in SUPPORTED_PLATFORMS):
                errs.append(f"{where}: selector doesn't match any supported platforms")
    for o, a in SUPPORTED_PLATFORMS:
        hits = [i for i, s in valid_selectors if selector_matches(s, o, a)]
        if len(hits) > 1:
            errs.append(f"multiple spec.platforms (at indexes {hits}) have overlapping selectors "
                        f"that select os={o}/arch={a}")
    if warnings is not None:
        for field, limit in (("description", 80), ("shortDescription", 70), ("caveats", 80)):
            text = spec.get(field) or ""
            for line in str(text).split("\n"):
                if len(line) > limit and " " in line.strip():
                    warnings.append(f"line length in `{field}` exceeds {limit} characters")
                    break
    return errs


def platform_for(manifest: dict, os_: str, arch: str) -> dict | None:
    for p in manifest["spec"]["platforms"]:
        if selector_matches(p["selector"], os_, arch):
            return p
    return None


def load(path: Path | str) -> dict:
    import yaml

    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


# --------------------------------------------------------------------------------------------
# In-place update (keeps comments and layout; only `uri:`/`sha256:` values and spec.version move)


def _yaml_str(value: str) -> str:
    """Plain scalar unless YAML (1.1 or 1.2) could read it as a number; then double-quoted."""
    if re.fullmatch(r"[-+0-9.eE_x:]+", value):
        return '"' + value + '"'
    return value


def update_manifest(path: Path | str, *, version: str,
                    platforms: dict[tuple[str, str], tuple[str, str]]) -> None:
    import yaml

    path = Path(path)
    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    lines = text.splitlines(keepends=True)

    def indent_of(ln: str) -> int:
        return len(ln) - len(ln.lstrip())

    def significant(i: int) -> bool:
        return bool(lines[i].strip()) and not lines[i].lstrip().startswith("#")

    # spec.version: the `version:` key at the indentation of spec's first child
    spec_at = next(i for i, ln in enumerate(lines) if re.match(r"^spec:\s*$", ln))
    child = next(i for i in range(spec_at + 1, len(lines)) if significant(i))
    child_indent = indent_of(lines[child])
    for i in range(child, len(lines)):
        if significant(i) and indent_of(lines[i]) < child_indent:
            break
        m = re.match(r"^(\s*version:\s*)\S.*$", lines[i].rstrip("\n"))
        if m and indent_of(lines[i]) == child_indent:
            lines[i] = f"{m.group(1)}v{version}\n"
            break
    else:
        raise ValueError(f"{path}: no spec.version line")

    # split spec.platforms into items: "- " lines at the list's indentation start an item
    start = next(i for i, ln in enumerate(lines)
                 if re.match(r"^\s+platforms:\s*$", ln) and indent_of(ln) == child_indent)
    list_indent = None
    items: list[list[int]] = []
    for i in range(start + 1, len(lines)):
        if not significant(i):
            if items:
                items[-1].append(i)
            continue
        ln = lines[i]
        if list_indent is None:
            list_indent = indent_of(ln)
        if indent_of(ln) == list_indent and ln.lstrip().startswith("- "):
            items.append([i])
        elif indent_of(ln) > list_indent and items:
            items[-1].append(i)
        else:
            break
    plats = doc["spec"]["platforms"]
    if len(items) != len(plats):
        raise ValueError(f"{path}: could not line up {len(plats)} platforms with the text")
    done = set()
    for rows, plat in zip(items, plats):
        for (o, a), (uri, sha) in platforms.items():
            if not selector_matches(plat["selector"], o, a):
                continue
            for i in rows:
                for field, value in (("uri", uri), ("sha256", sha)):
                    m = re.match(rf"^(\s*(?:- )?{field}:\s*)(\S.*?)(\s*)$", lines[i])
                    if m:
                        lines[i] = f"{m.group(1)}{_yaml_str(value)}\n"
            done.add((o, a))
    missing = set(platforms) - done
    if missing:
        raise ValueError(f"{path}: no platform entry selects {sorted(missing)}")
    new_text = "".join(lines)
    new_doc = yaml.safe_load(new_text)
    for (o, a), (uri, sha) in platforms.items():
        p = platform_for(new_doc, o, a)
        if p is None or p.get("uri") != uri or p.get("sha256") != sha:
            raise ValueError(f"{path}: update of {o}/{a} did not take")
    errors = validate(new_doc)
    if errors:
        raise ValueError(f"{path}: manifest invalid after update: {errors}")
    path.write_text(new_text, encoding="utf-8")
