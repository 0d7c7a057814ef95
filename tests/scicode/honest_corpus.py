"""Honest, unusual solutions of the 15 SciCode dev problems: the grader must agree with the
official rule on each of them.

Each case is one step's code, written differently from the gold code (the earlier steps of its
problem keep their gold code): values that are ordinary Python or NumPy but not exact plain
types, programs that print, write files, start threads or processes, mutate their arguments,
draw random numbers, recurse or cache, and other algorithms than gold's. Most are correct; some
are honest but wrong (the official rule fails them too), so that agreement is not trivial. The
verdict is never written down here: ``test_honest_corpus.py`` runs every case through the
official layout and through ``scievals grade scicode`` and compares them. The comment above each
case says what the official rule gave when the case was written.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

KINDS = (
    "result type",
    "output",
    "files",
    "threads and processes",
    "mutation",
    "randomness",
    "size",
    "structure",
    "algorithm",
)
"""What is unusual about a case: the value's type; printing, warnings and logging; files (the
working directory, /tmp, next to ``__file__``, its own source); other threads and processes;
arguments or buffers changed in place; random numbers; large values or views of large arrays;
recursion, closures, classes and caches; another algorithm than gold's."""


@dataclass(frozen=True)
class Case:
    id: str
    step: str
    kind: str
    code: str
    why: str
    over_size_bound: bool = False
    """Its records exceed the grader's stated size bound: failing as ``too_large`` is allowed."""

    @property
    def problem(self) -> str:
        return self.step.split(".")[0]

    def completion(self) -> str:
        return f"Here is my solution.\n\n```python\n{self.code}\n```\n"


def case(
    id: str, step: str, kind: str, why: str, *parts: str, over_size_bound: bool = False
) -> Case:
    """A case whose code is ``parts`` (each dedented on its own) joined."""
    code = "\n\n".join(textwrap.dedent(part).strip("\n") for part in parts)
    return Case(id, step, kind, code, why, over_size_bound)


# ---- shared pieces (each is my own formulation, not the gold text) -----------------------------

_CG = r"""
import numpy as np

def _conjugate_gradient(A, b, x, tol):
    x = np.array(x, dtype=float)
    r = b - A @ x
    p = r.copy()
    rr = r @ r
    while np.sqrt(rr) > tol:
        Ap = A @ p
        step = rr / (p @ Ap)
        x = x + step * p
        r = r - step * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x
"""

_GS = r"""
import numpy as np

def _gauss_seidel(A, b, eps, x_true, x0):
    n = len(b)
    x = np.array(x0, dtype=float)
    while True:
        previous = x.copy()
        for i in range(n):
            lower = A[i, :i] @ x[:i]
            upper = A[i, i + 1:] @ previous[i + 1:]
            x[i] = (b[i] - lower - upper) / A[i, i]
        if np.linalg.norm(x - previous) <= eps:
            break
    residual = np.linalg.norm(A @ x_true - A @ x)
    error = np.linalg.norm(x - x_true)
    return residual, error
"""

_LOWPASS_MASK = r"""
import numpy as np
from numpy.fft import fft2, ifft2, fftshift, ifftshift

def _mask(m, n, radius):
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    return (np.sqrt((i - m / 2) ** 2 + (j - n / 2) ** 2) < radius).astype(float)
"""

_BAND_MASK = r"""
import numpy as np
from numpy.fft import fft2, ifft2, fftshift, ifftshift

def _band(m, n, low, high):
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    d = np.sqrt((i - m / 2) ** 2 + (j - n / 2) ** 2)
    return ((d > low) & (d < high)).astype(float)

def _filtered(image, T):
    return np.real(ifft2(ifftshift(T * fftshift(fft2(image)))))
"""

_NBODY_VECTOR = r"""
import numpy as np

def _rhs(u, mass):
    G = 6.67430e-11
    x = u[:, :3]
    diff = x[:, None, :] - x[None, :, :]
    r = np.sqrt(np.sum(diff * diff, axis=-1))
    np.fill_diagonal(r, np.inf)
    acc = -G * np.sum(diff * (mass[None, :] / r**3)[:, :, None], axis=1)
    return np.concatenate([u[:, 3:], acc], axis=1)

def _rk4(u, mass, dt):
    k1 = _rhs(u, mass)
    k2 = _rhs(u + 0.5 * dt * k1, mass)
    k3 = _rhs(u + 0.5 * dt * k2, mass)
    k4 = _rhs(u + dt * k3, mass)
    return u + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
"""

_LJ_FORCES = r"""
import numpy as np

def _forces(sigma, epsilon, x):
    diff = x[:, None, :] - x[None, :, :]
    s2 = np.sum(diff * diff, axis=-1)
    np.fill_diagonal(s2, np.inf)
    q6 = (sigma**2 / s2) ** 3
    scale = 48 * epsilon / s2 * (q6 * q6 - 0.5 * q6)
    return np.sum(scale[:, :, None] * diff, axis=1)
"""

_MC_VECTOR = r"""
import numpy as np

def _energy_of(r, i, positions, sigma, epsilon):
    d = np.linalg.norm(positions - r, axis=1)
    d = np.delete(d, i)
    q6 = (sigma / d) ** 6
    return float(np.sum(4 * epsilon * (q6 * q6 - q6)))
"""


