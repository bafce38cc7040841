"""Re-split a one-file kubectl_wap/cli.py into the kubectl_wap/cli/ modules (issue 37's merge aid).

Branches started before issue 37 edit kubectl_wap/cli.py, which is now a package with one module per
command; git cannot follow a file split, so merging such a branch leaves its whole cli.py in the tree
(a modify/delete conflict). This script puts that file's top-level definitions back where each now
lives, by name: every function, class and assignment goes to the cli/ module that defines the same
name today, in the input's order and with the input's text (its relative imports re-rooted to
kubectl_wap/cli/ and to the moved modules), under that module's own docstring and imports.

    git show 174467a:kubectl_wap/cli.py > /tmp/base-cli.py      # cli.py before the split
    python -m tools.split_cli kubectl_wap/cli.py --base /tmp/base-cli.py   # merge into kubectl_wap/cli/*.py
    python -m tools.split_cli kubectl_wap/cli.py --out DIR  # only split, into DIR
    python -m tools.split_cli ... --place mcp=mcp --place _fail_if=whatif   # names not placed yet

With --base, the branch's changes are merged, not copied: base and branch are both split and each
module gets `git merge-file` of (the module now, base's split, the branch's split), so edits other
merges made since the split stay; a module reports its conflicts as merge-file marks them. Without
--base the modules are overwritten with the input's text.

A name no module defines today (a new command, a new helper) stops the script with the list, unless
`--place NAME=MODULE` says where it goes (a new MODULE gets a stub header: add its imports, import it
in cli/__init__.py and give it a tier in tests/test_architecture.py INNER). The names a module reads
but does not import are printed (a moved definition's imports are its new module's header's): add
the imports. Run on the cli.py from before the split (`git show 174467a:kubectl_wap/cli.py`), it
gave the 14 command-line modules of the split's commit byte for byte. tests/test_split_cli.py checks
it on a small made-up package. Delete both once no branch from before issue 37 is left.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "kubectl_wap" / "cli"
KEEP = {"__init__", "__main__", "options", "completion", "pipes", "profilepick"}  # moved whole, not split

_IO = "discovery kubeconfig readonly live names files liststream save snapfile".split()
_DECODE = ("fields lean convert convert_storage dra defaulting admission podadmission references spectemplates "
           "podrows workloads workload_groups hypothetical evidence owners").split()
_SHARE = "allowlist strip redact".split()
# Modules of kubectl_wap/ before issue 37 -> after (relative to kubectl_wap); the rest kept their name.
MOVED = {"model_terms": "model.terms", "model_dra": "model.dra", "storage": "model.storage", "lookup": "model.lookup",
         "cliopts": "cli.options", "completion": "cli.completion", "profilepick": "cli.profilepick", "pipes": "cli.pipes"}
MOVED.update({f"snapshot.{n}": f"snapshot.{sub}.{n}" for sub, names in (("io", _IO), ("decode", _DECODE), ("share", _SHARE))
              for n in names})


def _new_module(dotted: str) -> str:
    for old in sorted(MOVED, key=len, reverse=True):
        if dotted == old or dotted.startswith(old + "."):
            return MOVED[old] + dotted[len(old):]
    return dotted


def _reroot(text: str) -> str:
    """cli.py's relative imports were relative to kubectl_wap/; cli/*.py's are relative to kubectl_wap/cli/."""

    def one(m: re.Match) -> str:
        module = m.group(2)
        if module:
            target = _new_module(module)
            if target.startswith("cli."):
                return f"{m.group(1)}.{target[4:]}{m.group(3)}"
            return f"{m.group(1)}..{target}{m.group(3)}"
        return f"{m.group(1)}..{m.group(3)}"  # `from . import x`: from kubectl_wap

    def module_import(m: re.Match) -> str:  # `from .snapshot import hypothetical`: a module that moved
        parent, _, _ = _new_module(f"{m.group(2)}.{m.group(4)}".lstrip(".")).rpartition(".")
        return f"{m.group(1)}.{parent}{m.group(3)}{m.group(4)}"

    text = re.sub(r"^(\s*from )\.([\w.]*)( import )(\w+)(?=( as \w+)?$)",
                  lambda m: module_import(m) if f"{m.group(2)}.{m.group(4)}".lstrip(".") in MOVED else m.group(0),
                  text, flags=re.M)
    text = re.sub(r"^(\s*from )\.(?!\.)([\w.]*)( import )", one, text, flags=re.M)
    # the comments' paths of moved modules
    text = re.sub(r"(?<![\w/.])snapshot/(\w+)\.py", lambda m: _new_module(f"snapshot.{m.group(1)}").replace(".", "/") + ".py", text)
    text = re.sub(r"(?<![\w/.])profilepick\.py", "cli/profilepick.py", text)
    return re.sub(r"\bcliopts is\b", "options.py is", text)


def _names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    out: list[str] = []
    for t in targets:
        out += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
    return out


def _is_import(node: ast.stmt) -> bool:
    return isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))


def _spans(lines: list[str], tree: ast.Module) -> list[tuple[ast.stmt, int, int]]:
    """(statement, first line, last line), 0-based, with its decorators and the comment lines right above it."""
    out = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while start > 0 and lines[start - 1].startswith("#"):
            start -= 1
        out.append((node, start, node.end_lineno - 1))
    return out


def _header(path: Path) -> str:
    text = path.read_text()
    tree = ast.parse(text)
    last = max((n.end_lineno for n in tree.body if _is_import(n)), default=0)
    return "".join(text.splitlines(keepends=True)[:last]).rstrip("\n") + "\n\n\n"


def undefined(text: str) -> list[str]:
    """Names a module reads but neither defines, imports, binds anywhere nor gets from builtins: the
    imports a moved definition still needs in its new module (approximate: any binding counts)."""
    import builtins

    bound = set(dir(builtins))
    read = set()
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Name):
            (read if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return sorted(read - bound)


def split(source: str, place: dict[str, str], cli: Path = CLI) -> tuple[dict[str, str], list[str], list[str]]:
    """The modules' new text, the names no module takes, and the input's top-level imports no header has."""
    owner: dict[str, str] = {}
    headers: dict[str, str] = {}
    for path in sorted(cli.glob("*.py")):
        if path.stem in KEEP:
            continue
        headers[path.stem] = _header(path)
        for node in ast.parse(path.read_text()).body:
            for name in _names(node):
                owner[name] = path.stem
    owner.update(place)
    source = _reroot(source)
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    chunks: dict[str, list[str]] = {}
    unplaced: list[str] = []
    imports: list[str] = []
    header_names = {a.asname or a.name for text in headers.values() for n in ast.parse(text).body
                    if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    previous: tuple[str, int] | None = None  # (module, last line) of the statement placed last
    for node, start, end in _spans(lines, tree):
        if _is_import(node):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", "") != "__future__":
                missing = [a.asname or a.name for a in node.names if (a.asname or a.name) not in header_names]
                if missing:
                    imports.append(f"{', '.join(missing)} ({''.join(lines[start:end + 1]).strip()})")
            continue
        names = _names(node)
        if not names:  # `if __name__ == "__main__"`: cli/__main__.py's job now
            continue
        modules = {owner.get(n) for n in names}
        if None in modules or len(modules) != 1:
            unplaced += [n for n in names if n not in owner]
            previous = None
            continue
        module = modules.pop()
        text = "".join(lines[start:end + 1])
        gap = lines[previous[1] + 1:start] if previous else []
        if previous and previous[0] == module and all(not line.strip() for line in gap):
            chunks[module][-1] += "".join(gap) + text  # next to each other in the input: the input's spacing
        else:
            chunks.setdefault(module, []).append(text)
        previous = (module, end)
    out = {}
    for module, parts in chunks.items():
        body = "\n\n".join(c.strip("\n") + "\n" for c in parts)
        head = headers.get(module) or f'"""TODO: what `kubectl wap {module}` does."""\n\nfrom __future__ import annotations\n\n\n'
        out[module] = head + body
    return out, unplaced, imports


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cli_py", help="a one-file kubectl_wap/cli.py (e.g. the one a merge left in the tree)")
    ap.add_argument("--out", help="write the modules here instead of kubectl_wap/cli/")
    ap.add_argument("--place", action="append", default=[], metavar="NAME=MODULE", help="where a name no module defines goes")
    ap.add_argument("--cli", default=str(CLI), help=argparse.SUPPRESS)  # the package to place by (tests)
    ap.add_argument("--base", help="the cli.py the input started from: merge its changes into kubectl_wap/cli/ (git merge-file)")
    ns = ap.parse_args(argv)
    place = dict(p.split("=", 1) for p in ns.place)
    cli = Path(ns.cli)
    modules, unplaced, imports = split(Path(ns.cli_py).read_text(), place, cli)
    if unplaced:
        print("no cli/ module defines: " + ", ".join(unplaced) + " (say where with --place NAME=MODULE)", file=sys.stderr)
        return 1
    base = split(Path(ns.base).read_text(), place, cli)[0] if ns.base else {}
    out = Path(ns.out) if ns.out else cli
    out.mkdir(parents=True, exist_ok=True)
    for module, text in sorted(modules.items()):
        target = out / f"{module}.py"
        if module in base and target.exists() and base[module] != text:
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "base").write_text(base[module])
                (Path(tmp) / "theirs").write_text(text)
                rc = subprocess.run(["git", "merge-file", "-L", "now", "-L", "base", "-L", "branch", str(target),
                                     str(Path(tmp) / "base"), str(Path(tmp) / "theirs")]).returncode
            print(f"{module}.py: merged" + (f", {rc} conflict(s) marked" if rc else ""))
        elif module not in base:
            target.write_text(text)
        text = target.read_text()
        if "\n<<<<<<< now" in text:
            continue  # conflict marks: resolve first, then check the imports with pyflakes or the tests
        if undefined(text):
            print(f"{module}.py reads names it does not import (add the imports): {', '.join(undefined(text))}")
    print(f"{len(modules)} modules in {out}")
    for line in imports:
        print(f"imported at the input's top, by no module's header (add it where it is used): {line}")
    new = sorted(set(place.values()) - {p.stem for p in cli.glob("*.py")})
    if new:
        print(f"new modules {', '.join(new)}: write their headers, import them in cli/__init__.py, give them a tier in INNER")
    return 0


if __name__ == "__main__":
    sys.exit(main())
