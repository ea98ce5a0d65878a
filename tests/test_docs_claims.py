"""What the prose of the README and the guide says raises, is refused, works or returns.

tests/test_docs.py runs the guide's code cells and tests/test_readme.py the README's
examples; neither reads the sentences around them. A sentence such as "np.array([...])
of Duals raises" can then contradict another page, or the code, unnoticed (the SciPy
page once said it raised where the README and the conventions page said it works).
Each row of CLAIMS quotes one such sentence (``quote``, found on ``page`` up to line
breaks), and runs a snippet that does what it says: the row asserts that the snippet
raises the named exception, or that it runs and returns what the page says. A row
whose quote has left its page fails too, so a changed claim brings its row with it.
A row with ``bug`` is a claim the code does not keep yet (a strict xfail).
"""

from functools import cache

import numpy as np
import pytest

from docs_claims_snippets import *  # noqa: F403 (the table reads many of its names)
from docs_claims_snippets import ROOT, Claim

README, CONV, SCIPY_F = "README.md", "docs/conventions.md", "docs/scipy-functions.md"

CLAIMS = [
    # README.md
    Claim(README, "`np.sin(x)`, `x @ W` and `np.linalg.solve(A, x)` work unchanged",
          lambda: dualad.jacfwd(lambda x: np.linalg.solve(3 * np.eye(2), np.sin(x)))(X2),
          check=close(np.diag(np.cos(X2) / 3))),
    Claim(README, "`jacfwd(lambda p: root(lambda x: x**3 - p[0], [1.0]).x)(p)` works",
          lambda: dualad.jacfwd(
              lambda p: scipy.optimize.root(lambda x: x ** 3 - p[0], [1.0]).x)(np.array([8.0])),
          check=close([[1 / 12]])),
    Claim(README, "Steps and predicates (`floor`, `sign`, comparisons, …) return plain arrays",
          lambda: [type(np.floor(DUAL)), type(np.sign(DUAL)), type(DUAL > 1)],
          check=lambda types: set(types) == {np.ndarray}),
    Claim(README, "`return np.array([y[1], -y[0]])` in an ODE right-hand side",
          lambda: dualad.jacrev(rhs)(X2), check=close([[0, 1], [-1, 0]])),
    Claim(README, "a library's `x = np.asarray(x, dtype=float)` or `np.array(x).ravel()`",
          lambda: dualad.grad(
              lambda x: np.sum(np.array(np.asarray(x, dtype=float)).ravel() ** 2))(X2),
          check=close(2 * X2)),
    Claim(README, "matrix literals `np.array([[x[0], 0.1], [0.1, x[1]]])` into `np.linalg`",
          lambda: dualad.grad(lambda x: np.linalg.det(np.array([[x[0], 0.1], [0.1, x[1]]])))(X2),
          check=close([X2[1], X2[0]])),
    Claim(README, "`dy = np.zeros(2); dy[0] = y[1]`",
          lambda: dualad.jacrev(rhs_filled)(X2), check=close([[0, 1], [-1, 0]])),
    Claim(README, "also as `zeros(2)` after `from numpy import zeros`",
          lambda: dualad.jacfwd(rhs_from_numpy_import)(X2), check=close([[0, 1], [0, 0]])),
    Claim(README, "`np.log(g, out=np.full_like(g, -9e9), where=g > 0)`",
          lambda: dualad.jacfwd(lambda g: np.log(g, out=np.full_like(g, -9e9), where=g > 0))(
              np.array([0.0, 2.0])),
          check=close([[0, 0], [0, 0.5]])),
    Claim(README, "`np.isscalar(x[0])`",
          lambda: seen_inside(lambda x: np.isscalar(x[0])), check=lambda answer: answer is True),
    Claim(README, "`isinstance(x, np.ndarray)` (pymoo's `evaluate`)",
          lambda: seen_inside(lambda x: isinstance(x, np.ndarray)),
          check=lambda answer: answer is True),
    Claim(README, "`np.vectorize`",
          lambda: dualad.jacfwd(np.vectorize(lambda a: a ** 2))(X2), check=close(np.diag(2 * X2))),
    Claim(README, "lists beside arrays (`x @ [1.0, 2.0]`)",
          lambda: dualad.grad(lambda x: x @ [1.0, 2.0])(X2), check=close([1, 2])),
    Claim(README, "(C code, `float(x)`, `math.cos(x[0])`) raises",
          lambda: dualad.grad(lambda x: float(x[0]))(X2), raises=TypeError, match="float()"),
    Claim(README, "(C code, `float(x)`, `math.cos(x[0])`) raises",
          lambda: dualad.grad(lambda x: math.cos(x[0]))(X2), raises=TypeError),
    Claim(README, "a NumPy function without a rule raises a `TypeError` that names it",
          lambda: dualad.grad(lambda x: np.sum(np.emath.log(x)))(X2),
          raises=TypeError, match="numpy.emath.log"),
    Claim(README, "a value kept from a finished transform raises when used again",
          kept_and_used_again, raises=dualad.primitive.EscapedDualError),
    Claim(README, "integer or boolean outputs of `jacrev`, `grad` and `hessian`",
          lambda: dualad.jacrev(lambda x: x > 1)(X2), raises=TypeError, match="bool"),
    Claim(README, "integer or boolean outputs of `jacrev`, `grad` and `hessian`",
          lambda: dualad.hessian(lambda x: np.argmax(x))(X2), raises=TypeError, match="int"),
    Claim(README, "(forward mode gives them a zero derivative",
          lambda: dualad.jacfwd(lambda x: np.argmax(x))(X2), check=close([0, 0])),
    Claim(README, "and `vjp` takes them, as JAX does)",
          lambda: dualad.vjp(lambda x: (np.sum(x), np.argmax(x)), X2)[0],
          check=lambda out: out == (2.5, 1)),
    Claim(README, "a rule written for real numbers meeting complex ones",
          lambda: dualad.jacfwd(lambda x: np.maximum(x * 1j, 1j).real)(X2),
          raises=TypeError, match="maximum"),
    Claim(README, "`argnums` that are not ints raise a `TypeError` that says what to do",
          lambda: dualad.grad(np.sum, argnums="0")(X2), raises=TypeError, match="argnums"),
    Claim(README, "(an `argnums` out of range, a `ValueError`, as in JAX)",
          lambda: dualad.grad(np.sum, argnums=3)(X2), raises=ValueError, match="out of range"),
    Claim(README, "mismatched tangent shapes raise a `ValueError` naming both shapes",
          lambda: dualad.jvp(np.sin, (X2,), (np.ones(3),)),
          raises=ValueError, match=r"\(3,\).*\(2,\)"),
    Claim(README, "`np.where(x > 0, np.sqrt(x), 0.0)` at `x = 0` has derivative 0 in every mode",
          lambda: [dualad.grad(lambda x: np.where(x > 0, np.sqrt(x), 0.0))(0.0),
                   dualad.derivative(lambda x: np.where(x > 0, np.sqrt(x), 0.0))(0.0)],
          check=close([0.0, 0.0])),
    Claim(README, "`grad(f, nan_safe=True)` (also `vjp`, `value_and_grad`, `jacrev`)",
          nan_safe_where_log, check=close([0.0, 0.5])),
    Claim(README, "`d/dx [x · d/dy (x + y)] = 1` (not 2)",
          lambda: dualad.derivative(lambda x: x * dualad.derivative(lambda y: x + y)(1.0))(2.0),
          check=close(1.0)),
    Claim(README, "any mode nests in any other (`jacfwd(grad(f))`",
          lambda: dualad.jacfwd(dualad.grad(lambda x: np.sum(np.sin(x) ** 2)))(X3),
          check=close(np.diag(2 * np.cos(2 * X3)))),
    Claim(README, "any mode nests in any other (`jacfwd(grad(f))`",
          lambda: dualad.jacfwd(dualad.jacfwd(lambda x: np.sin(x) ** 2, chunk_size=1))(X3),
          check=lambda H: np.allclose(np.einsum("iii->i", H), 2 * np.cos(2 * X3))),
    Claim(README, "`holomorphic=True` gives `f'(z)` from `grad`, `jacfwd` and `jacrev`",
          lambda: dualad.grad(lambda z: z ** 3, holomorphic=True)(1.0 + 2j),
          check=close(3 * (1.0 + 2j) ** 2)),
    Claim(README, "and `f''(z)` from `hessian`",
          lambda: dualad.hessian(lambda z: z ** 3, holomorphic=True)(1.0 + 2j),
          check=close(6 * (1.0 + 2j))),
    Claim(README, "Python `if` on a traced value gives JAX's usual `TracerBoolConversionError`",
          lambda: gpu("jacfwd", lambda x: x if x[0] > 0 else -x, X2),
          raises=Exception, match="TracerBoolConversionError|boolean conversion", needs="jax"),
    Claim(README, "JAX's default for other code is untouched",
          x64_after_a_call, check=lambda on: on is False, needs="jax"),

    # docs/conventions.md
    Claim(CONV, "Applied to a Dual they return a **plain ndarray**",
          lambda: type(np.rint(DUAL)), check=lambda t: t is np.ndarray),
    Claim(CONV, "(a remainder coefficient that is zero only at this point, a zero leading "
                "coefficient, a multiple root 0), dualad raises a `TypeError` instead",
          lambda: dualad.jacfwd(lambda u: np.polydiv(u, np.array([1.0, 0.0, -1.0]))[1])(
              np.array([1.0, 0.0, -1.0, 5.0])), raises=TypeError, match="polydiv"),
    Claim(CONV, "a zero leading coefficient, a multiple root 0), dualad raises a `TypeError`",
          lambda: dualad.jacfwd(np.roots)(np.array([0.0, 1.0, -2.0])),
          raises=TypeError, match="leading coefficient"),
    Claim(CONV, "a zero leading coefficient, a multiple root 0), dualad raises a `TypeError`",
          lambda: dualad.jacfwd(np.roots)(np.array([1.0, 0.0, 0.0])),
          raises=TypeError, match="multiple root"),
    Claim(CONV, "`np.unique`, `np.histogram`, `np.trim_zeros` and the set functions raise",
          lambda: gpu("jacfwd", lambda x: np.histogram(x, bins=2)[1], X2),
          raises=TypeError, match="histogram", needs="jax"),
    Claim(CONV, "`jacrev`, `grad`, `value_and_grad`, `hessian` and `hvp` refuse them",
          lambda: dualad.hvp(lambda x: np.argmax(x), (X2,), (X2,)), raises=TypeError),
    Claim(CONV, "Strings, `None` (for `grad`), functions and other objects raise a `TypeError` "
                "naming what was returned",
          lambda: dualad.jacfwd(lambda x: "a string")(X2), raises=TypeError, match="str"),
    Claim(CONV, "Strings, `None` (for `grad`), functions and other objects raise a `TypeError` "
                "naming what was returned",
          lambda: dualad.grad(lambda x: None)(X2), raises=TypeError, match="None"),
    Claim(CONV, "An object no pytree opens raises a `TypeError` that names its class",
          lambda: dualad.grad(lambda o: 1.0)(Opaque()), raises=TypeError, match="Opaque"),
    Claim(CONV, "**`grad` and `jacrev` of complex outputs raise** unless `holomorphic=True`",
          lambda: dualad.grad(lambda z: z ** 2)(1.0 + 2j), raises=TypeError, match="holomorphic"),
    Claim(CONV, "**`jacfwd` of complex inputs** needs `holomorphic=True` too",
          lambda: dualad.jacfwd(lambda z: z ** 2)(np.array([1.0 + 2j])),
          raises=TypeError, match="holomorphic"),
    Claim(CONV, "`jacfwd` of real inputs may return a complex Jacobian (`np.exp(1j * x)`)",
          lambda: dualad.jacfwd(lambda x: np.exp(1j * x))(X2),
          check=lambda J: np.iscomplexobj(J) and np.allclose(np.diag(J), 1j * np.exp(1j * X2))),
    Claim(CONV, "(`hessian` of `|z|²`) are not supported yet and raise",
          lambda: dualad.hessian(lambda z: np.sum(np.abs(z) ** 2))(np.array([1.0 + 2j])),
          raises=TypeError),
    Claim(CONV, "a NumPy function written as a composition for real numbers (`np.cov`, "
                "`np.convolve`), and a SciPy function (`scipy.linalg.solve_triangular`, "
                "`toeplitz`) raise a `TypeError` naming the function",
          lambda: dualad.jacfwd(lambda a: np.cov(a * 1j).real)(X3),
          raises=TypeError, match="numpy.cov"),
    Claim(CONV, "(`scipy.linalg.solve_triangular`, `toeplitz`) raise a `TypeError` naming the "
                "function",
          lambda: dualad.jacfwd(lambda a: scipy.linalg.toeplitz(a * 1j).real)(X2),
          raises=TypeError, match="toeplitz"),
    Claim(CONV, "Writing Duals into a plain NumPy array made outside the function is refused "
                "with a TypeError",
          lambda: dualad.jacfwd(write_outside_whole)(X2), raises=TypeError),
    Claim(CONV, "(for a single element, NumPy's `ValueError` caused by it",
          lambda: cause_of(lambda: dualad.jacfwd(write_outside_element)(X2)),
          check=lambda cause: cause is TypeError),
    Claim(CONV, "`copy=False` with a new dtype raises",
          lambda: dualad.jacfwd(lambda x: np.array(x, dtype=np.float32, copy=False))(X2),
          raises=ValueError, match="copy=False"),
    Claim(CONV, "An integer dtype gives the primal's integers (piecewise constant",
          lambda: dualad.jacfwd(lambda x: np.asarray(x, dtype=int) * x)(X2),
          check=close(np.diag([0.0, 2.0]))),
    Claim(CONV, "`type(x)` is still `dualad.Dual`",
          lambda: seen_inside(type), check=lambda t: t is dualad.Dual),
    Claim(CONV, "(not for a Dual of `x[0]` or of a sum, whose NumPy values are scalars)",
          lambda: seen_inside(lambda x: (isinstance(x[0], np.ndarray),
                                         isinstance(np.sum(x), np.ndarray))),
          check=lambda answers: answers == (False, False)),
    Claim(CONV, "A plain array's `a.dot(x)` of a Dual (filterpy's `multivariate_multiply`) works",
          lambda: dualad.jacfwd(lambda x: np.array([[1.0, 2.0], [3.0, 4.0]]).dot(x))(X2),
          check=close([[1, 2], [3, 4]])),
    Claim(CONV, "`np.empty((2, 2), dtype=object)` filled with Duals",
          lambda: dualad.grad(object_array_det)(X2), check=close([X2[1], X2[0]])),
    Claim(CONV, "`np.empty` gives zeros",
          lambda: seen_inside(lambda x: np.empty(3).tolist()), check=lambda v: v == [0.0] * 3),
    Claim(CONV, "code run by `exec` or `python -c` gets NumPy's arrays",
          lambda: dualad.jacfwd(EXECED["rhs_execed"])(X2), raises=ValueError),
    Claim(CONV, "code that holds them under another name (`from numpy import zeros as z`)",
          lambda: dualad.jacfwd(rhs_other_name)(X2), raises=ValueError),
    Claim(CONV, "Other views of it (`out.T`, `out.reshape(...)`, `np.asarray(out)` before it is "
                "filled) are plain arrays: a Dual written into those raises",
          lambda: dualad.jacfwd(write_into_transposed_view)(X2), raises=ValueError),
    Claim(CONV, "A ufunc given `out=` a plain array made elsewhere raises",
          lambda: dualad.jacfwd(lambda x: np.sin(x, out=OUTSIDE))(X2),
          raises=TypeError, match="out="),
    Claim(CONV, "(`np.greater_equal(x, 1.5, out=mask)`, `np.isnan(x, out=m)`), write the "
                "primal's answer into it",
          out_comparison_mask, check=lambda mask: mask.tolist() == [False, True]),
    Claim(CONV, "`np.float64(dual)`, `dual.item()`",
          lambda: dualad.grad(lambda x: np.float64(x[0]))(X2), raises=TypeError),
    Claim(CONV, "`np.float64(dual)`, `dual.item()`",
          lambda: dualad.grad(lambda x: x[0].item())(X2), raises=TypeError, match="item"),
    Claim(CONV, "Most NumPy functions also take a list of Duals directly (`np.sum`, `np.max`, "
                "`np.median`, `np.dot`, `np.linalg.norm`",
          lambda: [dualad.grad(lambda x: np.median([x[0], x[1], x[0]]))(X2),
                   dualad.grad(lambda x: np.linalg.norm([x[0], x[1]]))(X2)],
          check=close([[1.0, 0.0], X2 / np.linalg.norm(X2)])),
    Claim(CONV, "and `np.mean([x, y])`, `np.std`, `np.var`",
          lambda: [dualad.grad(lambda x: np.mean([x[0], x[1]]))(X2),
                   dualad.grad(lambda x: np.std([x[0], x[1]]))(X2)],
          check=close([[0.5, 0.5], [-0.5, 0.5]])),
    Claim(CONV, "`np.percentile`, `np.quantile` and their nan-versions, `np.interp`",
          lambda: [dualad.grad(lambda x: np.percentile([x[0], x[1]], 50))(X2),
                   dualad.grad(lambda x: np.nanquantile((x[0], x[1]), 0.25))(X2),
                   dualad.grad(lambda x: np.interp(0.5, [0.0, 1.0], [x[0], x[1]]))(X2)],
          check=close([[0.5, 0.5], [0.75, 0.25], [0.5, 0.5]])),
    Claim(CONV, "Those that cast such an object array to floats (`np.cov`, `np.corrcoef`, "
                "`np.nanmean`, `np.nanstd`) raise a `TypeError` naming the function",
          lambda: dualad.grad(lambda x: np.sum(np.cov([x[0], x[1], x[2]])))(X3),
          raises=TypeError, match="numpy.cov"),
    Claim(CONV, "Those that cast such an object array to floats (`np.cov`, `np.corrcoef`, "
                "`np.nanmean`, `np.nanstd`) raise a `TypeError` naming the function",
          lambda: dualad.grad(lambda x: np.nanmean([x[0], x[1]]))(X2),
          raises=TypeError, match="numpy.nanmean"),
    Claim(CONV, "(`np.linalg.det([[x[0], x[1]], [x[2], x[3]]])`) raises dualad's `TypeError`",
          lambda: dualad.grad(lambda x: np.linalg.det([[x[0], x[1]], [x[2], x[3]]]))(X4),
          raises=TypeError, match="numpy.linalg.det"),
    Claim(CONV, "Assigning through repeated indices raises `ValueError`",
          lambda: dualad.jacfwd(write_twice)(X2), raises=ValueError, match="repeated"),
    Claim(CONV, "`int(dual)` and `bool(dual)` are allowed",
          lambda: dualad.grad(lambda x: x[0] * int(x[1]) * bool(x[0]))(X2), check=close([2, 0])),
    Claim(CONV, "filterpy's `np.atleast_2d([hx(s) for s in sigmas])`",
          lambda: dualad.jacfwd(lambda x: np.atleast_2d([2 * x[0], x[1]]))(X2),
          check=close([[[2, 0], [0, 1]]])),
    Claim(CONV, "(`z = y; z += 1` updates `y`)",
          lambda: dualad.jvp(aliasing, (X2,), (np.ones(2),))[0], check=close(X2 + 1)),
    Claim(CONV, "a function that writes into its argument leaves yours alone",
          caller_array_after_a_write, check=close([1.0, 2.0])),

    # docs/scipy-functions.md
    Claim(SCIPY_F, "a third derivative in `a` raises",
          lambda: dualad.derivative(lambda a: scipy.special.gammainc(a, 1.0), order=3)(2.0),
          raises=TypeError, match="gammainc"),
    Claim(SCIPY_F, "`hyp1f1` and `hyp2f1` in their parameters `a`, `b`, `c`",
          lambda: dualad.derivative(lambda a: scipy.special.hyp1f1(a, 2.0, 0.5))(1.0),
          raises=TypeError, match="'a'"),
    Claim(SCIPY_F, "`betainc` in `a` and `b`, and `beta.cdf`/`sf` in the shapes",
          lambda: dualad.derivative(lambda a: scipy.stats.beta.cdf(0.3, a, 2.0))(1.5),
          raises=TypeError),
    Claim(SCIPY_F, "The Bessel functions in their order `v`, `stdtr` and `t.cdf` in `df`",
          lambda: dualad.derivative(lambda v: scipy.special.jv(v, 2.0))(1.0),
          raises=TypeError, match="'v'"),
    Claim(SCIPY_F, "Not an error: `poisson` in `k`, a lattice point, has derivative 0",
          lambda: dualad.derivative(lambda k: scipy.stats.poisson.logpmf(k, 2.0))(1.0),
          check=close(0.0)),
    Claim(SCIPY_F, "`binom.cdf`/`sf` in `n` and `nbinom.cdf`/`sf` in `n`: `betainc` in `a`",
          lambda: dualad.derivative(lambda n: scipy.stats.binom.cdf(2, n, 0.3))(5.0),
          raises=TypeError, match="betainc"),
    Claim(SCIPY_F, "A method of a supported distribution without a formula raises a TypeError "
                   "naming those it has: `betabinom.cdf`",
          lambda: dualad.derivative(lambda a: scipy.stats.betabinom.cdf(2, 5, a, 2.0))(1.0),
          raises=TypeError, match="logpmf"),
    Claim(SCIPY_F, "(`dirichlet(alpha)` with `alpha` a Dual) raises in SciPy's constructor",
          lambda: dualad.grad(lambda a: scipy.stats.dirichlet(a).logpdf(np.array([0.2, 0.8])))(X2),
          raises=TypeError),
    Claim(SCIPY_F, "(`johnsonsu.logpdf(x)` names the supported ones)",
          lambda: dualad.derivative(lambda x: scipy.stats.johnsonsu.logpdf(x, 1.0, 1.0))(1.0),
          raises=TypeError, match="norm"),
    Claim(SCIPY_F, "`eigh(..., subset_by_value=...)`",
          lambda: dualad.grad(lambda a: np.sum(scipy.linalg.eigh(
              S * a[0], eigvals_only=True, subset_by_value=(0, 10))))(X2),
          raises=TypeError, match="subset_by_index"),
    Claim(SCIPY_F, "`qr(mode='raw')` (Householder reflectors), `lu` of a non-square matrix",
          lambda: dualad.jacfwd(lambda a: scipy.linalg.lu(np.ones((2, 3)) * a[0])[1])(X2),
          raises=TypeError, match="non-square"),
    Claim(SCIPY_F, "`lu_factor` of a stack of matrices, `sqrtm(disp=False)`",
          lambda: dualad.jacfwd(lambda a: scipy.linalg.sqrtm(S * a[0], disp=False)[0])(X2),
          raises=TypeError, match="disp"),
    Claim(SCIPY_F, "`comb`, `factorial` (`exact=False`; `exact=True` gives the integers, no "
                   "derivative)",
          lambda: dualad.derivative(lambda n: scipy.special.comb(n, 2, exact=True))(5.0),
          check=close(0.0)),
    Claim(SCIPY_F, "where a weight is 0, its derivative is exp(a)/Σ",
          lambda: dualad.grad(lambda b: scipy.special.logsumexp(np.array([0.0, 1.0]), b=b))(
              np.array([1.0, 0.0])),
          check=close([1.0, np.e])),
    Claim(SCIPY_F, "dualad has no rule for them",
          lambda: dualad.jacfwd(lambda a: scipy.linalg.schur(S * a[0])[0])(X2),
          raises=TypeError, match="schur"),
    Claim(SCIPY_F, "is SciPy's original and refuses Duals with a `TypeError`",
          lambda: dualad.jacfwd(lambda a: dualad.rules.scipy_functions.ORIGINALS[
              scipy.linalg.expm](S * a[0]))(X2),
          raises=TypeError, match="import dualad"),
    Claim(SCIPY_F, "a function calling `solve_ivp` is differentiated by dualad's NumPy "
                   "transform on the host instead, with a `RuntimeWarning`",
          lambda: with_warnings(lambda: gpu("jacfwd", ivp_end, X2)),
          check=lambda out: (RuntimeWarning in out[1]
                             and np.allclose(np.diag(np.asarray(out[0])), -np.exp(-X2))),
          needs="jax"),

    # docs/scipy-solvers.md
    Claim("docs/scipy-solvers.md", "a root where ∂F/∂x is singular, or a minimum that is not "
                                   "strict, has no derivative, and a `TypeError` says so",
          lambda: dualad.jacfwd(singular_root)(np.array([1.0])),
          raises=TypeError, match="singular"),
    Claim("docs/scipy-solvers.md", "A solver that did not succeed gives the derivative at its "
                                   "last iterate with a `RuntimeWarning`",
          lambda: with_warnings(lambda: dualad.jacfwd(one_bfgs_step)(X2)),
          check=lambda out: RuntimeWarning in out[1] and np.all(np.isfinite(out[0]))),

    # docs/coverage.md
    Claim("docs/coverage.md", "(`np.save` and the other savers refuse a Dual)",
          lambda: dualad.grad(lambda x: np.save("never-written.npy", x))(X2),
          raises=TypeError, match="numpy.save"),
    Claim("docs/coverage.md", "`np.kaiser(m, beta)` is differentiable in `beta`",
          lambda: dualad.jacfwd(lambda b: np.kaiser(4, b))(2.0),
          check=close((np.kaiser(4, 2.0 + 1e-6) - np.kaiser(4, 2.0 - 1e-6)) / 2e-6)),
    Claim("docs/coverage.md", "and `np.full(shape, x)` in a scalar `x`",
          lambda: dualad.jacfwd(lambda b: np.full(3, b))(2.0), check=close([1, 1, 1])),

    # docs/jax.md
    Claim("docs/jax.md", "so `jnp.sin(dual)` raises",
          lambda: dualad.jacfwd(jnp_sin)(X2), raises=TypeError, needs="jax"),
    Claim("docs/jax.md", "float64 inputs give float64 results, float32 inputs stay float32",
          lambda: gpu("jacfwd", np.sin, X2.astype(np.float32)).dtype,
          check=lambda dtype: dtype == np.float32, needs="jax"),

    # docs/sparse.md
    Claim("docs/sparse.md", "an `if` on it raises `dualad.sparse.ValueDependentError`",
          lambda: dualad.jacobian_sparsity(branch_on_value, X2),
          raises=dualad.sparse.ValueDependentError),
    Claim("docs/sparse.md", "(`jac.prepare(u)(u)`) raises `dualad.sparse.PatternChanged`",
          pattern_changed_since_prepare, raises=dualad.sparse.PatternChanged),

    # docs/scaling.md
    Claim("docs/scaling.md", "It raises a `TypeError` saying so: give the executor to the "
                             "outer transform instead",
          lambda: inner_executor(min_seconds=0), raises=TypeError, match=NESTED_REFUSED),
    Claim("docs/scaling.md", "It raises a `TypeError` saying so: give the executor to the "
                             "outer transform instead",
          lambda: inner_executor(min_seconds=1e9), raises=TypeError, match=NESTED_REFUSED),

    # docs/scaling.md, docs/batching.md, docs/performance.md: passes and bits
    Claim("docs/scaling.md", "`jacfwd(f, chunk_size=50)` of a function of 400 inputs evaluates "
                             "`f` eight times",
          lambda: passes_of_jacfwd(400, chunk_size=50, replay=False), check=lambda n: n == 8),
    Claim("docs/batching.md", "takes a single pass until n is in the thousands",
          lambda: passes_of_jacfwd(1000, replay=False), check=lambda n: n == 1),
    Claim("docs/scaling.md", "and is **the serial result bit for bit**",
          lambda: on_two_threads_and_serially(min_seconds=0),
          check=lambda out: np.array_equal(*out)),
    Claim("docs/scaling.md", "a problem too small to gain runs serially, with a "
                             "`RuntimeWarning` saying why",
          # (a threshold of an hour: serial whatever the machine's load)
          lambda: with_warnings(lambda: on_two_threads_and_serially(min_seconds=3600.0)),
          check=lambda out: RuntimeWarning in out[1] and np.array_equal(*out[0])),
    Claim("docs/scaling.md", "`dualad.progress.PROGRESS_SECONDS` (2 s)",
          lambda: dualad.progress.PROGRESS_SECONDS, check=lambda seconds: seconds == 2),
    Claim("docs/performance.md", "returns what `replay=False` returns, bit for bit, whatever "
                                 "`f` reads",
          replayed_and_interpreted, check=lambda out: np.array_equal(*out)),
    Claim("docs/scipy-solvers.md", "is SciPy's, bit for bit",
          root_and_scipy_root, check=lambda out: np.array_equal(*out)),
    Claim(SCIPY_F, "`import dualad` imports no SciPy module",
          imported_scipy_modules, check=lambda modules: modules == "[]"),
    Claim(SCIPY_F, "`dualad.rules.scipy_functions.ORIGINALS` maps each dispatcher to SciPy's "
                   "function (also its `__wrapped__`)",
          lambda: dualad.rules.scipy_functions.ORIGINALS[scipy.linalg.expm],
          check=lambda original: original is scipy.linalg.expm.__wrapped__),
    Claim("docs/jax.md", "The cache holds the 64 most recently used compiled transforms "
                         "(`dualad_gpu.cache.CACHE_SIZE`)",
          lambda: __import__("dualad_gpu.cache").cache.CACHE_SIZE, check=lambda n: n == 64,
          needs="jax"),

    # docs/reverse-mode.md, docs/taylor.md, docs/adding-a-primitive.md
    Claim("docs/reverse-mode.md", "`grad` then returns `(gradient, aux)`, `value_and_grad` "
                                  "returns `((value, aux), gradient)`",
          lambda: (dualad.grad(lambda x: (np.sum(x ** 2), "aux"), has_aux=True)(X2),
                   dualad.value_and_grad(lambda x: (np.sum(x ** 2), 3), has_aux=True)(X2)),
          check=lambda out: (out[0][1] == "aux" and np.allclose(out[0][0], 2 * X2)
                             and out[1][0] == (4.25, 3) and np.allclose(out[1][1], 2 * X2))),
    Claim("docs/reverse-mode.md", "back, as many times as you like",
          pull_back_twice,
          check=close([np.cos(X2), 2 * np.cos(X2)])),
    Claim("docs/taylor.md", "float32 stays float32, ints become float64",
          lambda: (dualad.jet(np.sin, (np.ones(2, np.float32),),
                              ([np.ones(2, np.float32)],))[1][0].dtype,
                   dualad.jet(np.sin, (np.arange(2),), ([np.ones(2)],))[1][0].dtype),
          check=lambda dtypes: dtypes == (np.float32, np.float64)),
    Claim("docs/adding-a-primitive.md", "A tangent of the wrong shape is refused at first use.",
          lambda: dualad.jacfwd(BAD_SHAPE)(X3), raises=ValueError, match="shape"),
]