CASES: list[Case] = [
    # ---- 1.1 conjugate gradient -------------------------------------------------------------
    # official: passes
    case(
        "1.1-deque",
        "1.1",
        "result type",
        "returns the solution as a collections.deque",
        _CG,
        r"""
        import collections

        def cg(A, b, x, tol):
            return collections.deque(_conjugate_gradient(A, b, x, tol))
        """,
    ),
    # official: passes
    case(
        "1.1-array-module",
        "1.1",
        "result type",
        "returns an array.array('d') (buffer protocol, not NumPy)",
        _CG,
        r"""
        import array

        def cg(A, b, x, tol):
            return array.array('d', _conjugate_gradient(A, b, x, tol))
        """,
    ),
    # official: passes
    case(
        "1.1-memmap",
        "1.1",
        "result type",
        "returns an np.memmap backed by a file it writes in the working directory",
        _CG,
        r"""
        def cg(A, b, x, tol):
            solution = _conjugate_gradient(A, b, x, tol)
            out = np.memmap('cg_solution.dat', dtype='float64', mode='w+', shape=solution.shape)
            out[:] = solution
            out.flush()
            return out
        """,
    ),
    # official: passes
    case(
        "1.1-masked",
        "1.1",
        "result type",
        "returns an unmasked np.ma.MaskedArray",
        _CG,
        r"""
        def cg(A, b, x, tol):
            return np.ma.masked_array(_conjugate_gradient(A, b, x, tol), mask=False)
        """,
    ),
    # official: passes
    case(
        "1.1-verbose",
        "1.1",
        "output",
        "prints about 1.5 MB of progress (a power-iteration condition estimate, step by step)",
        _CG,
        r"""
        def cg(A, b, x, tol):
            v = np.ones(len(b))
            for k in range(8000):
                w = A @ v
                estimate = np.linalg.norm(w) / np.linalg.norm(v)
                v = w / np.linalg.norm(w)
                print(f"power iteration {k:5d}: spectral radius estimate {estimate:.17e}")
            x = _conjugate_gradient(A, b, x, tol)
            print("solution", x)
            return x
        """,
    ),
    # official: passes
    case(
        "1.1-list",
        "1.1",
        "result type",
        "returns a Python list of floats instead of an array",
        _CG,
        r"""
        def cg(A, b, x, tol):
            return _conjugate_gradient(A, b, x, tol).tolist()
        """,
    ),
    # official: passes
    case(
        "1.1-direct-solve",
        "1.1",
        "algorithm",
        "another algorithm: a direct LU solve instead of iterating",
        r"""
        import numpy as np

        def cg(A, b, x, tol):
            return np.linalg.solve(A, b)
        """,
    ),
    # official: passes
    case(
        "1.1-matrix-row",
        "1.1",
        "result type",
        "returns an np.matrix row (1, M)",
        _CG,
        r"""
        def cg(A, b, x, tol):
            return np.asmatrix(_conjugate_gradient(A, b, x, tol))
        """,
    ),
    # official: fails (a generator is not array-like)
    case(
        "1.1-generator",
        "1.1",
        "result type",
        "wrong: yields the components lazily (np.allclose cannot read a generator)",
        _CG,
        r"""
        def cg(A, b, x, tol):
            return (float(v) for v in _conjugate_gradient(A, b, x, tol))
        """,
    ),
    # ---- 3.1 Gauss-Seidel -------------------------------------------------------------------
    # official: passes
    case(
        "3.1-namedtuple",
        "3.1",
        "result type",
        "returns a collections.namedtuple",
        _GS,
        r"""
        from collections import namedtuple

        GSResult = namedtuple('GSResult', ['residual', 'error'])

        def GS(A, b, eps, x_true, x0):
            return GSResult(*_gauss_seidel(A, b, eps, x_true, x0))
        """,
    ),
    # official: passes
    case(
        "3.1-typing-namedtuple",
        "3.1",
        "result type",
        "returns a typing.NamedTuple with float fields",
        _GS,
        r"""
        from typing import NamedTuple

        class Errors(NamedTuple):
            residual: float
            error: float

        def GS(A, b, eps, x_true, x0):
            residual, error = _gauss_seidel(A, b, eps, x_true, x0)
            return Errors(float(residual), float(error))
        """,
    ),
    # official: passes
    case(
        "3.1-dataclass-array",
        "3.1",
        "result type",
        "returns a dataclass that converts itself with __array__",
        _GS,
        r"""
        from dataclasses import dataclass

        @dataclass
        class Convergence:
            residual: float
            error: float

            def __array__(self, dtype=None, copy=None):
                return np.array([self.residual, self.error], dtype=dtype)

        def GS(A, b, eps, x_true, x0):
            return Convergence(*_gauss_seidel(A, b, eps, x_true, x0))
        """,
    ),
    # official: passes
    case(
        "3.1-ndarray",
        "3.1",
        "result type",
        "returns a 2-element ndarray instead of a tuple",
        _GS,
        r"""
        def GS(A, b, eps, x_true, x0):
            return np.array(_gauss_seidel(A, b, eps, x_true, x0))
        """,
    ),
    # official: passes
    case(
        "3.1-float32",
        "3.1",
        "result type",
        "returns np.float32 scalars",
        _GS,
        r"""
        def GS(A, b, eps, x_true, x0):
            residual, error = _gauss_seidel(A, b, eps, x_true, x0)
            return np.float32(residual), np.float32(error)
        """,
    ),
    # official: passes
    case(
        "3.1-scipy-triangular",
        "3.1",
        "algorithm",
        "another algorithm: scipy's triangular solve per sweep, returns a list",
        r"""
        import numpy as np
        from scipy.linalg import solve_triangular

        def GS(A, b, eps, x_true, x0):
            lower = np.tril(A)
            upper = np.triu(A, 1)
            x = np.asarray(x0, dtype=float)
            while True:
                new = solve_triangular(lower, b - upper @ x, lower=True)
                done = np.linalg.norm(new - x) <= eps
                x = new
                if done:
                    break
            return [np.linalg.norm(A @ x_true - A @ x), np.linalg.norm(x - x_true)]
        """,
    ),
    # official: passes
    case(
        "3.1-tuple-subclass",
        "3.1",
        "result type",
        "returns a plain tuple subclass with a descriptive repr",
        _GS,
        r"""
        class Pair(tuple):
            def __repr__(self):
                return f"residual={self[0]:.3e}, error={self[1]:.3e}"

        def GS(A, b, eps, x_true, x0):
            result = Pair(_gauss_seidel(A, b, eps, x_true, x0))
            print(result)
            return result
        """,
    ),
    # official: passes
    case(
        "3.1-slogdet-type",
        "3.1",
        "result type",
        "packs the pair in numpy's own 2-field result namedtuple (the type slogdet returns)",
        _GS,
        r"""
        SlogdetResult = type(np.linalg.slogdet(np.eye(2)))

        def GS(A, b, eps, x_true, x0):
            return SlogdetResult(*_gauss_seidel(A, b, eps, x_true, x0))
        """,
    ),
    # ---- 4.1 incomplete Cholesky ------------------------------------------------------------
    # official: passes
    case(
        "4.1-copy",
        "4.1",
        "mutation",
        "factorizes a copy and leaves its argument untouched (gold works in place)",
        r"""
        import numpy as np

        def ichol(A):
            L = np.array(A, dtype=float)
            n = L.shape[0]
            for k in range(n):
                L[k, k] = np.sqrt(L[k, k])
                for i in range(k + 1, n):
                    if L[i, k] != 0:
                        L[i, k] /= L[k, k]
                for j in range(k + 1, n):
                    for i in range(j, n):
                        if L[i, j] != 0:
                            L[i, j] -= L[i, k] * L[j, k]
            return np.tril(L)
        """,
    ),
    # official: passes
    case(
        "4.1-scipy-cholesky",
        "4.1",
        "algorithm",
        "another algorithm: scipy's full Cholesky (no fill-in for these band patterns)",
        r"""
        import numpy as np
        import scipy.linalg

        def ichol(A):
            return scipy.linalg.cholesky(A, lower=True)
        """,
    ),
    # official: passes
    case(
        "4.1-fork-pool",
        "4.1",
        "threads and processes",
        "computes the factor in a forked multiprocessing worker",
        r"""
        import multiprocessing
        import numpy as np

        def _factor(A):
            return np.linalg.cholesky(A)

        def ichol(A):
            with multiprocessing.get_context('fork').Pool(1) as pool:
                return pool.apply(_factor, (np.array(A, dtype=float),))
        """,
    ),
    # official: passes
    case(
        "4.1-ndarray-subclass",
        "4.1",
        "result type",
        "returns a view of its own ndarray subclass",
        r"""
        import numpy as np

        class LowerTriangular(np.ndarray):
            pass

        def ichol(A):
            return np.linalg.cholesky(A).view(LowerTriangular)
        """,
    ),
    # official: passes
    case(
        "4.1-transposed-view",
        "4.1",
        "result type",
        "builds the upper factor and returns its transpose (a non-contiguous view)",
        r"""
        import numpy as np

        def ichol(A):
            n = A.shape[0]
            U = np.zeros((n, n), order='F')
            for i in range(n):
                U[i, i] = np.sqrt(A[i, i] - U[:i, i] @ U[:i, i])
                for j in range(i + 1, n):
                    if A[i, j] != 0:
                        U[i, j] = (A[i, j] - U[:i, i] @ U[:i, j]) / U[i, i]
            return U.T
        """,
    ),
    # official: passes
    case(
        "4.1-recursive",
        "4.1",
        "structure",
        "recursion: peels one column and recurses on the Schur complement",
        r"""
        import numpy as np

        def _chol(A):
            n = A.shape[0]
            L = np.zeros_like(A, dtype=float)
            if n == 0:
                return L
            L[0, 0] = np.sqrt(A[0, 0])
            column = A[1:, 0] / L[0, 0]
            L[1:, 0] = column
            schur = A[1:, 1:] - np.outer(column, column)
            schur[A[1:, 1:] == 0] = 0
            L[1:, 1:] = _chol(schur)
            return L

        def ichol(A):
            return _chol(np.array(A, dtype=float))
        """,
    ),
    # official: fails (returns None)
    case(
        "4.1-in-place-none",
        "4.1",
        "mutation",
        "wrong: factorizes in place like LAPACK and returns nothing",
        r"""
        import numpy as np

        def ichol(A):
            A[:] = np.linalg.cholesky(A)
        """,
    ),
    # ---- 6.1 low-pass filter ----------------------------------------------------------------
    # official: passes
    case(
        "6.1-vectorized",
        "6.1",
        "algorithm",
        "another algorithm: the mask by broadcasting instead of two loops",
        _LOWPASS_MASK,
        r"""
        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _mask(m, n, frequency_threshold)
            spectrum = fftshift(fft2(image_array))
            return T, np.real(ifft2(ifftshift(T * spectrum)))
        """,
    ),
    # official: passes
    case(
        "6.1-extended-precision",
        "6.1",
        "size",
        "returns the mask as longdouble and the unreduced complex image as clongdouble "
        "(about 123 MB of values over the tests)",
        _LOWPASS_MASK,
        r"""
        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _mask(m, n, frequency_threshold)
            image = ifft2(ifftshift(T * fftshift(fft2(image_array))))
            return T.astype(np.longdouble), image.astype(np.clongdouble)
        """,
        over_size_bound=True,
    ),
    # official: passes
    case(
        "6.1-scipy-fft-list",
        "6.1",
        "result type",
        "scipy.fft instead of numpy.fft, and a list instead of a tuple",
        _LOWPASS_MASK,
        r"""
        import scipy.fft

        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _mask(m, n, frequency_threshold)
            spectrum = scipy.fft.fftshift(scipy.fft.fft2(image_array))
            return [T, scipy.fft.ifft2(scipy.fft.ifftshift(T * spectrum)).real]
        """,
    ),
    # official: passes
    case(
        "6.1-namedtuple",
        "6.1",
        "result type",
        "returns a collections.namedtuple (filter, image)",
        _LOWPASS_MASK,
        r"""
        from collections import namedtuple

        Filtered = namedtuple('Filtered', 'filter image')

        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _mask(m, n, frequency_threshold)
            return Filtered(T, np.real(ifft2(ifftshift(T * fftshift(fft2(image_array))))))
        """,
    ),
    # official: passes
    case(
        "6.1-bool-mask",
        "6.1",
        "result type",
        "returns the mask as a bool array",
        _LOWPASS_MASK,
        r"""
        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _mask(m, n, frequency_threshold)
            image = np.real(ifft2(ifftshift(T * fftshift(fft2(image_array)))))
            return T.astype(bool), image
        """,
    ),
    # official: passes
    case(
        "6.1-tmp-cache-logging",
        "6.1",
        "files",
        "caches masks as .npy files in /tmp and logs every row it builds (logging to stderr)",
        r"""
        import logging
        import os
        import numpy as np
        from numpy.fft import fft2, ifft2, fftshift, ifftshift

        logging.basicConfig(level=logging.INFO)
        log = logging.getLogger('lowpass')

        def _mask(m, n, radius):
            path = f'/tmp/scievals_corpus_lowpass_{os.getpid()}_{m}_{n}_{radius}.npy'
            if os.path.exists(path):
                return np.load(path)
            T = np.zeros((m, n))
            for i in range(m):
                T[i] = np.sqrt((i - m / 2) ** 2 + (np.arange(n) - n / 2) ** 2) < radius
                log.info('mask row %d of %d: %d pixels kept', i, m, T[i].sum())
            np.save(path, T)
            return T

        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _mask(m, n, frequency_threshold)
            return T, np.real(ifft2(ifftshift(T * fftshift(fft2(image_array)))))
        """,
    ),
    # official: fails (test 4: both masks are the same buffer, so their areas do not differ)
    case(
        "6.1-reused-buffer",
        "6.1",
        "mutation",
        "wrong: returns a mask buffer it reuses on every call of the same size",
        _LOWPASS_MASK,
        r"""
        _BUFFERS = {}

        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            T = _BUFFERS.setdefault((m, n), np.empty((m, n)))
            T[:] = _mask(m, n, frequency_threshold)
            return T, np.real(ifft2(ifftshift(T * fftshift(fft2(image_array)))))
        """,
    ),
    # official: fails (the circle's boundary pixels are kept)
    case(
        "6.1-inclusive-radius",
        "6.1",
        "algorithm",
        "wrong: keeps frequencies at exactly the threshold radius (<= instead of <)",
        r"""
        import numpy as np
        from numpy.fft import fft2, ifft2, fftshift, ifftshift

        def apply_low_pass_filter(image_array, frequency_threshold):
            m, n = image_array.shape
            i, j = np.ogrid[:m, :n]
            T = (np.hypot(i - m / 2, j - n / 2) <= frequency_threshold).astype(float)
            return T, np.real(ifft2(ifftshift(T * fftshift(fft2(image_array)))))
        """,
    ),
    # ---- 7.1 band-pass filter ---------------------------------------------------------------
    # official: passes
    case(
        "7.1-threads",
        "7.1",
        "threads and processes",
        "builds the mask in chunks of rows on a thread pool",
        r"""
        import numpy as np
        from concurrent.futures import ThreadPoolExecutor
        from numpy.fft import fft2, ifft2, fftshift, ifftshift

        def apply_band_pass_filter(image_array, bandmin, bandmax):
            m, n = image_array.shape
            T = np.zeros((m, n))
            j = np.arange(n)

            def rows(start):
                for i in range(start, min(start + 64, m)):
                    d = np.sqrt((i - m / 2) ** 2 + (j - n / 2) ** 2)
                    T[i] = (d > bandmin) & (d < bandmax)

            with ThreadPoolExecutor(4) as pool:
                list(pool.map(rows, range(0, m, 64)))
            return T, np.real(ifft2(ifftshift(T * fftshift(fft2(image_array)))))
        """,
    ),
    # official: fails (test 4's two calls map the same files: the first mask is overwritten)
    case(
        "7.1-memmap",
        "7.1",
        "files",
        "wrong: returns np.memmap arrays backed by fixed files in the working directory, so a "
        "later call rewrites what an earlier call returned",
        _BAND_MASK,
        r"""
        def apply_band_pass_filter(image_array, bandmin, bandmax):
            m, n = image_array.shape
            T = np.memmap('band_mask.dat', dtype=float, mode='w+', shape=(m, n))
            T[:] = _band(m, n, bandmin, bandmax)
            image = np.memmap('band_image.dat', dtype=float, mode='w+', shape=(m, n))
            image[:] = _filtered(image_array, T)
            return T, image
        """,
    ),
    # official: passes
    case(
        "7.1-class-int8",
        "7.1",
        "structure",
        "a filter class with __call__; the mask as int8; scipy.fft",
        r"""
        import numpy as np
        import scipy.fft

        class BandPass:
            def __init__(self, low, high):
                self.low, self.high = low, high

            def mask(self, m, n):
                i, j = np.ogrid[:m, :n]
                d = np.sqrt((i - m / 2) ** 2 + (j - n / 2) ** 2)
                return ((d > self.low) & (d < self.high)).astype(np.int8)

            def __call__(self, image):
                T = self.mask(*image.shape)
                spectrum = scipy.fft.fftshift(scipy.fft.fft2(image))
                return T, scipy.fft.ifft2(scipy.fft.ifftshift(T * spectrum)).real

        def apply_band_pass_filter(image_array, bandmin, bandmax):
            return BandPass(bandmin, bandmax)(image_array)
        """,
    ),
    # official: passes
    case(
        "7.1-warnings",
        "7.1",
        "output",
        "emits a UserWarning and a RuntimeWarning (division by zero at the centre) per call",
        _BAND_MASK,
        r"""
        import warnings

        def apply_band_pass_filter(image_array, bandmin, bandmax):
            m, n = image_array.shape
            if bandmin < 50:
                warnings.warn(f'band starts low ({bandmin}): mean level may leak', UserWarning)
            i, j = np.ogrid[:m, :n]
            inverse = 1.0 / np.sqrt((i - m / 2) ** 2 + (j - n / 2) ** 2)  # inf at the centre
            T = _band(m, n, bandmin, bandmax)
            print('mean inverse radius in band', float(np.sum(inverse * T) / T.sum()))
            return T, _filtered(image_array, T)
        """,
    ),
    # official: passes
    case(
        "7.1-fromfunction",
        "7.1",
        "algorithm",
        "the mask with np.fromfunction and a lambda",
        r"""
        import numpy as np
        from numpy.fft import fft2, ifft2, fftshift, ifftshift

        def apply_band_pass_filter(image_array, bandmin, bandmax):
            m, n = image_array.shape
            radius = lambda i, j: np.sqrt((i - m / 2) ** 2 + (j - n / 2) ** 2)
            T = np.fromfunction(lambda i, j: (radius(i, j) > bandmin) & (radius(i, j) < bandmax),
                                (m, n)).astype(float)
            return T, np.real(ifft2(ifftshift(T * fftshift(fft2(image_array)))))
        """,
    ),
    # official: passes
    case(
        "7.1-quiet",
        "7.1",
        "output",
        "sends its own prints to os.devnull by replacing sys.stdout at import",
        _BAND_MASK,
        r"""
        import os
        import sys

        sys.stdout = open(os.devnull, 'w')

        def apply_band_pass_filter(image_array, bandmin, bandmax):
            T = _band(*image_array.shape, bandmin, bandmax)
            print('band pass keeps', int(T.sum()), 'frequencies')
            return T, _filtered(image_array, T)
        """,
    ),
    # official: fails (a dict is not array-like, and unpacking it gives its keys)
    case(
        "7.1-dict",
        "7.1",
        "result type",
        "wrong: returns a dict {'filter': ..., 'image': ...}",
        _BAND_MASK,
        r"""
        def apply_band_pass_filter(image_array, bandmin, bandmax):
            T = _band(*image_array.shape, bandmin, bandmax)
            return {'filter': T, 'image': _filtered(image_array, T)}
        """,
    ),
    # ---- 10 Ewald summation -----------------------------------------------------------------
    # official: passes
    case(
        "10.2-product-list",
        "10.2",
        "result type",
        "itertools.product and a list of lists instead of an array",
        r"""
        import itertools
        import numpy as np

        def get_lattice_coords(latvec, nlatvec=1):
            span = range(-nlatvec, nlatvec + 1)
            return [list(np.array(n) @ latvec) for n in itertools.product(span, repeat=3)]
        """,
    ),
    # official: passes
    case(
        "10.3-ordered-dict",
        "10.3",
        "result type",
        "returns an OrderedDict keyed 0 and 1 (the test reads [0] and [1])",
        r"""
        from collections import OrderedDict
        from itertools import combinations
        import numpy as np

        def distance_matrix(configs):
            pairs = list(combinations(range(len(configs)), 2))
            distances = np.array([configs[j] - configs[i] for i, j in pairs]).reshape(-1, 3)
            return OrderedDict([(0, distances), (1, pairs)])
        """,
    ),
    # official: passes
    case(
        "10.3-defaultdict",
        "10.3",
        "result type",
        "returns a collections.defaultdict keyed 0 and 1",
        r"""
        from collections import defaultdict
        import numpy as np

        def distance_matrix(configs):
            result = defaultdict(list)
            n = len(configs)
            rows = []
            for i in range(n):
                for j in range(i + 1, n):
                    rows.append(configs[j] - configs[i])
                    result[1].append((i, j))
            result[0] = np.array(rows).reshape(-1, 3)
            return result
        """,
    ),
    # official: passes
    case(
        "10.3-result-class",
        "10.3",
        "result type",
        "a small result class with __getitem__, __iter__ and __len__",
        r"""
        import numpy as np

        class PairDistances:
            def __init__(self, distances, pairs):
                self.distances, self.pairs = distances, pairs

            def __getitem__(self, index):
                return (self.distances, self.pairs)[index]

            def __iter__(self):
                return iter((self.distances, self.pairs))

            def __len__(self):
                return 2

        def distance_matrix(configs):
            i, j = np.triu_indices(len(configs), k=1)
            return PairDistances(configs[j] - configs[i], list(zip(i.tolist(), j.tolist())))
        """,
    ),
    # official: passes
    case(
        "10.4-vectorize-closure",
        "10.4",
        "structure",
        "math.erfc through np.vectorize inside a closure",
        r"""
        import math
        import numpy as np

        def real_cij(distances, lattice_coords, alpha):
            def screened():
                erfc = np.vectorize(math.erfc)
                return lambda r: erfc(alpha * r) / r
            r = np.linalg.norm(distances + lattice_coords, axis=-1)
            return screened()(r).sum(axis=-1)
        """,
    ),
    # official: passes
    case(
        "10.6-sorted-order",
        "10.6",
        "algorithm",
        "another algorithm: loops over the half space, points sorted by length (the test "
        "compares as sets)",
        r"""
        import itertools
        import numpy as np

        def generate_gpoints(recvec, gmax):
            span = range(-gmax, gmax + 1)
            half = [n for n in itertools.product(span, repeat=3) if n > (0, 0, 0)]
            points = np.array(half) @ (2 * np.pi * recvec)
            return points[np.argsort(np.linalg.norm(points, axis=1), kind='stable')]
        """,
    ),
    # official: fails (the test reads .shape)
    case(
        "10.6-list",
        "10.6",
        "result type",
        "wrong: returns a list of lists, which the test's are_equivalent cannot read",
        r"""
        import numpy as np

        def generate_gpoints(recvec, gmax):
            g = np.mgrid[-gmax:gmax + 1, -gmax:gmax + 1, -gmax:gmax + 1].reshape(3, -1).T
            keep = [tuple(n) > (0, 0, 0) for n in g]
            return (g[keep] @ (2 * np.pi * recvec)).tolist()
        """,
    ),
    # official: passes
    case(
        "10.7-namedtuple",
        "10.7",
        "result type",
        "returns a collections.namedtuple (compared by cmp_tuple_or_list)",
        r"""
        from collections import namedtuple
        import numpy as np

        Selected = namedtuple('Selected', ['gpoints', 'gweights'])

        def select_big_weights(gpoints_all, cell_volume, alpha, tol=1e-10):
            g2 = np.sum(gpoints_all**2, axis=1)
            weights = 4 * np.pi * np.exp(-g2 / (4 * alpha**2)) / (cell_volume * g2)
            keep = weights > tol
            return Selected(gpoints_all[keep], weights[keep])
        """,
    ),
    # official: passes
    case(
        "10.11-sphere",
        "10.11",
        "algorithm",
        "another algorithm: only the g-points inside the cutoff sphere, not the gmax cube",
        r"""
        import itertools
        import numpy as np
        from scipy.optimize import brentq

        def total_energy(latvec, atom_charges, atom_coords, configs, gmax):
            nelec = configs.shape[0]
            recvec = np.linalg.inv(latvec).T
            alpha = get_alpha(recvec)
            volume = np.linalg.det(latvec)
            basis = recvec * 2 * np.pi
            # the largest |g| whose weight can still pass select_big_weights' 1e-10
            weight = lambda g: np.log(4 * np.pi) - g * g / (4 * alpha**2) - np.log(volume * g * g)
            cutoff = brentq(lambda g: weight(g) - np.log(1e-10), 1e-3, 1e3) * 1.01
            smallest = np.linalg.svd(basis, compute_uv=False).min()
            nmax = min(gmax, int(cutoff / smallest) + 1)
            span = range(-nmax, nmax + 1)
            half = np.array([n for n in itertools.product(span, repeat=3) if n > (0, 0, 0)])
            gpoints_all = np.einsum('ij,jk->ik', half, basis)
            gpoints, gweights = select_big_weights(gpoints_all, volume, alpha)
            lattice_coords = get_lattice_coords(latvec, nlatvec=1)
            return (
                sum_real_cross(atom_charges, atom_coords, configs, lattice_coords, alpha)
                + sum_real_self(atom_charges, nelec, alpha)
                + sum_recip(atom_charges, atom_coords, configs, gweights, gpoints)
                + sum_charge(atom_charges, nelec, volume, alpha)
            )
        """,
    ),
    # ---- 19 n-tangle ------------------------------------------------------------------------
    # official: passes
    case(
        "19.1-reduce",
        "19.1",
        "algorithm",
        "functools.reduce over np.kron",
        r"""
        from functools import reduce
        import numpy as np

        def tensor(*args):
            return reduce(np.kron, args, np.array(1))
        """,
    ),
    # official: passes
    case(
        "19.1-recursive",
        "19.1",
        "structure",
        "recursion on the tail of the argument list",
        r"""
        import numpy as np

        def tensor(*args):
            if len(args) == 1:
                return np.asarray(args[0])
            return np.kron(args[0], tensor(*args[1:]))
        """,
    ),
    # official: passes
    case(
        "19.1-seterr",
        "19.1",
        "structure",
        "turns every floating-point warning into an error at import; einsum outer products",
        r"""
        import numpy as np

        np.seterr(all='raise')

        def _kron(a, b):
            a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
            if a.ndim <= 1 and b.ndim <= 1:
                return np.einsum('i,k->ik', np.atleast_1d(a), np.atleast_1d(b)).reshape(-1)
            a, b = np.atleast_2d(a), np.atleast_2d(b)
            rows, cols = a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]
            return np.einsum('ij,kl->ikjl', a, b).reshape(rows, cols)

        def tensor(*args):
            result = np.asarray(args[0], dtype=float)
            for factor in args[1:]:
                result = _kron(result, factor)
            return result
        """,
    ),
    # official: passes
    case(
        "19.1-pool-recursive",
        "19.1",
        "threads and processes",
        "recursion through forked workers: each half of the factors is a call of tensor itself "
        "in a multiprocessing pool",
        r"""
        import multiprocessing
        import numpy as np

        def tensor(*args):
            if len(args) == 1:
                return np.asarray(args[0])
            half = len(args) // 2
            with multiprocessing.get_context('fork').Pool(2) as pool:
                left, right = pool.starmap(tensor, [args[:half], args[half:]])
            return np.kron(left, right)
        """,
    ),
    # official: passes
    case(
        "19.1-thread-recursive",
        "19.1",
        "threads and processes",
        "recursion through threads: each half of the factors is a call of tensor itself on "
        "another thread",
        r"""
        from concurrent.futures import ThreadPoolExecutor
        import numpy as np

        def tensor(*args):
            if len(args) == 1:
                return np.asarray(args[0])
            half = len(args) // 2
            with ThreadPoolExecutor(2) as pool:
                left = pool.submit(tensor, *args[:half])
                right = pool.submit(tensor, *args[half:])
                return np.kron(left.result(), right.result())
        """,
    ),
    # official: passes
    case(
        "19.2-lru-cache",
        "19.2",
        "structure",
        "functools.lru_cache for the sigma_y product of each size; returns a Python float",
        r"""
        from functools import lru_cache
        import numpy as np

        @lru_cache(maxsize=None)
        def _flip(n):
            sigma_y = np.array([[0, -1j], [1j, 0]])
            return tensor(*([sigma_y] * n))

        def n_tangle(psi):
            n = int(np.log2(len(psi)))
            return float(abs(psi @ (_flip(n) @ np.conj(psi))) ** 2)
        """,
    ),
    # official: passes
    case(
        "19.2-tensordot",
        "19.2",
        "algorithm",
        "another algorithm: applies sigma_y qubit by qubit on the reshaped state",
        r"""
        import numpy as np

        def n_tangle(psi):
            n = int(np.log2(len(psi)))
            sigma_y = np.array([[0, -1j], [1j, 0]])
            state = np.conj(np.asarray(psi, dtype=complex)).reshape((2,) * n)
            for axis in range(n):
                state = np.moveaxis(np.tensordot(sigma_y, state, axes=(1, axis)), 0, axis)
            return np.abs(np.sum(np.asarray(psi) * state.ravel())) ** 2
        """,
    ),
    # official: passes
    case(
        "19.2-complex-longdouble",
        "19.2",
        "result type",
        "returns a complex number with zero imaginary part, built from np.longdouble",
        r"""
        import numpy as np

        def n_tangle(psi):
            n = int(np.log2(len(psi)))
            sigma_y = np.array([[0, -1j], [1j, 0]])
            flip = sigma_y
            for _ in range(n - 1):
                flip = np.kron(flip, sigma_y)
            value = np.longdouble(abs(np.inner(psi, flip @ np.conj(psi)))) ** 2
            return complex(value)
        """,
    ),
    # ---- 29 Gram-Schmidt --------------------------------------------------------------------
    # official: fails (in-place true division of an integer array)
    case(
        "29.1-in-place",
        "29.1",
        "mutation",
        "wrong: normalizes in place, which cannot hold floats in the test's integer arrays",
        r"""
        import numpy as np

        def normalize(v):
            norm = np.linalg.norm(v)
            if norm:
                v /= norm
            return v
        """,
    ),
    # official: passes
    case(
        "29.1-hypot",
        "29.1",
        "algorithm",
        "math.hypot over the flattened entries",
        r"""
        import math
        import numpy as np

        def normalize(v):
            norm = math.hypot(*np.ravel(v).tolist())
            return v / norm if norm else v
        """,
    ),
    # official: passes
    case(
        "29.2-subprocess",
        "29.2",
        "threads and processes",
        "computes the product in a `python -c` subprocess",
        r"""
        import json
        import subprocess
        import sys
        import numpy as np

        def inner_product(u, v):
            program = 'import json, sys; u, v = json.load(sys.stdin); print(sum(a * b for a, b in zip(u, v)))'
            done = subprocess.run([sys.executable, '-c', program], input=json.dumps([np.asarray(u).tolist(), np.asarray(v).tolist()]),
                                  capture_output=True, text=True, check=True)
            return float(done.stdout)
        """,
    ),
    # official: passes
    case(
        "29.2-python-int",
        "29.2",
        "result type",
        "an exact Python int from a generator expression",
        r"""
        def inner_product(u, v):
            return sum(int(a) * int(b) for a, b in zip(u, v))
        """,
    ),
    # official: passes
    case(
        "29.3-file-cache",
        "29.3",
        "files",
        "caches results as .npy files in a directory next to __file__",
        r"""
        import hashlib
        import os
        import numpy as np

        CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gram_schmidt_cache')

        def orthogonalize(A):
            os.makedirs(CACHE, exist_ok=True)
            key = hashlib.sha256(np.ascontiguousarray(A, dtype=float).tobytes()
                                 + str(A.shape).encode()).hexdigest()
            path = os.path.join(CACHE, key + '.npy')
            if os.path.exists(path):
                return np.load(path)
            B = np.zeros(A.shape)
            for j in range(A.shape[-1]):
                B[:, j] = A[:, j]
                for k in range(j):
                    B[:, j] -= B[:, k] * inner_product(A[:, j], B[:, k])
                B[:, j] = normalize(B[:, j])
            np.save(path, B)
            return B
        """,
    ),
    # official: passes
    case(
        "29.3-getsource",
        "29.3",
        "files",
        "reads its own source with inspect.getsource (to log a version tag)",
        r"""
        import hashlib
        import inspect
        import numpy as np

        def orthogonalize(A):
            tag = hashlib.md5(inspect.getsource(orthogonalize).encode()).hexdigest()[:8]
            print(f'orthogonalize {tag}: {A.shape[1]} vectors')
            B = np.array(A, dtype=float)
            for j in range(B.shape[1]):
                for k in range(j):
                    B[:, j] -= B[:, k] * (A[:, j] @ B[:, k])
                B[:, j] /= np.linalg.norm(B[:, j])
            return B
        """,
    ),
    # official: passes
    case(
        "29.3-qr-signs",
        "29.3",
        "algorithm",
        "another algorithm: Householder QR with the signs fixed so that R has a positive diagonal",
        r"""
        import numpy as np

        def orthogonalize(A):
            Q, R = np.linalg.qr(np.asarray(A, dtype=float))
            return Q * np.sign(np.diag(R))
        """,
    ),
    # official: fails (a (Q, R) pair is not the (N, N) basis)
    case(
        "29.3-qr-result",
        "29.3",
        "result type",
        "wrong: returns np.linalg.qr's namedtuple (Q, R) itself",
        r"""
        import numpy as np

        def orthogonalize(A):
            return np.linalg.qr(np.asarray(A, dtype=float))
        """,
    ),
    # ---- 38 reciprocal lattice --------------------------------------------------------------
    # official: passes
    case(
        "38.1-fraction-list",
        "38.1",
        "result type",
        "components computed as Fractions, returned as a list of floats",
        r"""
        from fractions import Fraction

        def cross(a, b):
            a = [Fraction(float(x)) for x in a]
            b = [Fraction(float(x)) for x in b]
            t = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
            return [float(x) for x in t]
        """,
    ),
    # official: passes
    case(
        "38.1-cofactors",
        "38.1",
        "algorithm",
        "another algorithm: cofactors of a 3x3 determinant, returned as a tuple",
        r"""
        import numpy as np

        def cross(a, b):
            m = np.array([np.zeros(3), a, b], dtype=float)
            return tuple(
                (-1) ** k * np.linalg.det(np.delete(m[1:], k, axis=1)) for k in range(3)
            )
        """,
    ),
    # official: passes
    case(
        "38.2-inverse",
        "38.2",
        "algorithm",
        "another algorithm: 2 pi times the inverse transpose, one (3, 3) ndarray",
        r"""
        import numpy as np

        def reciprocal_3D(a1, a2, a3):
            return 2 * np.pi * np.linalg.inv(np.array([a1, a2, a3], dtype=float)).T
        """,
    ),
    # official: passes
    case(
        "38.2-json-tuple",
        "38.2",
        "files",
        "writes the vectors to a JSON file in the working directory, returns them re-read "
        "as a tuple",
        r"""
        import json
        import numpy as np

        def reciprocal_3D(a1, a2, a3):
            volume = np.dot(a1, cross(a2, a3))
            vectors = [2 * np.pi * cross(p, q) / volume for p, q in ((a2, a3), (a3, a1), (a1, a2))]
            with open('reciprocal.json', 'w') as f:
                json.dump([v.tolist() for v in vectors], f)
            with open('reciprocal.json') as f:
                return tuple(np.array(v) for v in json.load(f))
        """,
    ),
    # official: fails (a generator is not array-like)
    case(
        "38.2-generator",
        "38.2",
        "result type",
        "wrong: yields the three vectors lazily",
        r"""
        import numpy as np

        def reciprocal_3D(a1, a2, a3):
            volume = np.dot(a1, cross(a2, a3))
            return (2 * np.pi * cross(p, q) / volume for p, q in ((a2, a3), (a3, a1), (a1, a2)))
        """,
    ),
    # official: passes
    case(
        "38.3-namedtuple",
        "38.3",
        "result type",
        "returns a collections.namedtuple with as many fields as vectors",
        r"""
        from collections import namedtuple
        import numpy as np

        Reciprocal = {k: namedtuple(f'Reciprocal{k}', [f'b{i + 1}' for i in range(k)]) for k in (1, 2, 3)}

        def reciprocal(*arg):
            if len(arg) == 1:
                vectors = [2 * np.pi * arg[0] / np.dot(arg[0], arg[0])]
            elif len(arg) == 2:
                vectors = reciprocal_3D(arg[0], arg[1], cross(arg[0], arg[1]))[:2]
            else:
                vectors = reciprocal_3D(*arg)
            return Reciprocal[len(arg)](*vectors)
        """,
    ),
    # official: passes
    case(
        "38.3-pinv",
        "38.3",
        "algorithm",
        "another algorithm: the pseudo-inverse gives the dual basis for 1, 2 or 3 vectors",
        r"""
        import numpy as np

        def reciprocal(*arg):
            return 2 * np.pi * np.linalg.pinv(np.array(arg, dtype=float)).T
        """,
    ),
    # official: passes
    case(
        "38.3-list-subclass",
        "38.3",
        "result type",
        "returns a list subclass",
        r"""
        import numpy as np

        class Vectors(list):
            def norms(self):
                return [float(np.linalg.norm(v)) for v in self]

        def reciprocal(*arg):
            if len(arg) == 1:
                return Vectors([2 * np.pi * arg[0] / np.linalg.norm(arg[0]) ** 2])
            a1, a2 = arg[0], arg[1]
            a3 = arg[2] if len(arg) == 3 else cross(a1, a2)
            return Vectors(reciprocal_3D(a1, a2, a3)[:len(arg)])
        """,
    ),
    # ---- 44 ligation entropy ----------------------------------------------------------------
    # official: passes
    case(
        "44.1-roll",
        "44.1",
        "algorithm",
        "another algorithm: np.roll and a transpose (keeps the input's integer dtype)",
        r"""
        import numpy as np

        def GetComp(d):
            Z = d.shape[0]
            return np.roll(d, (-(Z // 2), -(Z // 2)), axis=(0, 1)).T
        """,
    ),
    # official: passes
    case(
        "44.1-cached-index",
        "44.1",
        "structure",
        "functools.lru_cache for the index arrays of each size, then np.ix_",
        r"""
        from functools import lru_cache
        import numpy as np

        @lru_cache(maxsize=None)
        def _complement(Z):
            return tuple((np.arange(Z) + Z // 2) % Z)

        def GetComp(d):
            index = np.array(_complement(d.shape[0]))
            return d[np.ix_(index, index)].T.astype(float)
        """,
    ),
    # official: passes
    case(
        "44.2-list-stderr",
        "44.2",
        "output",
        "np.outer instead of tiles, returns a list, and traces each entry to stderr",
        r"""
        import sys
        import numpy as np

        def step(t, y, c, lig):
            Z = len(c)
            d = np.asarray(y, dtype=float).reshape(Z, Z)
            right = c - d.sum(axis=1)
            left = c - d.sum(axis=0)
            rate = lig * np.outer(right, left) * GetComp(d) - d
            for (i, j), value in np.ndenumerate(rate):
                print(f't={t} d[{i},{j}] changes at {value!r}', file=sys.stderr)
            return rate.ravel().tolist()
        """,
    ),
    # official: passes
    case(
        "44.2-chdir-scratch",
        "44.2",
        "files",
        "moves into a fresh scratch directory at import and appends a log file there",
        r"""
        import os
        import tempfile
        import numpy as np

        os.chdir(tempfile.mkdtemp(prefix='ligation-'))

        def step(t, y, c, lig):
            Z = len(c)
            d = np.reshape(y, (Z, Z))
            ri = c - d.sum(axis=1)
            li = c - d.sum(axis=0)
            rate = lig * ri[:, None] * li[None, :] * GetComp(d) - d
            with open('step.log', 'a') as log:
                log.write(f'{os.getcwd()} t={t} max rate {np.max(np.abs(rate))}\n')
            return rate.flatten()
        """,
    ),
    # official: passes
    case(
        "44.3-scipy-entr",
        "44.3",
        "algorithm",
        "scipy.special.entr over all time points at once (negative concentrations clipped)",
        r"""
        import numpy as np
        from scipy.integrate import solve_ivp
        from scipy.special import entr

        def entropies(c0, d0, lig, tf, nsteps):
            Z = len(c0)
            start = np.full(Z * Z, 0.01)
            solution = solve_ivp(step, [0, tf], start, args=(c0, lig),
                                 t_eval=np.linspace(0, tf, nsteps))
            p = solution.y / solution.y.sum(axis=0)
            return entr(np.clip(p, 0, None)).sum(axis=0)
        """,
    ),
    # official: fails (the gold code ignores d0 and starts from 0.01; test 1 passes 0.5)
    case(
        "44.3-uses-d0",
        "44.3",
        "algorithm",
        "wrong against these targets: starts from the d0 it is given",
        r"""
        import numpy as np
        from scipy.integrate import solve_ivp

        def entropies(c0, d0, lig, tf, nsteps):
            solution = solve_ivp(step, [0, tf], np.ravel(d0).astype(float), args=(c0, lig),
                                 t_eval=np.linspace(0, tf, nsteps))
            p = solution.y / solution.y.sum(axis=0)
            return -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0), axis=0)
        """,
    ),
    # ---- 47 Monte Carlo of a Lennard-Jones cluster ------------------------------------------
    # official: passes
    case(
        "47.1-decimal-cache",
        "47.1",
        "structure",
        "computes with 40-digit Decimals behind functools.lru_cache, returns a float",
        r"""
        from decimal import Decimal, getcontext
        from functools import lru_cache

        getcontext().prec = 40

        @lru_cache(maxsize=4096)
        def U_ij(r, sigma, epsilon):
            q6 = (Decimal(repr(sigma)) / Decimal(repr(r))) ** 6
            return float(4 * Decimal(repr(epsilon)) * (q6 * q6 - q6))
        """,
    ),
    # official: passes
    case(
        "47.2-cdist",
        "47.2",
        "algorithm",
        "another algorithm: scipy's cdist and np.delete instead of a loop",
        r"""
        import numpy as np
        from scipy.spatial.distance import cdist

        def U_i(r_i, i, positions, sigma, epsilon):
            d = np.delete(cdist([r_i], positions)[0], i)
            q6 = (sigma / d) ** 6
            return np.sum(4 * epsilon * (q6 * q6 - q6))
        """,
    ),
    # official: passes
    case(
        "47.3-recursive",
        "47.3",
        "structure",
        "recursion: the energy of the first N-1 atoms plus the last atom's",
        r"""
        import numpy as np

        def U_system(positions, sigma, epsilon):
            if len(positions) < 2:
                return 0.0
            last = len(positions) - 1
            return (U_system(positions[:last], sigma, epsilon)
                    + U_i(positions[last], last, positions, sigma, epsilon))
        """,
    ),
    # official: passes
    case(
        "47.3-shuffled-pdist",
        "47.3",
        "randomness",
        "pdist, summed in an order shuffled with the random module",
        r"""
        import random
        import numpy as np
        from scipy.spatial.distance import pdist

        def U_system(positions, sigma, epsilon):
            d = list(pdist(positions))
            random.shuffle(d)
            q6 = (sigma / np.array(d)) ** 6
            return float(np.sum(4 * epsilon * (q6 * q6 - q6)))
        """,
    ),
    # official: passes
    case(
        "47.2-atexit",
        "47.2",
        "threads and processes",
        "counts its calls and prints the count from an atexit handler",
        r"""
        import atexit
        import numpy as np

        calls = [0]
        atexit.register(lambda: print(f'U_i was called {calls[0]} times'))

        def U_i(r_i, i, positions, sigma, epsilon):
            calls[0] += 1
            total = 0.0
            for j, r_j in enumerate(positions):
                if j != i:
                    total += U_ij(np.linalg.norm(np.subtract(r_i, r_j)), sigma, epsilon)
            return total
        """,
    ),
    # official: passes
    case(
        "47.3-alarm",
        "47.3",
        "threads and processes",
        "bounds its own run time with signal.alarm and a SIGALRM handler, then restores them",
        r"""
        import signal
        import numpy as np

        def _too_slow(signum, frame):
            raise TimeoutError('U_system took more than 60 s')

        def U_system(positions, sigma, epsilon):
            previous = signal.signal(signal.SIGALRM, _too_slow)
            signal.alarm(60)
            try:
                i, j = np.triu_indices(len(positions), k=1)
                r = np.linalg.norm(positions[i] - positions[j], axis=1)
                return sum(U_ij(x, sigma, epsilon) for x in r)
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
        """,
    ),
    # official: passes
    case(
        "47.4-vectorized",
        "47.4",
        "randomness",
        "vectorized energies, drawing exactly gold's random numbers from np.random",
        _MC_VECTOR,
        r"""
        def MC(sigma, epsilon, T, init_positions, MC_steps, dispSize):
            N = init_positions.shape[0]
            positions = np.array(init_positions, dtype=float)
            energy = U_system(positions, sigma, epsilon)
            trace = [energy]
            for _ in range(MC_steps):
                for _ in range(N):
                    tag = np.random.randint(0, N)
                    old = positions[tag].copy()
                    u_old = _energy_of(old, tag, positions, sigma, epsilon)
                    new = old + np.sqrt(dispSize) * np.random.normal(size=3)
                    delta = _energy_of(new, tag, positions, sigma, epsilon) - u_old
                    if delta <= 0 or np.random.random() < np.exp(-delta / T):
                        positions[tag] = new
                        energy += delta
                trace.append(energy)
            return trace
        """,
    ),
    # official: fails (its own generator draws other numbers than the seeded global state)
    case(
        "47.4-default-rng",
        "47.4",
        "randomness",
        "wrong against seeded targets: draws from its own np.random.default_rng()",
        _MC_VECTOR,
        r"""
        def MC(sigma, epsilon, T, init_positions, MC_steps, dispSize):
            rng = np.random.default_rng(2024)
            N = init_positions.shape[0]
            positions = np.array(init_positions, dtype=float)
            energy = U_system(positions, sigma, epsilon)
            trace = [energy]
            for _ in range(MC_steps):
                for _ in range(N):
                    tag = rng.integers(N)
                    old = positions[tag].copy()
                    new = old + np.sqrt(dispSize) * rng.normal(size=3)
                    delta = (_energy_of(new, tag, positions, sigma, epsilon)
                             - _energy_of(old, tag, positions, sigma, epsilon))
                    if delta <= 0 or rng.random() < np.exp(-delta / T):
                        positions[tag] = new
                        energy += delta
                trace.append(energy)
            return trace
        """,
    ),
    # ---- 49 N-body gravity ------------------------------------------------------------------
    # official: passes
    case(
        "49.1-broadcast",
        "49.1",
        "algorithm",
        "another algorithm: all pairs at once by broadcasting",
        r"""
        import numpy as np

        def Nbody_Fij(xin, mass):
            diff = xin[:, None, :] - xin[None, :, :]
            r = np.linalg.norm(diff, axis=-1)
            np.fill_diagonal(r, np.inf)
            weights = mass[:, None] * mass[None, :] / r**3
            return -6.67430e-11 * np.einsum('ij,ijk->ik', weights, diff)
        """,
    ),
    # official: passes
    case(
        "49.2-column-stack",
        "49.2",
        "result type",
        "np.column_stack into a Fortran-ordered result",
        r"""
        import numpy as np

        def Nbody_RHS(uin, mass):
            acc = Nbody_Fij(uin[:, :3], mass) / mass[:, None]
            return np.asfortranarray(np.column_stack([uin[:, 3:6], acc]))
        """,
    ),
    # official: passes
    case(
        "49.3-lists",
        "49.3",
        "result type",
        "plain Python lists for the stages, returns a list of lists",
        r"""
        import numpy as np

        def Nbody_RK4(uin, mass, dt):
            def add(u, k, h):
                return [[a + h * b for a, b in zip(ru, rk)] for ru, rk in zip(u, k)]
            rhs = lambda u: Nbody_RHS(np.array(u), mass).tolist()
            u0 = np.asarray(uin).tolist()
            k1 = rhs(u0)
            k2 = rhs(add(u0, k1, 0.5 * dt))
            k3 = rhs(add(u0, k2, 0.5 * dt))
            k4 = rhs(add(u0, k3, dt))
            return [[u + dt / 6.0 * (a + 2.0 * b + 2.0 * c + d) for u, a, b, c, d in zip(*rows)]
                    for rows in zip(u0, k1, k2, k3, k4)]
        """,
    ),
    # official: passes
    case(
        "49.4-print-every-step",
        "49.4",
        "output",
        "prints its whole state at every integration step (megabytes of output)",
        _NBODY_VECTOR,
        r"""
        def Nbody(uin, mass, dt, t0, t1):
            steps = int(np.ceil((t1 - t0) / dt))
            u = np.array(uin, dtype=float)
            for k in range(steps):
                u = _rk4(u, mass, dt)
                print(f't = {t0 + (k + 1) * dt:.6g}:', u.tolist())
            return u
        """,
    ),
    # official: passes
    case(
        "49.4-in-place",
        "49.4",
        "mutation",
        "integrates in place: mutates uin and returns it (the test's energy check reads uin)",
        _NBODY_VECTOR,
        r"""
        def Nbody(uin, mass, dt, t0, t1):
            for _ in range(int(np.ceil((t1 - t0) / dt))):
                uin[:] = _rk4(uin, mass, dt)
            return uin
        """,
    ),
    # official: passes
    case(
        "49.4-trajectory-view",
        "49.4",
        "size",
        "keeps the whole trajectory in one preallocated array and returns a view of its last row",
        _NBODY_VECTOR,
        r"""
        def Nbody(uin, mass, dt, t0, t1):
            steps = int(np.ceil((t1 - t0) / dt))
            history = np.empty((steps + 1, *np.shape(uin)))
            history[0] = uin
            for k in range(steps):
                history[k + 1] = _rk4(history[k], mass, dt)
            return history[-1]
        """,
    ),
    # official: fails (the test's energy function slices the result as an array)
    case(
        "49.4-list",
        "49.4",
        "result type",
        "wrong: returns a list of lists, which the test's Nbody_Etot cannot slice",
        _NBODY_VECTOR,
        r"""
        def Nbody(uin, mass, dt, t0, t1):
            u = np.array(uin, dtype=float)
            for _ in range(int(np.ceil((t1 - t0) / dt))):
                u = _rk4(u, mass, dt)
            return u.tolist()
        """,
    ),
    # ---- 51 molecular dynamics --------------------------------------------------------------
    # official: passes
    case(
        "51.1-math-list",
        "51.1",
        "result type",
        "the math module and a list of floats",
        r"""
        import math

        def f_ij(sigma, epsilon, r):
            s2 = sum(float(x) ** 2 for x in r)
            q6 = (sigma * sigma / s2) ** 3
            scale = 48 * epsilon / s2 * (q6 * q6 - 0.5 * q6)
            return [scale * float(x) for x in r]
        """,
    ),
    # official: passes
    case(
        "51.2-broadcast-rng-check",
        "51.2",
        "randomness",
        "all pairs by broadcasting, and checks translation invariance with default_rng",
        _LJ_FORCES,
        r"""
        def aggregate_forces(sigma, epsilon, positions):
            positions = np.asarray(positions, dtype=float)
            forces = _forces(sigma, epsilon, positions)
            shift = np.random.default_rng(7).normal(size=3)
            assert np.allclose(_forces(sigma, epsilon, positions + shift), forces, atol=1e-9)
            return forces
        """,
    ),
    # official: passes
    case(
        "51.2-daemon-heartbeat",
        "51.2",
        "threads and processes",
        "leaves a daemon heartbeat thread running until the program exits",
        _LJ_FORCES,
        r"""
        import threading
        import time

        beats = [0]

        def _heartbeat():
            while True:
                beats[0] += 1
                time.sleep(0.005)

        threading.Thread(target=_heartbeat, daemon=True).start()

        def aggregate_forces(sigma, epsilon, positions):
            return _forces(sigma, epsilon, np.asarray(positions, dtype=float))
        """,
    ),
    # official: passes
    case(
        "51.3-namedtuple",
        "51.3",
        "result type",
        "returns a collections.namedtuple (positions, velocities)",
        r"""
        from collections import namedtuple
        import numpy as np

        State = namedtuple('State', ['positions', 'velocities'])

        def velocity_verlet(sigma, epsilon, positions, velocities, dt, m):
            half = velocities + 0.5 * dt * aggregate_forces(sigma, epsilon, positions) / m
            moved = positions + dt * half
            return State(moved, half + 0.5 * dt * aggregate_forces(sigma, epsilon, moved) / m)
        """,
    ),
    # official: passes
    case(
        "51.3-stacked",
        "51.3",
        "result type",
        "returns one (2, N, 3) array instead of a pair",
        r"""
        import numpy as np

        def velocity_verlet(sigma, epsilon, positions, velocities, dt, m):
            half = velocities + 0.5 * dt * aggregate_forces(sigma, epsilon, positions) / m
            moved = positions + dt * half
            return np.stack([moved, half + 0.5 * dt * aggregate_forces(sigma, epsilon, moved) / m])
        """,
    ),
    # official: passes
    case(
        "51.4-vectorized",
        "51.4",
        "algorithm",
        "another algorithm: its own vectorized forces instead of the step functions",
        _LJ_FORCES,
        r"""
        def MD(init_positions, init_velocities, sigma, epsilon, m, dt, num_steps):
            x = np.array(init_positions, dtype=float)
            v = np.array(init_velocities, dtype=float)
            f = _forces(sigma, epsilon, x)
            for _ in range(num_steps):
                v_half = v + 0.5 * dt * f / m
                x = x + dt * v_half
                f = _forces(sigma, epsilon, x)
                v = v_half + 0.5 * dt * f / m
            return x, v
        """,
    ),
    # ---- 70 neutrino oscillations -----------------------------------------------------------
    # official: passes
    case(
        "70.1-rotations",
        "70.1",
        "algorithm",
        "another algorithm: the product of the three rotation matrices",
        r"""
        import numpy as np

        def pmns_mixing_matrix(s12, s23, s13, dCP):
            c12, c23, c13 = (np.sqrt(1 - s * s + 0j) for s in (s12, s23, s13))
            R23 = np.array([[1, 0, 0], [0, c23, s23], [0, -s23, c23]], dtype=complex)
            U13 = np.array([[c13, 0, s13 * np.exp(-1j * dCP)], [0, 1, 0],
                            [-s13 * np.exp(1j * dCP), 0, c13]], dtype=complex)
            R12 = np.array([[c12, s12, 0], [-s12, c12, 0], [0, 0, 1]], dtype=complex)
            return R23 @ U13 @ R12
        """,
    ),
    # official: passes
    case(
        "70.2-nested-lists",
        "70.2",
        "result type",
        "returns a list of lists of complex numbers, as its docstring says",
        r"""
        import numpy as np

        def hamiltonian_3nu(s12, s23, s13, dCP, D21, D31):
            U = np.array(pmns_mixing_matrix(s12, s23, s13, dCP))
            H = 0.5 * U @ np.diag([0.0, D21, D31]) @ U.conj().T
            return [[complex(x) for x in row] for row in H]
        """,
    ),
    # official: passes
    case(
        "70.3-gell-mann-trace",
        "70.3",
        "algorithm",
        "another algorithm: projects onto the Gell-Mann matrices by traces; real floats",
        r"""
        import numpy as np

        GELL_MANN = np.array([
            [[0, 1, 0], [1, 0, 0], [0, 0, 0]],
            [[0, -1j, 0], [1j, 0, 0], [0, 0, 0]],
            [[1, 0, 0], [0, -1, 0], [0, 0, 0]],
            [[0, 0, 1], [0, 0, 0], [1, 0, 0]],
            [[0, 0, -1j], [0, 0, 0], [1j, 0, 0]],
            [[0, 0, 0], [0, 0, 1], [0, 1, 0]],
            [[0, 0, 0], [0, 0, -1j], [0, 1j, 0]],
            np.diag([1, 1, -2]) / np.sqrt(3),
        ])

        def hamiltonian_3nu_su3_coefficients(hamiltonian):
            H = np.array(hamiltonian, dtype=complex)
            return [float(np.trace(H @ lam).real / 2) for lam in GELL_MANN]
        """,
    ),
    # official: passes
    case(
        "70.4-lru-cache",
        "70.4",
        "structure",
        "functools.lru_cache over index triples",
        r"""
        from functools import lru_cache
        import numpy as np

        LAMBDAS = np.array([
            [[0, 1, 0], [1, 0, 0], [0, 0, 0]],
            [[0, -1j, 0], [1j, 0, 0], [0, 0, 0]],
            [[1, 0, 0], [0, -1, 0], [0, 0, 0]],
            [[0, 0, 1], [0, 0, 0], [1, 0, 0]],
            [[0, 0, -1j], [0, 0, 0], [1j, 0, 0]],
            [[0, 0, 0], [0, 0, 1], [0, 1, 0]],
            [[0, 0, 0], [0, 0, -1j], [0, 1j, 0]],
            np.diag([1, 1, -2]) / np.sqrt(3),
        ])

        @lru_cache(maxsize=None)
        def tensor_d(i, j, k):
            a, b, c = LAMBDAS[i - 1], LAMBDAS[j - 1], LAMBDAS[k - 1]
            return float(np.trace((a @ b + b @ a) @ c).real / 4)
        """,
    ),
    # official: fails (np.allclose cannot read a Decimal)
    case(
        "70.4-decimal",
        "70.4",
        "result type",
        "wrong: returns a decimal.Decimal",
        r"""
        from decimal import Decimal
        import numpy as np

        def tensor_d(i, j, k):
            lam = [np.zeros((3, 3), dtype=complex) for _ in range(8)]
            for n, (a, b) in enumerate([(0, 1), (0, 2), (1, 2)]):
                s, t = (0, 3, 5)[n], (1, 4, 6)[n]
                lam[s][a, b] = lam[s][b, a] = 1
                lam[t][a, b], lam[t][b, a] = -1j, 1j
            lam[2][0, 0], lam[2][1, 1] = 1, -1
            lam[7] = np.diag([1, 1, -2]) / np.sqrt(3)
            a, b, c = lam[i - 1], lam[j - 1], lam[k - 1]
            return Decimal(repr(float(np.trace((a @ b + b @ a) @ c).real / 4)))
        """,
    ),
    # official: passes
    case(
        "70.5-einsum-closure",
        "70.5",
        "structure",
        "builds the whole d tensor once inside a closure and contracts it with einsum",
        r"""
        import numpy as np

        def _star():
            d = np.array([[[tensor_d(i, j, k) for k in range(1, 9)] for j in range(1, 9)]
                          for i in range(1, 9)])
            return lambda i, h: np.einsum('jk,j,k->', d[i - 1], h, h)

        def star_product(i, h):
            return _star()(i, np.asarray(h))
        """,
    ),
    # official: passes
    case(
        "70.6-tuples",
        "70.6",
        "result type",
        "returns tuples, and the three roots as a tuple",
        r"""
        import cmath
        import numpy as np

        def psi_m(h):
            h2 = sum(x * x for x in h)
            h3 = sum(tensor_d(i + 1, j + 1, k + 1) * h[i] * h[j] * h[k]
                     for i in range(8) for j in range(8) for k in range(8))
            chi = cmath.acos(-cmath.sqrt(3) * h3 * h2 ** -1.5)
            roots = tuple(2 * cmath.sqrt(h2) / cmath.sqrt(3) * cmath.cos((chi + 2 * np.pi * m) / 3)
                          for m in (1, 2, 3))
            return (h2, h3, roots)
        """,
    ),
    # official: passes
    case(
        "70.7-array",
        "70.7",
        "result type",
        "returns one complex ndarray, the k sums vectorized",
        r"""
        import numpy as np

        def evolution_operator_3nu_su3_coefficients(hamiltonian, L):
            h = np.array(hamiltonian_3nu_su3_coefficients(hamiltonian), dtype=complex)
            h2, _, psi = psi_m(list(h))
            psi = np.array(psi, dtype=complex)
            phases = np.exp(1j * L * psi)
            star = np.array([star_product(k + 1, list(h)) for k in range(8)])
            terms = phases[:, None] * (psi[:, None] * h[None, :] - star[None, :])
            uk = 1j * np.sum(terms / (3 * psi[:, None] ** 2 - h2), axis=0)
            return np.concatenate([[phases.sum() / 3], uk])
        """,
    ),
    # official: fails (test 4)
    case(
        "70.8-expm",
        "70.8",
        "algorithm",
        "wrong: another algorithm, scipy.linalg.expm of -iHL instead of the SU(3) expansion",
        r"""
        import numpy as np
        from scipy.linalg import expm

        def probabilities_3nu(hamiltonian, L):
            U = expm(-1j * L * np.array(hamiltonian, dtype=complex))
            return [abs(U[a, b]) ** 2 for b in range(3) for a in range(3)]
        """,
    ),
    # ---- 78 driven pendulum -----------------------------------------------------------------
    # official: passes
    case(
        "78.1-math-list",
        "78.1",
        "result type",
        "the math module and a list",
        r"""
        import math

        def pendulum_derivs(state, t, g, L, beta, A, alpha):
            theta, omega = state
            return [omega, -(g / L) * math.sin(theta) - beta * omega + A * math.cos(alpha * t)]
        """,
    ),
    # official: passes
    case(
        "78.1-tuple",
        "78.1",
        "result type",
        "returns a tuple of numpy scalars",
        r"""
        import numpy as np

        def pendulum_derivs(state, t, g, L, beta, A, alpha):
            theta, omega = np.asarray(state, dtype=float)
            return omega, -(g / L) * np.sin(theta) - beta * omega + A * np.cos(alpha * t)
        """,
    ),
    # official: passes
    case(
        "78.2-deque",
        "78.2",
        "result type",
        "returns the trajectory as a collections.deque of states",
        r"""
        from collections import deque
        import numpy as np

        def runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):
            state = np.asarray(state, dtype=float)
            trajectory = deque([state], maxlen=n + 1)
            t = t0
            for _ in range(n):
                k1 = dt * np.asarray(f(state, t, g, L, beta, A, alpha))
                k2 = dt * np.asarray(f(state + k1 / 2, t + dt / 2, g, L, beta, A, alpha))
                k3 = dt * np.asarray(f(state + k2 / 2, t + dt / 2, g, L, beta, A, alpha))
                k4 = dt * np.asarray(f(state + k3, t + dt, g, L, beta, A, alpha))
                state = state + (k1 + 2 * k2 + 2 * k3 + k4) / 6
                t += dt
                trajectory.append(state)
            return trajectory
        """,
    ),
    # official: passes
    case(
        "78.2-tuples",
        "78.2",
        "result type",
        "a list of (theta, omega) tuples of Python floats",
        r"""
        import numpy as np

        def runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):
            def derivative(s, t):
                d = f(np.array(s), t, g, L, beta, A, alpha)
                return float(d[0]), float(d[1])

            def shifted(s, k, h):
                return (s[0] + h * k[0], s[1] + h * k[1])

            s = (float(state[0]), float(state[1]))
            out = [s]
            t = t0
            for _ in range(n):
                k1 = derivative(s, t)
                k2 = derivative(shifted(s, k1, dt / 2), t + dt / 2)
                k3 = derivative(shifted(s, k2, dt / 2), t + dt / 2)
                k4 = derivative(shifted(s, k3, dt), t + dt)
                s = tuple(s[i] + dt / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) for i in range(2))
                t += dt
                out.append(s)
            return out
        """,
    ),
    # official: passes
    case(
        "78.2-recursive",
        "78.2",
        "structure",
        "one recursive call per time step (raises the recursion limit for it)",
        r"""
        import sys
        import numpy as np

        sys.setrecursionlimit(20000)

        def _advance(f, state, t, dt, steps, params, out):
            if steps == 0:
                return out
            k1 = dt * f(state, t, *params)
            k2 = dt * f(state + k1 / 2, t + dt / 2, *params)
            k3 = dt * f(state + k2 / 2, t + dt / 2, *params)
            k4 = dt * f(state + k3, t + dt, *params)
            out.append(state + (k1 + 2 * k2 + 2 * k3 + k4) / 6)
            return _advance(f, out[-1], t + dt, dt, steps - 1, params, out)

        def runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):
            start = np.asarray(state, dtype=float)
            return np.array(_advance(f, start, t0, dt, n, (g, L, beta, A, alpha), [start]))
        """,
    ),
    # official: fails (a generator cannot be indexed by [-1])
    case(
        "78.2-generator",
        "78.2",
        "result type",
        "wrong: yields the states lazily",
        r"""
        import numpy as np

        def runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):
            state = np.asarray(state, dtype=float)
            yield state
            t = t0
            for _ in range(n):
                k1 = dt * f(state, t, g, L, beta, A, alpha)
                k2 = dt * f(state + k1 / 2, t + dt / 2, g, L, beta, A, alpha)
                k3 = dt * f(state + k2 / 2, t + dt / 2, g, L, beta, A, alpha)
                k4 = dt * f(state + k3, t + dt, g, L, beta, A, alpha)
                state = state + (k1 + 2 * k2 + 2 * k3 + k4) / 6
                t += dt
                yield state
        """,
    ),
    # official: passes
    case(
        "78.3-error-only",
        "78.3",
        "algorithm",
        "another algorithm: picks the step by the error estimate alone, never timing",
        r"""
        import numpy as np

        def pendulum_analysis(g, L, beta, A, alpha, initial_state, t0, tf, min_dt, max_dt,
                              num_timesteps):
            def final(dt):
                n = int((tf - t0) / dt)
                return runge_kutta_4th_order(pendulum_derivs, np.array(initial_state), t0, dt, n,
                                             g, L, beta, A, alpha)
            errors = {}
            for dt in np.linspace(min_dt, max_dt, num_timesteps):
                errors[dt] = np.linalg.norm((final(2 * dt)[-1] - final(dt)[-1]) / 15)
            return final(min(errors, key=errors.get))
        """,
    ),
    # official: passes
    case(
        "78.3-perf-counter",
        "78.3",
        "algorithm",
        "times its runs with time.perf_counter instead of time.time",
        r"""
        import time
        import numpy as np

        def pendulum_analysis(g, L, beta, A, alpha, initial_state, t0, tf, min_dt, max_dt,
                              num_timesteps):
            best, best_dt = np.inf, None
            for dt in np.linspace(min_dt, max_dt, num_timesteps):
                start = time.perf_counter()
                fine = runge_kutta_4th_order(pendulum_derivs, np.array(initial_state), t0, dt,
                                             int((tf - t0) / dt), g, L, beta, A, alpha)
                elapsed = time.perf_counter() - start
                coarse = runge_kutta_4th_order(pendulum_derivs, np.array(initial_state), t0,
                                               2 * dt, int((tf - t0) / (2 * dt)), g, L, beta, A,
                                               alpha)
                metric = np.linalg.norm((coarse[-1] - fine[-1]) / 15) * np.sqrt(elapsed)
                if metric < best:
                    best, best_dt = metric, dt
            n = int((tf - t0) / best_dt)
            return runge_kutta_4th_order(pendulum_derivs, np.array(initial_state), t0, best_dt, n,
                                         g, L, beta, A, alpha)
        """,
    ),
]


