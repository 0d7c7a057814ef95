"""The provider's contract: fresh-python semantics on the fast path, files, modes, registration."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from scievals.sandbox import describe, session
from scievals.sandbox.engine import Engine, _is_fast, detect_mode
from scievals.sandbox.limits import MEMORY_FLOOR_GIB, default_memory_gib

from .sandbox_helpers import assert_no_leftovers, module_box, run


@pytest.mark.parametrize(
    "argv, fast",
    [
        (["python3", "-c", "print(1)"], True),
        (["python", "-c", "print(1)", "a"], True),
        (["python3", "main.py", "x"], True),
        (["python3", "-u", "main.py"], False),
        (["python3", "-m", "pip"], False),
        (["/usr/bin/python3", "-c", "1"], False),
        (["bash", "-c", "echo"], False),
        (["python3"], False),
    ],
)
def test_fast_path_selection(argv, fast):
    assert _is_fast(argv) is fast


def test_registered_with_inspect():
    from inspect_ai.util._sandbox.registry import registry_find_sandboxenv

    import scievals._registry  # noqa: F401 - what Inspect's entry point loads
    from scievals.sandbox.provider import ScievalsSandbox

    assert registry_find_sandboxenv("scievals") is ScievalsSandbox


def test_cli_registers_setup_and_status():
    from scievals.sandbox import cli

    parser = argparse.ArgumentParser()
    cli.register({"root": parser.add_subparsers()})
    ns = parser.parse_args(["sandbox", "status", "--json"])
    assert callable(ns.func)
    assert callable(parser.parse_args(["sandbox", "setup"]).func)


def test_describe_is_complete():
    info = describe()
    assert info["mode"] in ("unshare", "userns", "rlimits-only")
    assert info["runtime"]["scipy"].startswith("1.13")
    assert set(info["runtime"]) == {"numpy", "scipy", "sympy", "matplotlib", "h5py"}
    assert info["limits"]["memory_gib"] == default_memory_gib() >= MEMORY_FLOOR_GIB


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError):
        detect_mode("docker")


@pytest.fixture(scope="module")
def box():
    yield from module_box()


def py(box, code, *args, **kw):
    return run(box.exec(["python3", "-c", code, *args], **kw))


@pytest.mark.slow
def test_fresh_python_semantics(box):
    code = (
        "import sys, os\n"
        "print(__name__, sys.argv, sys.path[0] == '', os.getcwd() == %r)\n"
        "print(sorted(k for k in globals() if not k.startswith('__')))\n"
        "x = 1\n"
    )
    res = py(box, code % str(box.directory), "a", "b")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "__main__ ['-c', 'a', 'b'] True True\n['sys']\n" or res.stdout.startswith(
        "__main__ ['-c', 'a', 'b'] True True\n"
    )
    again = py(box, "print('x' in globals())")
    assert again.stdout == "False\n"


@pytest.mark.slow
def test_runtime_versions_and_thread_settings(box):
    code = (
        "import numpy, scipy, os\n"
        "from scipy.integrate import simps\n"
        "from mpl_toolkits.mplot3d import Axes3D\n"
        "import matplotlib\n"
        "print(numpy.__version__, scipy.__version__, matplotlib.get_backend().lower(),"
        " os.environ['OPENBLAS_NUM_THREADS'])\n"
    )
    res = py(box, code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["1.26.4", "1.13.1", "agg", "1"]


@pytest.mark.slow
def test_script_file_stdin_env_and_cwd(box):
    run(box.write_file("pkg/helper.py", "VALUE = 42\n"))
    run(
        box.write_file(
            "pkg/main.py",
            "import sys, os, helper\n"
            "print(helper.VALUE, sys.argv, sys.stdin.read(), os.environ['MY_VAR'])\n"
            "print(__file__)\n",
        )
    )
    res = run(box.exec(["python3", "pkg/main.py", "z"], input="from stdin", env={"MY_VAR": "v"}))
    assert res.returncode == 0, res.stderr
    # __file__ is absolute, as Python 3.9+ makes a script's (sys.argv keeps what was typed)
    first, second = res.stdout.splitlines()
    assert first == "42 ['pkg/main.py', 'z'] from stdin v"
    assert second.startswith("/") and second.endswith("/pkg/main.py")
    res = run(box.exec(["python3", "main.py"], cwd="pkg", env={"MY_VAR": "w"}))
    assert res.returncode == 0
    missing = run(box.exec(["python3", "nope.py"]))
    assert missing.returncode == 2 and "can't open file" in missing.stderr


@pytest.mark.slow
def test_traceback_looks_like_a_fresh_interpreter(box):
    res = py(box, "def f():\n    1/0\nf()")
    assert res.returncode == 1
    assert res.stderr.startswith('Traceback (most recent call last):\n  File "<string>", line 3')
    assert "zygote" not in res.stderr and "inside" not in res.stderr
    syntax = py(box, "def (")
    assert syntax.returncode == 1 and "SyntaxError" in syntax.stderr


@pytest.mark.slow
def test_other_commands_and_missing_executables(box):
    res = run(
        box.exec(["bash", "-c", "echo $HOME; python3 -c 'import scipy; print(scipy.__version__)'"])
    )
    assert res.stdout == "/tmp\n1.13.1\n"
    res = run(box.exec(["no-such-program"]))
    assert res.returncode == 127


@pytest.mark.slow
def test_files_stay_inside(box):
    run(box.write_file("d/e/f.bin", b"\x00\x01"))
    assert run(box.read_file("d/e/f.bin", text=False)) == b"\x00\x01"
    assert run(box.read_file(str(box.directory / "d/e/f.bin"), text=False)) == b"\x00\x01"
    for bad in ("../escape.txt", "/etc/passwd", "d/../../x"):
        with pytest.raises(PermissionError):
            run(box.write_file(bad, "x"))
        with pytest.raises(PermissionError):
            run(box.read_file(bad))
    with pytest.raises(FileNotFoundError):
        run(box.read_file("absent.txt"))


@pytest.mark.slow
def test_user_is_refused(box):
    from inspect_ai.util._sandbox.environment import SandboxUserUnsupportedError

    with pytest.raises(SandboxUserUnsupportedError):
        run(box.exec(["true"], user="root"))


@pytest.mark.slow
def test_concurrent_executions(box):
    async def many():
        code = "import numpy as np, sys; print(int(np.arange(int(sys.argv[1])).sum()))"
        return await asyncio.gather(
            *(box.exec(["python3", "-c", code, str(n)]) for n in range(1, 9))
        )

    results = run(many())
    assert [r.stdout for r in results] == [f"{n * (n - 1) // 2}\n" for n in range(1, 9)]
    assert_no_leftovers()


@pytest.mark.slow
def test_session_cleans_up():
    async def go():
        async with session(memory_gib=2) as sb:
            res = await sb.exec(["python3", "-c", "open('x', 'w').write('1')"])
            assert res.returncode == 0
            return sb.directory

    directory = run(go())
    assert not directory.exists()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["userns", "rlimits-only"])
def test_weaker_modes_still_run_and_say_so(mode):
    from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

    eng = Engine(mode=mode)
    sb = ScievalsSandbox(ScievalsSandboxConfig(), eng)
    try:
        assert eng.mode == mode
        res = run(sb.exec(["python3", "-c", "import os, numpy; print(numpy.__version__)"]))
        assert res.stdout == "1.26.4\n", res.stderr
        if mode == "userns":
            net = run(
                sb.exec(
                    [
                        "python3",
                        "-c",
                        "import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)",
                    ]
                )
            )
            assert net.returncode == 1 and "unreachable" in net.stderr
        else:
            assert "WEAKER" in detect_mode(mode)[1]
    finally:
        sb.cleanup()
        eng.close()
