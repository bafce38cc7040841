"""krew-manifest.yaml against Krew's own rules (plugins/krew_manifest.py encodes them), plus
negative cases showing the validator rejects what krew rejects, and the build's updater."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from plugins import krew_manifest as K  # noqa: E402
from kubectl_wap.snapshot.io.live import KUEUE_RESOURCES  # noqa: E402

MANIFEST = ROOT / "krew-manifest.yaml"
WANTED = {("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64"), ("windows", "amd64")}


def _version() -> str:
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]


@pytest.fixture()
def doc():
    return K.load(MANIFEST)


# ---------------------------------------------------------------------------------------------
# our manifest


def test_manifest_passes_krew_validation(doc):
    warnings: list[str] = []
    assert K.validate(doc, "wap", warnings=warnings) == []
    assert warnings == []  # krew-index CI warns on long lines


def test_identity(doc):
    assert doc["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert doc["kind"] == "Plugin"
    assert doc["metadata"]["name"] == "wap"


def test_version_matches_the_package(doc):
    from kubectl_wap import __version__

    assert __version__ == _version()
    assert doc["spec"]["version"] == f"v{_version()}"
    assert K.parse_semver(doc["spec"]["version"]) is not None


def test_texts(doc):
    spec = doc["spec"]
    assert re.match(r"^https://\S+$", spec["homepage"])
    short = spec["shortDescription"]
    assert short and "\n" not in short and len(short) <= 70
    assert len(spec["description"].strip()) > 100
    assert "read-only" in spec["description"]


def test_caveats_state_what_the_archives_need_and_exact_rbac(doc):
    """The release archives are the standalone build (plugins/release.py): no Python; linux needs
    the release container's glibc (.github/workflows/release.yml builds in python:3.12-slim-bullseye,
    glibc 2.31)."""
    caveats = spec_caveats = doc["spec"]["caveats"]
    flat = " ".join(spec_caveats.split())
    assert "no Python is needed" in flat and "python3 >=" not in flat
    assert "glibc >= 2.31" in flat
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "python:3.12-slim-bullseye" in workflow  # Debian 11: glibc 2.31
    assert "get and list" in flat
    lines = caveats.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.rstrip().endswith("get and list on:"))
    listed = []
    for ln in lines[at + 1:]:
        if not ln.startswith("  "):
            break
        ln = ln.replace("and on a Kueue cluster:", "")
        listed += [r.strip() for r in ln.split(",") if r.strip()]
    assert set(listed) == {
        "nodes", "pods", "namespaces", "priorityclasses.scheduling.k8s.io",
        "poddisruptionbudgets.policy", "podgroups.scheduling.k8s.io",
        "compositepodgroups.scheduling.k8s.io",
        "persistentvolumeclaims", "persistentvolumes", "storageclasses.storage.k8s.io", "csinodes.storage.k8s.io",
        "deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io", "resourceclaims.resource.k8s.io",
        "resourceclaimtemplates.resource.k8s.io", "events",
        # create-time admission of hypothetical pods (issue 30)
        "runtimeclasses.node.k8s.io", "limitranges",
        # Kueue's objects, when the cluster serves kueue.x-k8s.io (issue 35; live.py KUEUE_RESOURCES)
        *(r.name for r in KUEUE_RESOURCES),
    }
    assert "never writes" in flat


def test_caveats_rbac_agrees_with_deploy_rbac(doc):
    rbac = ROOT / "deploy" / "rbac-readonly.yaml"
    if not rbac.is_file():
        pytest.skip("deploy/rbac-readonly.yaml not present")
    granted = set()
    for obj in yaml.safe_load_all(rbac.read_text()):
        if obj and obj.get("kind") == "ClusterRole":
            for rule in obj["rules"]:
                for group in rule.get("apiGroups", []):
                    for res in rule.get("resources", []):
                        assert set(rule["verbs"]) == {"get", "list"}
                        granted.add(res if not group else f"{res}.{group}")
    flat = " ".join(doc["spec"]["caveats"].split())
    for res in granted:
        assert res in flat, res


def test_platforms_cover_linux_and_darwin_on_amd64_and_arm64_once(doc):
    plats = doc["spec"]["platforms"]
    assert len(plats) == 5
    for o, a in K.SUPPORTED_PLATFORMS:
        hits = [p for p in plats if K.selector_matches(p["selector"], o, a)]
        assert len(hits) == (1 if (o, a) in WANTED else 0), (o, a)


def test_platform_entries(doc):
    """Each platform installs the one-folder build: the binary, _internal/ beside it (a directory:
    Krew moves it whole, internal/installation/move.go getDirectMove), LICENSE and, off Windows,
    the completion script."""
    version = _version()
    for o, a in sorted(WANTED):
        p = K.platform_for(doc, o, a)
        ext = "zip" if o == "windows" else "tar.gz"
        assert p["uri"].startswith("https://")
        assert p["uri"].endswith(f"/v{version}/kubectl-wap-{o}-{a}.{ext}")
        assert isinstance(p["sha256"], str) and K.SHA256_RE.match(p["sha256"])
        exe = "kubectl-wap.exe" if o == "windows" else "kubectl-wap"
        assert p["bin"] == exe
        members = [exe, "_internal", "LICENSE"] + ([] if o == "windows" else ["kubectl_complete-wap"])
        installed = K.installed_paths(p["files"], members)
        assert sorted(installed) == sorted(members)
        assert any(n.lower() in K.LICENSE_FILES for n in installed)


def test_yaml_is_krew_shaped(doc):
    """Only fields krew knows (it ignores others, but then they'd be silently lost)."""
    assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(doc["spec"]) <= {"version", "homepage", "shortDescription", "description",
                                "caveats", "platforms"}
    for p in doc["spec"]["platforms"]:
        assert set(p) <= {"selector", "uri", "sha256", "files", "bin"}
        for f in p["files"]:
            assert set(f) == {"from", "to"}


# ---------------------------------------------------------------------------------------------
# the validator rejects what krew rejects


def _set(d, path, value):
    *head, last = path
    for k in head:
        d = d[k]
    if value is _DELETE:
        del d[last]
    else:
        d[last] = value


_DELETE = object()
P0 = ("spec", "platforms", 0)

BROKEN = {
    "apiVersion v1alpha1": (("apiVersion",), "krew.googlecontainertools.github.com/v1alpha1"),
    "kind": (("kind",), "Plugins"),
    "name with bang": (("metadata", "name"), "wap!"),
    "name with dot": (("metadata", "name"), "w.ap"),
    "windows reserved name": (("metadata", "name"), "con"),
    "no shortDescription": (("spec", "shortDescription"), _DELETE),
    "shortDescription with newline": (("spec", "shortDescription"), "two\nlines"),
    "no version": (("spec", "version"), _DELETE),
    "version without v": (("spec", "version"), "0.1.0"),
    "version two parts": (("spec", "version"), "v0.1"),
    "version leading zero": (("spec", "version"), "v0.01.0"),
    "version garbage": (("spec", "version"), "vlatest"),
    "no platforms": (("spec", "platforms"), []),
    "no uri": ((*P0, "uri"), _DELETE),
    "no sha256": ((*P0, "sha256"), _DELETE),
    "uppercase sha256": ((*P0, "sha256"), "A" * 64),
    "short sha256": ((*P0, "sha256"), "a" * 63),
    "sha256 read as a number": ((*P0, "sha256"), 0),
    "no bin": ((*P0, "bin"), _DELETE),
    "bin escapes": ((*P0, "bin"), "../kubectl-wap"),
    "empty files": ((*P0, "files"), []),
    "file without to": ((*P0, "files"), [{"from": "kubectl-wap"}]),
    "file without from": ((*P0, "files"), [{"to": "."}]),
    "unclean to": ((*P0, "files"), [{"from": "kubectl-wap", "to": "./bin/"}]),
    "absolute to": ((*P0, "files"), [{"from": "kubectl-wap", "to": "/usr/local/bin"}]),
    "nil selector": ((*P0, "selector"), None),
    "empty selector": ((*P0, "selector"), {}),
    "empty matchLabels": ((*P0, "selector"), {"matchLabels": {}}),
    "empty matchExpressions": ((*P0, "selector"), {"matchLabels": {"os": "linux"},
                                                   "matchExpressions": []}),
    "unsupported key": ((*P0, "selector"), {"matchLabels": {"os": "linux", "libc": "musl"}}),
    "bad operator": ((*P0, "selector"), {"matchExpressions": [
        {"key": "os", "operator": "Equals", "values": ["linux"]}]}),
    "In without values": ((*P0, "selector"), {"matchExpressions": [
        {"key": "os", "operator": "In"}]}),
    "selector matches nothing krew supports": ((*P0, "selector"),
                                               {"matchLabels": {"os": "plan9", "arch": "amd64"}}),
    "overlap: os-only selector": ((*P0, "selector"), {"matchLabels": {"os": "linux"}}),
    "overlap: expression": ((*P0, "selector"), {"matchExpressions": [
        {"key": "os", "operator": "In", "values": ["linux", "darwin"]},
        {"key": "arch", "operator": "In", "values": ["amd64"]}]}),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_manifest_is_rejected(doc, case):
    path, value = BROKEN[case]
    bad = copy.deepcopy(doc)
    _set(bad, path, value)
    errors = K.validate(bad, "wap")
    assert errors, f"{case}: accepted"


def test_name_must_match_the_expected_plugin_name(doc):
    assert K.validate(doc, "wap") == []
    assert K.validate(doc, "what") != []


def test_duplicate_platform_is_an_overlap(doc):
    bad = copy.deepcopy(doc)
    bad["spec"]["platforms"].append(copy.deepcopy(bad["spec"]["platforms"][0]))
    assert any("overlapping" in e for e in K.validate(bad, "wap"))


def test_files_may_be_omitted_krew_defaults_to_everything(doc):
    ok = copy.deepcopy(doc)
    for p in ok["spec"]["platforms"]:
        del p["files"]
    assert K.validate(ok, "wap") == []
    assert set(K.installed_paths(None, ["kubectl-wap", "LICENSE"])) == {"kubectl-wap", "LICENSE"}


@pytest.mark.parametrize("version,ok", [
    ("v0.1.0", True), ("v1.2.3-rc.1+build.5", True), ("v10.20.30", True),
    ("v1.2.3-alpha", True), ("1.2.3", False), ("v1.2", False), ("v1.2.3.4", False),
    ("v01.2.3", False), ("v1.2.3-", False), ("V1.2.3", False), ("v1.2.3-01", False),
])
def test_semver_rules(version, ok):
    assert (K.parse_semver(version) is not None) is ok


@pytest.mark.parametrize("sel,matches", [
    ({"matchLabels": {"os": "linux", "arch": "amd64"}}, {("linux", "amd64")}),
    ({"matchLabels": {"os": "darwin"}}, {("darwin", "386"), ("darwin", "amd64"),
                                          ("darwin", "arm64")}),
    ({"matchExpressions": [{"key": "os", "operator": "NotIn", "values": ["windows", "linux"]},
                           {"key": "arch", "operator": "In", "values": ["arm64"]}]},
     {("darwin", "arm64")}),
    ({"matchExpressions": [{"key": "os", "operator": "Exists"},
                           {"key": "arch", "operator": "In", "values": ["ppc64le"]}]},
     {("linux", "ppc64le")}),
])
def test_selector_semantics(sel, matches):
    got = {(o, a) for o, a in K.SUPPORTED_PLATFORMS if K.selector_matches(sel, o, a)}
    assert got == matches


# ---------------------------------------------------------------------------------------------
# the build's in-place updater


def test_update_manifest_rewrites_only_uri_sha256_and_version(tmp_path):
    target = tmp_path / "wap.yaml"
    original = MANIFEST.read_text()
    target.write_text(original)
    sha = "ab" * 32
    uri = "https://example.invalid/v9.8.7/kubectl-wap-darwin-arm64.tar.gz"
    K.update_manifest(target, version="9.8.7", platforms={("darwin", "arm64"): (uri, sha)})
    new = K.load(target)
    assert new["spec"]["version"] == "v9.8.7"
    p = K.platform_for(new, "darwin", "arm64")
    assert (p["uri"], p["sha256"]) == (uri, sha)
    old = yaml.safe_load(original)
    for o, a in WANTED - {("darwin", "arm64")}:
        assert K.platform_for(new, o, a) == K.platform_for(old, o, a)
    before, after = original.splitlines(), target.read_text().splitlines()
    assert len(before) == len(after)
    changed = [b for a, b in zip(before, after) if a != b]
    assert len(changed) == 3  # version, uri, sha256; comments and layout kept
    assert K.validate(new, "wap") == []


def test_update_manifest_quotes_a_sha_yaml_would_read_as_a_number(tmp_path):
    target = tmp_path / "wap.yaml"
    target.write_text(MANIFEST.read_text())
    sha = "1" * 63 + "0"
    K.update_manifest(target, version=_version(),
                      platforms={("linux", "amd64"): ("https://example.invalid/x.tar.gz", sha)})
    assert K.platform_for(K.load(target), "linux", "amd64")["sha256"] == sha


def test_update_manifest_refuses_an_unknown_platform(tmp_path):
    target = tmp_path / "wap.yaml"
    target.write_text(MANIFEST.read_text())
    with pytest.raises(ValueError):
        K.update_manifest(target, version=_version(),
                          platforms={("linux", "ppc64le"): ("https://x/y.tar.gz", "c" * 64)})
    assert target.read_text() == MANIFEST.read_text()


def test_long_lines_are_warned_about(doc):
    long = copy.deepcopy(doc)
    long["spec"]["caveats"] = "word " * 30
    warnings: list[str] = []
    assert K.validate(long, "wap", warnings=warnings) == []
    assert warnings == ["line length in `caveats` exceeds 80 characters"]


def test_docs_release_claim_matches_the_build():
    """docs/install.md's claim about the manifest's sha256 is what plugins.build does: only --release
    (this machine's archive) and --update-manifest-from (every archive in a directory) write it."""
    import inspect

    from plugins import build

    readme = " ".join((Path(__file__).resolve().parent.parent / "docs" / "install.md").read_text().split())
    assert "`python -m plugins.build --release` builds this machine's release archive" in readme
    src = inspect.getsource(build.main)
    assert "if ns.release or ns.update_manifest_from:" in src
    assert "update_manifest" not in inspect.getsource(build.build)


def test_readme_install_is_three_commands_that_match_the_manifest(doc):
    """The README's install section is three commands a macOS/Linux user copies, and
    the archive they download is the one the manifest names for their platform."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Install as a kubectl plugin"):]
    block = section[section.index("```sh\n") + 6:]
    lines = block[:block.index("```")].strip().splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("kubectl krew install --manifest=krew-manifest.yaml --archive=kubectl-wap-$p.tar.gz")
    for o, a in sorted(WANTED - {("windows", "amd64")}):
        uri = K.platform_for(doc, o, a)["uri"]
        assert uri.replace(f"{o}-{a}", "$p") in lines[1]
    assert "not yet" in " ".join(section.split()[:200])  # says what is not published
