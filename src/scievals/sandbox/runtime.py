"""The pinned scoring runtimes: virtual environments of their own, separate from the harness's.

Model-written code runs against these packages, not against whatever the harness happens to use,
so a score does not move when the harness is upgraded. Each runtime has a name (``2024``,
``2025``) and a pins file ``runtimes/NAME.txt``; any provider can serve it (our sandbox builds a
venv, Docker an image per runtime). A venv is built once per set of pins (a hash of the pins file
and the Python version) under ``cache_dir("runtime", HASH)``, under a file lock so that
concurrent processes build it once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.paths import cache_dir

# Imported by the zygote before it forks anything; the first five are recorded in every log.
WARM_MODULES = [
    "numpy",
    "scipy",
    "sympy",
    "matplotlib",
    "h5py",
    "scipy.integrate",
    "scipy.linalg",
    "scipy.optimize",
    "scipy.special",
    "scipy.sparse",
    "scipy.sparse.linalg",
    "scipy.interpolate",
    "scipy.constants",
    "scipy.fft",
    "scipy.stats",
    "scipy.signal",
    "numpy.linalg",
    "numpy.fft",
    "matplotlib.pyplot",
    "mpl_toolkits.mplot3d",
]
REPORTED = ["numpy", "scipy", "sympy", "matplotlib", "h5py"]


RUNTIMES = ("2024", "2025")
"""Every named runtime, oldest first; ``runtimes/NAME.txt`` pins each."""
DEFAULT_RUNTIME = "2024"


def check_runtimes(names: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Runtime names from a list or a comma-separated string, each known, none twice."""
    items = names.split(",") if isinstance(names, str) else list(names)
    chosen = tuple(item.strip() for item in items if item.strip())
    unknown = [name for name in chosen if name not in RUNTIMES]
    if unknown or not chosen:
        raise InputError(
            f"unknown scoring runtime {', '.join(unknown) or '(none given)'}: "
            f"choose from {', '.join(RUNTIMES)}"
        )
    if len(set(chosen)) != len(chosen):
        raise InputError(f"a scoring runtime is named twice: {','.join(chosen)}")
    return chosen


def runtime_environment(name: str, index: int) -> str:
    """The sandbox environment that serves runtime ``name`` when it is the ``index``-th runtime
    asked for: the first is ``default``, the others ``runtime-NAME``. Every provider follows it
    (ours makes these environments; a compose file names its services so)."""
    return "default" if index == 0 else f"runtime-{name}"


def pins_text(name: str = DEFAULT_RUNTIME) -> str:
    check_runtimes([name])
    return resources.files("scievals.sandbox").joinpath("runtimes", f"{name}.txt").read_text()


def pins(name: str = DEFAULT_RUNTIME) -> dict[str, str]:
    """Package -> exact version, as pinned in ``runtimes/NAME.txt``."""
    out = {}
    for line in pins_text(name).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            package, _, version = line.partition("==")
            out[package.strip()] = version.strip()
    return out


def pins_hash(name: str = DEFAULT_RUNTIME) -> str:
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    return hashlib.sha256(f"{py}\n{pins_text(name)}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Runtime:
    """A built runtime: its interpreter, and the paths that must be visible inside the sandbox."""

    name: str
    root: Path
    python: Path
    base_prefix: Path
    versions: dict[str, str]

    @property
    def mplconfig(self) -> Path:
        return self.root / "mplconfig"


def runtime_dir(name: str = DEFAULT_RUNTIME) -> Path:
    """Where runtime ``name`` is built: resolved, because the sandbox shows it at this very path
    (a cache reached through a symlink or ``/proc/self/...`` is shown where it really is)."""
    return cache_dir("runtime").resolve() / pins_hash(name)


def _load(name: str, root: Path) -> Runtime | None:
    info_file = root / "scievals-runtime.json"
    if not info_file.exists():
        return None
    info = json.loads(info_file.read_text())
    return Runtime(
        name=name,
        root=root,
        python=root / "bin" / "python",
        base_prefix=Path(info["base_prefix"]),
        versions=info["versions"],
    )


def find_runtime(name: str = DEFAULT_RUNTIME) -> Runtime | None:
    """The runtime if it has been built already (cheap: no process is started)."""
    return _load(name, runtime_dir(name))


def _say(msg: str) -> None:
    print(f"scievals sandbox: {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], what: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ArtifactError(
            f"sandbox runtime: {what} failed: {tail} (retry with `scievals sandbox setup`)"
        )
    return proc.stdout


def ensure_runtime(name: str = DEFAULT_RUNTIME, quiet: bool = False) -> Runtime:
    """Build the runtime on first use (about a minute), then reuse it."""
    found = find_runtime(name)
    if found:
        return found
    root = runtime_dir(name)
    with open(root.parent / f"{root.name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not quiet:
                _say(f"another process is building runtime {name}; waiting for {lock.name}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        found = find_runtime(name)  # built by someone else while we waited
        if found:
            return found
        try:
            return _build(name, root, quiet)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise


def _build(name: str, root: Path, quiet: bool) -> Runtime:
    say = (lambda msg: None) if quiet else _say
    shutil.rmtree(root, ignore_errors=True)
    base_python = getattr(sys, "_base_executable", sys.executable)
    say(f"building scoring runtime {name} in {root} (one time, about a minute)")
    say(f"creating a virtual environment from {base_python}")
    _run([base_python, "-m", "venv", "--without-pip", str(root)], "creating the venv")
    python = root / "bin" / "python"
    pinned = pins(name)
    say("installing " + ", ".join(f"{k}=={v}" for k, v in pinned.items()))
    requirements = root / "runtime.txt"
    requirements.write_text(pins_text(name))
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "-r",
            str(requirements),
        ],
        "pip install",
    )
    say("checking the imports and building matplotlib's font cache")
    mplconfig = root / "mplconfig"
    mplconfig.mkdir()
    probe = (
        "import json, sys, importlib.metadata as m\n"
        f"mods = {WARM_MODULES!r}\n"
        "import matplotlib; matplotlib.use('Agg')\n"
        "for name in mods: __import__(name)\n"
        "import matplotlib.pyplot as plt; plt.figure()\n"
        f"print(json.dumps({{'base_prefix': sys.base_prefix, "
        f"'versions': {{k: m.version(k) for k in {list(pinned)!r}}}}}))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "MPLCONFIGDIR": str(mplconfig), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([str(python), "-I", "-c", probe], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ArtifactError(f"sandbox runtime: import check failed: {tail}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    wrong = {k: v for k, v in info["versions"].items() if pinned[k] != v}
    if wrong:
        raise ArtifactError(f"sandbox runtime: installed versions differ from the pins: {wrong}")
    for path in [root, *root.rglob("*")]:  # readable by the sandbox's unprivileged uids
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    (root / "scievals-runtime.json").write_text(json.dumps(info, indent=1))
    say(
        f"runtime {name} ready: "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items() if k in REPORTED)
    )
    runtime = _load(name, root)
    assert runtime is not None
    return runtime
