"""tools/fix_imports.py, issue 37's other merge aid: imports a branch wrote for the old layout point at
the moved modules, and imports that already resolve are left as they are."""

from __future__ import annotations

from pathlib import Path

from tools.fix_imports import main

TREE = {
    "kubectl_wap/__init__.py": "",
    "kubectl_wap/errors.py": "",
    "kubectl_wap/model/__init__.py": "",
    "kubectl_wap/model/lookup.py": "",
    "kubectl_wap/snapshot/__init__.py": "",
    "kubectl_wap/snapshot/decode/__init__.py": "",
    "kubectl_wap/snapshot/decode/convert.py": "",
    "kubectl_wap/snapshot/decode/lean.py": "",
    "kubectl_wap/snapshot/io/__init__.py": "",
    # a file that moved, with imports a branch wrote where it stood before (snapshot/files.py)
    "kubectl_wap/snapshot/io/files.py": (
        "from ..model import Pod\n"  # old spelling of kubectl_wap.model
        "from ...model import Node\n"  # already the new spelling
        "from .convert import build_snapshot\n"
        "from . import lean\n"
        "from ..errors import UserError\n"
    ),
    # a new module of the branch, beside the moved ones
    "kubectl_wap/newthing.py": "from .lookup import did_you_mean\nfrom .snapshot import files, source\n",
    "tests/test_new.py": "from kubectl_wap.snapshot.files import load_items\nimport kubectl_wap.model_dra\n",
    "docs/new.md": "See `kubectl_wap/snapshot/files.py` and snapshot/strip.py; `kubectl_wap.storage` holds PVs.\n",
}

WANT = {
    "kubectl_wap/snapshot/io/files.py": (
        "from ...model import Pod\n"
        "from ...model import Node\n"
        "from ..decode.convert import build_snapshot\n"
        "from ..decode import lean\n"
        "from ...errors import UserError\n"
    ),
    "kubectl_wap/newthing.py": "from .model.lookup import did_you_mean\nfrom .snapshot.io import files\nfrom .snapshot import source\n",
    "tests/test_new.py": "from kubectl_wap.snapshot.io.files import load_items\nimport kubectl_wap.model.dra\n",
    "docs/new.md": "See `kubectl_wap/snapshot/io/files.py` and snapshot/share/strip.py; `kubectl_wap.model.storage` holds PVs.\n",
}


def test_old_imports_follow_the_moves_and_a_second_run_changes_nothing(tmp_path: Path, capsys) -> None:
    for rel, text in TREE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "kubectl_wap/snapshot/source.py").write_text("")
    assert main(["--root", str(tmp_path)]) == 0
    for rel, want in WANT.items():
        assert (tmp_path / rel).read_text() == want, rel
    capsys.readouterr()
    assert main(["--root", str(tmp_path), "--check"]) == 0, "got changes on the second run, want none (idempotent)"
