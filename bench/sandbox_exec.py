"""Wall time to run N realistic numpy/scipy programs: a fresh ``python`` per program, Inspect's
``local`` sandbox, and ours (isolated, warm zygote). All use the pinned runtime's interpreter, so
only the way of running differs. Usage: python bench/sandbox_exec.py [N]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from scievals.sandbox import describe, session
from scievals.sandbox.engine import engine

TEMPLATES = [
    # a SciCode-like step: dependencies, a function, a few test-like calls
    """
import numpy as np
from scipy.integrate import simps, quad
def f(n):
    x = np.linspace(0, np.pi, 201 + n)
    return simps(np.sin(x) ** 2, x=x), quad(lambda t: np.exp(-t * t), 0, n + 1)[0]
print([round(v, 6) for v in f({n})])
""",
    """
import numpy as np
from scipy import linalg
rng = np.random.default_rng({n})
a = rng.normal(size=(80, 80)); a = a @ a.T + 80 * np.eye(80)
w = linalg.eigh(a, eigvals_only=True)
print(float(w.min()), float(linalg.det(a[:5, :5])))
""",
    """
import numpy as np
from scipy.optimize import minimize
def rosen(x):
    return sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
res = minimize(rosen, np.full(4, 0.5 + {n} / 100), method="Nelder-Mead", options={{"maxiter": 400}})
print(round(float(res.fun), 4))
""",
    """
import sympy as sp
x = sp.symbols("x")
expr = sp.series(sp.sin(x) * sp.exp(x), x, 0, 6 + {n} % 3).removeO()
print(sp.simplify(sp.diff(expr, x, 2)))
""",
    """
import numpy as np
from scipy.sparse import diags
from scipy.sparse.linalg import spsolve
n = 200 + {n}
A = diags([-1, 2, -1], [-1, 0, 1], shape=(n, n), format="csc")
print(round(float(spsolve(A, np.ones(n)).max()), 3))
""",
    """
import numpy as np
from scipy.special import jv
from scipy.interpolate import CubicSpline
x = np.linspace(0, 10, 50)
cs = CubicSpline(x, jv({n} % 4, x))
print(round(float(cs(3.3)), 6))
""",
]


def programs(n: int) -> list[str]:
    return [TEMPLATES[i % len(TEMPLATES)].format(n=i) for i in range(n)]


def fresh_sequential(python: str, codes: list[str]) -> list[str]:
    env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    return [
        subprocess.run([python, "-c", c], capture_output=True, text=True, env=env).stdout
        for c in codes
    ]


async def local_parallel(python: str, codes: list[str], width: int) -> list[str]:
    box = LocalSandboxEnvironment()
    gate = asyncio.Semaphore(width)
    env = {"OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}

    async def one(code: str) -> str:
        async with gate:
            return (await box.exec([python, "-c", code], env=env)).stdout

    try:
        return list(await asyncio.gather(*(one(c) for c in codes)))
    finally:
        box.directory.cleanup()


async def ours(codes: list[str], parallel: bool) -> list[str]:
    async with session() as box:
        if parallel:
            results = await asyncio.gather(*(box.exec(["python3", "-c", c]) for c in codes))
        else:
            results = [await box.exec(["python3", "-c", c]) for c in codes]
    return [r.stdout for r in results]


def timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    print(f"{label:<46} {wall:8.2f} s", flush=True)
    return wall, out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    width = os.cpu_count() or 1
    eng = engine()
    eng.ensure_started()
    python = str(eng.runtime.python)
    codes = programs(n)
    info = describe()
    print(f"{n} programs, {width} CPUs, sandbox mode {info['mode']}, runtime {info['runtime']}")
    base, ref = timed(
        "fresh python per program, sequential", lambda: fresh_sequential(python, codes)
    )
    loc, out_local = timed(
        f"Inspect local sandbox, {width} at a time",
        lambda: asyncio.run(local_parallel(python, codes, width)),
    )
    seq, out_seq = timed("scievals sandbox, sequential", lambda: asyncio.run(ours(codes, False)))
    par, out_par = timed(
        f"scievals sandbox, {width} at a time (default)", lambda: asyncio.run(ours(codes, True))
    )
    assert ref == out_local == out_seq == out_par, "the ways of running disagree on the outputs"
    print(
        f"ratios: fresh/ours-sequential {base / seq:.1f}x, fresh/ours {base / par:.1f}x, "
        f"local/ours {loc / par:.1f}x  (all outputs identical)"
    )
    print(f"per program: fresh {1000 * base / n:.0f} ms, ours sequential {1000 * seq / n:.0f} ms")


if __name__ == "__main__":
    main()
