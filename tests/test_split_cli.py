"""tools/split_cli.py, issue 37's merge aid: a one-file cli.py from before the split goes back into
the cli/ modules by name, with its text, its spacing and its imports re-rooted."""

from __future__ import annotations

from pathlib import Path

from tools.split_cli import main, split, undefined

HEAD_A = '"""a: the app."""\n\nfrom __future__ import annotations\n\nimport typer\n\n\n'
HEAD_B = '"""b: one command."""\n\nfrom __future__ import annotations\n\nfrom .a import app\n\n\n'

OLD_CLI = '''"""The old one-file cli.py."""

from __future__ import annotations

import typer

from .cliopts import Source

app = typer.Typer()
# one comment that belongs to X
X = 1
Y = 2


def _helper() -> int:
    from .snapshot.files import load_items
    from .snapshot import hypothetical as h
    from . import lookup

    return X


# --- a section comment, not a statement's ---

@app.command()
def cmd() -> None:
    _helper()


if __name__ == "__main__":
    app()
'''


def _cli(tmp_path: Path) -> Path:
    cli = tmp_path / "cli"
    cli.mkdir()
    (cli / "a.py").write_text(HEAD_A + "app = None\nX = 0\nY = 0\n\n\ndef _helper() -> None:\n    pass\n")
    (cli / "b.py").write_text(HEAD_B + "def cmd() -> None:\n    pass\n")
    return cli


def test_each_definition_goes_to_the_module_that_defines_its_name_today(tmp_path: Path) -> None:
    modules, unplaced, imports = split(OLD_CLI, {}, _cli(tmp_path))
    assert unplaced == []
    assert imports == ["Source (from .options import Source)"], "got the import no header has, want cliopts re-rooted to options"
    assert modules["b"] == HEAD_B + '@app.command()\ndef cmd() -> None:\n    _helper()\n', "decorator kept, section comment dropped"
    want_a = HEAD_A + (
        "app = typer.Typer()\n# one comment that belongs to X\nX = 1\nY = 2\n\n\n"  # adjacent in the input: its spacing
        "def _helper() -> int:\n"
        "    from ..snapshot.io.files import load_items\n"  # a moved module, re-rooted to kubectl_wap/cli/
        "    from ..snapshot.decode import hypothetical as h\n"
        "    from ..model import lookup\n\n"
        "    return X\n"
    )
    assert modules["a"] == want_a


def test_a_name_no_module_defines_stops_the_split_until_placed(tmp_path: Path) -> None:
    cli = _cli(tmp_path)
    source = OLD_CLI + "\n\ndef mcp() -> None:\n    cmd()\n"
    _, unplaced, _ = split(source, {}, cli)
    assert unplaced == ["mcp"]
    modules, unplaced, _ = split(source, {"mcp": "mcp"}, cli)
    assert unplaced == [] and modules["mcp"].endswith("def mcp() -> None:\n    cmd()\n")
    assert undefined(modules["mcp"]) == ["cmd"], "got no warning, want the name the new module must import"


def test_the_command_line_refuses_an_unplaced_name(tmp_path: Path, capsys) -> None:
    src = tmp_path / "cli.py"
    src.write_text("def brand_new() -> None:\n    pass\n")
    assert main([str(src), "--out", str(tmp_path / "out")]) == 1
    assert "brand_new" in capsys.readouterr().err


def test_with_base_the_branch_s_change_is_merged_into_the_module_as_it_is_now(tmp_path: Path) -> None:
    """A merge since the split changed b.py; the branch changed cmd's body in its cli.py: both stay."""
    cli = _cli(tmp_path)
    base, branch = tmp_path / "base.py", tmp_path / "branch.py"
    base.write_text(OLD_CLI)
    branch.write_text(OLD_CLI.replace("    _helper()\n", "    _helper()\n    print('branch')\n"))
    split_now = split(OLD_CLI, {}, cli)[0]
    for module, text in split_now.items():
        (cli / f"{module}.py").write_text(text)
    (cli / "b.py").write_text((cli / "b.py").read_text().replace('"""b: one command."""', '"""b: one command, since merged."""'))
    assert main([str(branch), "--base", str(base), "--cli", str(cli)]) == 0
    got = (cli / "b.py").read_text()
    assert "since merged" in got and "print('branch')" in got, got