@cache
def page_text(page: str) -> str:
    return " ".join((ROOT / page).read_text(encoding="utf-8").split())


def row_id(claim: Claim) -> str:
    return f"{claim.page}: {claim.quote[:50]}"


def test_the_table_covers_the_pages():
    assert len(CLAIMS) >= 25
    assert {"README.md", CONV, SCIPY_F} <= {claim.page for claim in CLAIMS}


@pytest.mark.parametrize("claim", CLAIMS, ids=row_id)
def test_the_claim_is_still_on_its_page(claim):
    assert " ".join(claim.quote.split()) in page_text(claim.page), (
        f"{claim.page} no longer says {claim.quote!r}: update this row with the page")


def run_claim(claim: Claim) -> None:
    if claim.raises is not None:
        with pytest.raises(claim.raises, match=claim.match):
            claim.run()
        return
    result = claim.run()
    if claim.check is not None:
        assert claim.check(result), f"{claim.page} says {claim.quote!r}; got {result!r}"


@pytest.mark.parametrize("claim", CLAIMS, ids=row_id)
def test_the_code_does_what_the_page_says(claim):
    if claim.needs:
        pytest.importorskip(claim.needs)
    if claim.bug is None:
        run_claim(claim)
        return
    try:
        run_claim(claim)
    except (AssertionError, TypeError, ValueError, pytest.fail.Exception):
        pytest.xfail(claim.bug)
    pytest.fail(f"the code keeps this claim now ({claim.bug}): drop the row's bug=")


def test_an_inverted_claim_fails():
    # The table's machinery catches a page that says the opposite of the code.
    said_raises = Claim(README, "", lambda: np.sum(X2), raises=TypeError)
    said_works = Claim(README, "", lambda: dualad.grad(lambda x: float(x[0]))(X2))
    said_returns = Claim(README, "", lambda: 1.0, check=close(2.0))
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        run_claim(said_raises)
    with pytest.raises(TypeError):
        run_claim(said_works)
    with pytest.raises(AssertionError, match="says"):
        run_claim(said_returns)
