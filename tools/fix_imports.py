"""Point imports and path mentions at the modules issue 37 moved (a merge aid, like split_cli.py).

A branch from before the moves adds imports of the old paths (`from .files import ...` in a file
now at snapshot/io/, `from kubectl_wap.snapshot.convert import ...` in a new test, `from ..lookup
import ...` in a new module). After merging it, run

    python -m tools.fix_imports            # every tracked file; prints the files it changed
    python -m tools.fix_imports --check    # only list them (exit 1 if any)

An import that resolves to an existing module is left alone, so the script is idempotent and
touches only what the merge brought. One that does not is resolved again from where its file stood
before the moves and mapped to the module's new place (relative imports stay relative, from the
file's new place); an import of a moved module by name (`from kubectl_wap.snapshot import files`)
follows it. Dotted names in strings and docs (`kubectl_wap.snapshot.files`) and file paths
(`snapshot/files.py`, `kubectl_wap/model_dra.py`) follow too. Delete it once no branch from before
issue 37 is left.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

from tools.split_cli import MOVED

ROOT = Path(__file__).resolve().parent.parent
PKG = "kubectl_wap"
MOVED_FILES = {  # old file -> new file, relative to the repository
    **{f"{PKG}/{old.replace('.', '/')}.py": f"{PKG}/{new.replace('.', '/')}.py" for old, new in MOVED.items()},
    f"{PKG}/model.py": f"{PKG}/model/__init__.py",
    f"{PKG}/cli.py": f"{PKG}/cli/app.py",
}
OLD_FILE = {new: old for old, new in MOVED_FILES.items()}
# Not rewritten: a branch's one-file cli.py (tools/split_cli.py's input) and the tests that spell the
# old layout on purpose; tools/ too.
SKIP = {f"{PKG}/cli.py", "tests/test_fix_imports.py", "tests/test_split_cli.py"}


def _exists(root: Path, dotted: str) -> bool:
    path = root / dotted.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _new(dotted: str) -> str:
    """kubectl_wap.<old module>[.rest] -> its new name."""
    rel = dotted.removeprefix(PKG + ".")
    for old in sorted(MOVED, key=len, reverse=True):
        if rel == old or rel.startswith(old + "."):
            return f"{PKG}.{MOVED[old]}{rel[len(old):]}"
    return dotted


def _package(path: str) -> str:
    """The dotted package a file's relative imports start from."""
    return ".".join(path[:-3].split("/")[:-1])


def _resolve(package: str, level: int, module: str | None) -> str:
    parts = package.split(".")
    return ".".join(parts[: len(parts) - (level - 1)] + ([module] if module else []))


def _relative(from_pkg: str, target: str) -> str:
    a, b = from_pkg.split("."), target.split(".")
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return "." * (len(a) - common + 1) + ".".join(b[common:])


_HEAD = re.compile(r"^(\s*from\s+)([.\w]+)(\s+import\b)")


def _target(root: Path, bases: list[str], name: str) -> str:
    """The module to import `name` from: the first base where it is a module (or a moved one), else
    the first base that exists (or its new place); bases[0] when nothing fits (left for a person)."""
    for b in bases:
        full = f"{b}.{name}"
        if _exists(root, full):
            return b
        if _new(full) != full and _exists(root, _new(full)):
            parent, _, last = _new(full).rpartition(".")
            if last == name:
                return parent
    for b in bases:
        if _exists(root, b):
            return b
        if _exists(root, _new(b)):
            return _new(b)
    return bases[0]


def fix_imports(root: Path, path: str, text: str) -> str:
    pkg_now = _package(path) if path.startswith(PKG + "/") else ""
    pkg_then = _package(OLD_FILE.get(path, path)) if pkg_now else ""
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level and not pkg_now:
            continue
        base = _resolve(pkg_now, node.level, node.module) if node.level else (node.module or "")
        if base.split(".")[0] != PKG:
            continue
        bases = [base]
        if node.level and pkg_then != pkg_now:
            bases.append(_resolve(pkg_then, node.level, node.module))  # written where the file stood before
        groups: dict[str, list[str]] = {}
        for a in node.names:
            groups.setdefault(_target(root, bases, a.name), []).append(a.name + (f" as {a.asname}" if a.asname else ""))
        if list(groups) == [base]:
            continue  # resolves where it stands: leave its spelling alone
        spelled = {(_relative(pkg_now, t) if node.level else t): names for t, names in groups.items()}
        seg = "".join(lines[node.lineno - 1: node.end_lineno])
        if len(spelled) == 1:
            m = _HEAD.match(seg)
            new = m.group(1) + next(iter(spelled)) + m.group(3) + seg[m.end():] if m else seg
        else:
            indent = re.match(r"\s*", seg).group(0)
            new = "".join(f"{indent}from {t} import {', '.join(n)}\n" for t, n in spelled.items())
        if new != seg:
            edits.append((node.lineno - 1, node.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = [new]
    return "".join(lines)


_DOTTED = re.compile(r"\b" + PKG + r"\.(" + "|".join(re.escape(k) for k in sorted(MOVED, key=len, reverse=True)) + r")\b(?!\.py)")
_PATHS = {old.removeprefix(PKG + "/"): new.removeprefix(PKG + "/") for old, new in MOVED_FILES.items()
          if old.startswith(f"{PKG}/snapshot/")}
_PATHS.update({old: new for old, new in MOVED_FILES.items() if not old.startswith(f"{PKG}/snapshot/") and old != f"{PKG}/cli.py"})
_PATH_RE = re.compile(r"(?<![\w.])(" + "|".join(re.escape(k) for k in sorted(_PATHS, key=len, reverse=True)) + r")")


def fix_text(text: str) -> str:
    text = _DOTTED.sub(lambda m: _new(f"{PKG}.{m.group(1)}"), text)
    return _PATH_RE.sub(lambda m: _PATHS[m.group(1)], text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(ROOT), help="the repository (default: this one)")
    ap.add_argument("--check", action="store_true", help="list what would change, change nothing; exit 1 if anything would")
    ns = ap.parse_args(argv)
    root = Path(ns.root)
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True)
    files = listed.stdout.split() if listed.returncode == 0 else [
        str(p.relative_to(root)) for p in sorted(root.rglob("*")) if ".venv" not in p.parts and ".git" not in p.parts]
    changed = []
    for f in files:
        p = root / f
        if not p.is_file() or p.suffix not in (".py", ".md", ".toml", ".sh", ".txt") or f.startswith("tools/") or f in SKIP:
            continue
        text = p.read_text()
        try:
            new = fix_text(fix_imports(root, f, text) if p.suffix == ".py" else text)
        except SyntaxError as e:  # conflict marks, most likely
            print(f"{f}: not Python ({e.msg}, line {e.lineno}): resolve it and run again", file=sys.stderr)
            continue
        if new != text:
            changed.append(f)
            if not ns.check:
                p.write_text(new)
    print("\n".join(changed))
    return 1 if ns.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