# ---- names the model's code and the tests both bind (issue: a module the test also imports) ----


def _gold(step_id: str) -> str:
    from scievals.scicode.data.dataset import find_step

    code = find_step(step_id, "dev")[1].gold_code
    assert code, step_id
    return code


def _gold_with(id: str, step: str, why: str, before: str, after: str = "") -> Case:
    """Gold code with ``before`` on top and ``after`` below: correct, so the official rule
    passes it; only the names it shares with the step's tests are unusual."""
    parts = [part for part in (before, _gold(step), after) if part]
    return case(id, step, "structure", why, *parts)


CASES += [
    # official: passes
    _gold_with(
        "47.4-imports-itertools",
        "47.4",
        "an unused import of itertools, which the step's tests import themselves",
        "import itertools",
    ),
    # official: passes
    _gold_with(
        "51.4-imports-itertools",
        "51.4",
        "an unused import of itertools, which the step's tests import themselves",
        "import itertools",
    ),
    # official: passes
    _gold_with(
        "51.4-itertools-by-assignment",
        "51.4",
        "binds the module the tests import by assignment, beside functools",
        "import functools\nitertools = __import__('itertools')",
    ),
    # official: passes
    _gold_with(
        "47.4-itertools-and-product",
        "47.4",
        "imports itertools and its product, uses product in a helper of its own",
        "import itertools\nfrom itertools import product",
        "def _grid(n):\n    return list(product(range(n), repeat=3))",
    ),
    # official: passes
    _gold_with(
        "10.6-isin-from-numpy",
        "10.6",
        "imports numpy's isin under the name the tests define a function of their own",
        "from numpy import isin",
    ),
    # official: passes
    _gold_with(
        "49.4-own-Nbody-Etot",
        "49.4",
        "a helper of its own named as the function a later test defines (the test's wins)",
        "",
        "def Nbody_Etot(*args):\n    raise RuntimeError('the model\\'s helper, never the test\\'s')",
    ),
]
