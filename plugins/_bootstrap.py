# kubectl-wap zipapp bootstrap.
#
# plugins/build.py copies this file into the plugin archive as ``__main__.py`` and replaces the
# ``BUILD = {}`` line below with the build's facts.  It runs before anything is known about the
# interpreter, so it sticks to the standard library and to syntax that Python 3.6 still parses:
# an unsupported ``python3`` must get a clear message (or a re-exec), never a SyntaxError.
#
# Why extract at all: the bundle holds compiled extension modules (numpy, pydantic-core, PyYAML's
# C loader), one set per CPython minor version, and compiled modules cannot be imported from
# inside a zip.  Pure-Python code could be, but zipimport never writes bytecode, so every run
# would recompile thousands of modules.  So on first use the shared files plus the files for the
# running interpreter's ABI are unpacked once to
#     $KUBECTL_WAP_CACHE_DIR or ${XDG_CACHE_HOME:-~/.cache}/kubectl-wap / <build id> / <cpXY>
# (atomically: into a temporary sibling, then renamed), and later runs only stat one marker file.
import os
import sys

BUILD = {}  # replaced by plugins/build.py

_PREFIX = "_wap/"
_MARKER = ".kubectl-wap-complete"
_REEXEC_ENV = "KUBECTL_WAP_REEXEC"


def _die(message, code=2):
    sys.stderr.write("kubectl-wap: " + message + "\n")
    sys.exit(code)


def _archive():
    # When run as ``python3 kubectl-wap`` (or through the shebang / Krew's symlink) sys.path[0] is
    # the archive itself; __file__ is "<archive>/__main__.py".
    here = os.path.dirname(os.path.abspath(__file__))
    return here


def _abi():
    if sys.implementation.name != "cpython":
        return None
    return "cp%d%d" % (sys.version_info[0], sys.version_info[1])


def _pretty(abi):
    return "%s.%s" % (abi[2], abi[3:])


def _exec(exe, archive):
    os.environ[_REEXEC_ENV] = "1"
    os.execv(exe, [exe, archive] + sys.argv[1:])


def _find_supported_python():
    import shutil

    here = os.path.realpath(sys.executable or "")
    for abi in reversed(BUILD["abis"]):
        exe = shutil.which("python" + _pretty(abi))
        if exe and os.path.realpath(exe) != here:
            return exe
    return None


def _unsupported(why):
    _die(
        "%s.\nkubectl-wap %s bundles its compiled dependencies for CPython %s on %s. "
        "Put one of those Python versions on PATH (as python3 or python3.X), "
        "or point KUBECTL_WAP_PYTHON at one."
        % (why, BUILD["version"], ", ".join(_pretty(a) for a in BUILD["abis"]), BUILD["platform"])
    )


def _host_platform():
    osname = {"linux": "linux", "darwin": "darwin"}.get(sys.platform, sys.platform)
    machine = os.uname().machine.lower() if hasattr(os, "uname") else ""
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return "%s-%s" % (osname, arch)


def _cache_roots():
    explicit = os.environ.get("KUBECTL_WAP_CACHE_DIR")
    if explicit:
        return [explicit]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    return [
        os.path.join(base, "kubectl-wap"),
        os.path.join(tempfile.gettempdir(), "kubectl-wap-%d" % uid),
    ]


def _extract(archive, target, abi):
    import shutil
    import tempfile
    import zipfile

    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)  # other kubectl-wap processes may race us here
    if os.path.exists(os.path.join(target, _MARKER)):
        return  # another kubectl-wap process finished unpacking meanwhile
    if os.path.isdir(target):  # left without its marker: a cache cleaner removed files
        shutil.rmtree(target, ignore_errors=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-%s-" % abi, dir=parent)
    try:
        prefixes = (_PREFIX + "common/", _PREFIX + abi + "/")
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                name = info.filename
                for prefix in prefixes:
                    if name.startswith(prefix):
                        rel = name[len(prefix):]
                        break
                else:
                    continue
                parts = rel.split("/")
                if not rel or name.endswith("/") or ".." in parts or rel.startswith("/"):
                    continue
                dest = os.path.join(tmp, *parts)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                mode = (info.external_attr >> 16) & 0o777
                if mode:
                    os.chmod(dest, mode)
        with open(os.path.join(tmp, _MARKER), "w") as f:
            f.write(BUILD["build_id"] + "\n")
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, target)
        except OSError:
            # Another kubectl-wap process finished the same extraction first: use its copy.
            if not os.path.exists(os.path.join(target, _MARKER)):
                raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def _site_dir(archive, abi):
    errors = []
    for root in _cache_roots():
        target = os.path.join(root, BUILD["build_id"], abi)
        if os.path.exists(os.path.join(target, _MARKER)):
            return target
        try:
            _extract(archive, target, abi)
            return target
        except (OSError, IOError) as exc:  # read-only home, full disk, ...: try the next root
            errors.append("%s: %s" % (target, exc))
    _die("cannot unpack the bundled libraries (%s); set KUBECTL_WAP_CACHE_DIR to a writable "
         "directory" % "; ".join(errors))


def main():
    if sys.version_info[0] < 3:
        _die("this is Python %d.%d; kubectl-wap needs python3 (CPython %s)"
             % (sys.version_info[0], sys.version_info[1], ", ".join(_pretty(a) for a in BUILD["abis"])))
    archive = _archive()
    # Set only for the one exec below; popped so that child processes never inherit it.
    reexeced = os.environ.pop(_REEXEC_ENV, None)
    wanted = os.environ.get("KUBECTL_WAP_PYTHON")
    if wanted and not reexeced:
        import shutil

        exe = shutil.which(wanted) or wanted
        if os.path.realpath(exe) != os.path.realpath(sys.executable or ""):
            try:
                _exec(exe, archive)
            except OSError as exc:
                _die("cannot run KUBECTL_WAP_PYTHON=%s: %s" % (wanted, exc))
    abi = _abi()
    if abi not in BUILD["abis"]:
        if abi is None:
            why = "this is %s, not CPython" % sys.implementation.name
        else:
            why = "this is Python %d.%d (%s)" % (sys.version_info[0], sys.version_info[1], sys.executable)
        if not reexeced and not wanted:
            exe = _find_supported_python()
            if exe:
                try:
                    _exec(exe, archive)
                except OSError:
                    pass
        _unsupported(why)
    host = _host_platform()
    if host != BUILD["platform"]:
        _die("this archive was built for %s but this machine is %s; install the plugin "
             "archive for %s" % (BUILD["platform"], host, host))
    site = _site_dir(archive, abi)
    # The archive itself holds nothing importable but this file: replace it on sys.path so the
    # bundled libraries win over anything in the interpreter's own site-packages.
    if sys.path and os.path.abspath(sys.path[0] or ".") == archive:
        sys.path[0] = site
    else:
        sys.path.insert(0, site)
    prog = os.path.basename(sys.argv[0]) if sys.argv else ""
    entry = BUILD["complete_entry"] if prog.startswith("kubectl_complete") else BUILD["entry"]
    module, _, func = entry.partition(":")
    try:
        mod = __import__(module, fromlist=[func])
    except ImportError as exc:
        if (getattr(exc, "name", None) or "").split(".")[0] != module.split(".")[0]:
            raise
        # Our own package is missing from the unpacked copy: a cache cleaner got to it.
        _die("broken unpacked copy (%s); remove %s and run again" % (exc, os.path.dirname(site)))
    sys.exit(getattr(mod, func)())


if __name__ == "__main__":
    main()
