"""Linear algebra of complex matrices in forward, reverse and second order, against JAX.

As in test_complex.py, each function is checked four ways: ``dualad.jvp`` against
``jax.jvp`` and against central differences of the function seen as a map of real
and imaginary parts, ``dualad.vjp`` against ``jax.vjp``, and ``dualad.grad`` of a
real loss against ``jax.grad``; the holomorphic ones (solve, inv, det, matmul,
eigvals, ...) also by their holomorphic Jacobians. Second order: ``dualad.hessian``
of real functions of a real matrix through complex values (eig of a real matrix
with complex eigenvalues against ``jax.hessian``; the others against central
differences of the gradient). JAX runs compiled, once per case (``reference``).

Phases. NumPy and JAX call the same LAPACK routines, so eigenvectors and singular
vectors are the same arrays in both, and their tangents are compared with JAX's
directly: eigh's V and the SVD's V have ``Im(vᵢᴴ dvᵢ) = 0`` (JAX's choice), which
is no derivative of LAPACK's phases. Central differences are therefore taken of
what no phase changes (``GAUGE_FREE``): ``V diag(c) Vᴴ`` and ``|V|`` for eigh,
``U diag(c) Vᴴ``, ``|U|`` and ``|V|`` for the SVD. eig's vectors keep LAPACK's
normalization (unit norm, largest component real), qr's and cholesky's factors
have a real diagonal: those are differentiated as they are.
"""

import functools
import zlib
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_allclose

import dualad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(20240611)


def crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


SQ = crandn(4, 4) + 4 * np.eye(4)  # well conditioned, distinct eigenvalues
B = crandn(4, 4)  # Hermitian and positive definite matrices are built from it
TALL, WIDE = crandn(5, 3), crandn(3, 5)
VEC, RHS = crandn(4), crandn(4, 2)
STACK = crandn(2, 3, 3) + 3 * np.eye(3)  # stacks of matrices (..., n, n)
# A real matrix whose eigenvalues are complex (a conjugate pair and a real one).
ROT = np.array([[0.3, -1.2, 0.4], [1.1, 0.2, -0.5], [0.1, 0.6, 1.5]])
WEIGHTS = np.linspace(0.5, 2.0, 5)
assert np.iscomplexobj(np.linalg.eigvals(ROT))


def jeig(a):
    """jnp.linalg.eig with the eigenvector derivatives JAX needs an opt-in for."""
    return jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)


def herm(x, xp):
    return x + xp.conj(xp.swapaxes(x, -1, -2))


def posdef(x, xp):
    return x @ xp.conj(xp.swapaxes(x, -1, -2)) + 4 * xp.eye(x.shape[-1])


def projector(u, v, xp):
    """U diag(c) Vᴴ: the same for every choice of the vectors' phases."""
    c = xp.asarray(WEIGHTS[: u.shape[-1]])
    return (u * c) @ xp.conj(xp.swapaxes(v, -1, -2))


def eigh_free(out):
    w, v = out
    return w, projector(v, v, np), np.abs(v)


def svd_free(out):
    u, s, vh = out
    return s, projector(u, np.conj(vh).T, np), np.abs(u), np.abs(vh)


def norms(a, xp):
    return (xp.linalg.norm(a), xp.linalg.norm(a, 2), xp.linalg.norm(a, "nuc"),
            xp.linalg.norm(a, 1), xp.linalg.vector_norm(a, ord=3, axis=1),
            xp.linalg.vector_norm(a, ord=xp.inf), xp.linalg.matrix_norm(a[:3]),
            xp.linalg.cond(a[:3]))


def stacked(a, xp, eig):
    """Functions of (..., n, n) stacks whose outputs have no free phase."""
    la = xp.linalg
    return (la.inv(a), la.det(a), *la.slogdet(a), la.solve(a, a[..., :1]), *eig(a),
            la.eigvals(a), la.eigvalsh(herm(a, xp)), la.cholesky(posdef(a, xp)), *la.qr(a),
            la.svd(a, compute_uv=False), la.norm(a, axis=(-2, -1)))


#: name: (NumPy function, JAX function, arguments). Outputs are arrays or tuples.
CASES = {
    "matmul and einsum": (lambda a, b: (a @ b, np.dot(a, b[:, 0]),
                                        np.einsum("ij,jk,kl->il", a, a, b)),
                          lambda a, b: (a @ b, jnp.dot(a, b[:, 0]),
                                        jnp.einsum("ij,jk,kl->il", a, a, b)), (SQ, RHS)),
    "vdot and vecdot": (lambda a, v: (np.vdot(v, a[0]), np.vecdot(a, v),
                                      np.linalg.vecdot(a, v[:, None], axis=0)),
                        lambda a, v: (jnp.vdot(v, a[0]), jnp.vecdot(a, v),
                                      jnp.linalg.vecdot(a, v[:, None], axis=0)), (SQ, VEC)),
    "solve": (lambda a, b: (np.linalg.solve(a, b), np.linalg.solve(a, b[:, 0])),
              lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.solve(a, b[:, 0])), (SQ, RHS)),
    "inv": (np.linalg.inv, jnp.linalg.inv, (SQ,)),
    "det": (np.linalg.det, jnp.linalg.det, (SQ,)),
    "slogdet": (lambda a: tuple(np.linalg.slogdet(a)), lambda a: tuple(jnp.linalg.slogdet(a)),
                (SQ,)),
    "matrix_power and multi_dot": (
        lambda a, b: (np.linalg.matrix_power(a, -3), np.linalg.multi_dot([a, a, b])),
        lambda a, b: (jnp.linalg.matrix_power(a, -3), jnp.linalg.multi_dot([a, a, b])),
        (SQ, RHS)),
    "tensorsolve and tensorinv": (
        lambda a, b: (np.linalg.tensorsolve(a.reshape(2, 2, 2, 2), b.reshape(2, 2)),
                      np.linalg.tensorinv(a.reshape(2, 2, 4), ind=2)),
        lambda a, b: (jnp.linalg.tensorsolve(a.reshape(2, 2, 2, 2), b.reshape(2, 2)),
                      jnp.linalg.tensorinv(a.reshape(2, 2, 4), ind=2)), (SQ, VEC)),
    "eigh": (lambda x: tuple(np.linalg.eigh(herm(x, np))),
             lambda x: tuple(jnp.linalg.eigh(herm(x, jnp))), (B,)),
    "eigh upper": (lambda x: tuple(np.linalg.eigh(herm(x, np), UPLO="U")),
                   lambda x: tuple(jnp.linalg.eigh(herm(x, jnp), UPLO="U")), (B,)),
    "eigvalsh": (lambda x: np.linalg.eigvalsh(herm(x, np)),
                 lambda x: jnp.linalg.eigvalsh(herm(x, jnp)), (B,)),
    "eig and eigvals": (lambda a: (*np.linalg.eig(a), np.linalg.eigvals(a)),
                        lambda a: (*jeig(a), jnp.linalg.eigvals(a)), (SQ,)),
    "eig and eigvals of a real matrix": (lambda a: (*np.linalg.eig(a), np.linalg.eigvals(a)),
                                         lambda a: (*jeig(a), jeig(a)[0]), (ROT,)),
    "svd": (lambda a: tuple(np.linalg.svd(a)), lambda a: tuple(jnp.linalg.svd(a)), (SQ,)),
    "svd tall": (lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
                 lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), (TALL,)),
    "svd wide": (lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
                 lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), (WIDE,)),
    "singular values": (lambda a: (np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a.T)),
                        lambda a: (jnp.linalg.svd(a, compute_uv=False),
                                   jnp.linalg.svdvals(a.T)), (TALL,)),
    "svd hermitian": (lambda x: tuple(np.linalg.svd(herm(x, np), hermitian=True)),
                      lambda x: tuple(jnp.linalg.svd(herm(x, jnp), hermitian=True)), (B,)),
    "qr": (lambda a: (*np.linalg.qr(a), np.linalg.qr(a[:3], "r")),
           lambda a: (*jnp.linalg.qr(a), jnp.linalg.qr(a[:3], "r")), (TALL,)),
    "qr complete": (lambda a: tuple(np.linalg.qr(a, "complete")),
                    lambda a: tuple(jnp.linalg.qr(a, "complete")), (TALL,)),
    "qr wide": (lambda a: tuple(np.linalg.qr(a)), lambda a: tuple(jnp.linalg.qr(a)), (WIDE,)),
    "cholesky": (lambda x: (np.linalg.cholesky(posdef(x, np)),
                            np.linalg.cholesky(posdef(x, np), upper=True)),
                 lambda x: (jnp.linalg.cholesky(posdef(x, jnp)),
                            jnp.linalg.cholesky(posdef(x, jnp), upper=True)), (B,)),
    "pinv": (lambda a, x: (np.linalg.pinv(a), np.linalg.pinv(herm(x, np), hermitian=True)),
             lambda a, x: (jnp.linalg.pinv(a), jnp.linalg.pinv(herm(x, jnp), hermitian=True)),
             (TALL, B)),
    "lstsq": (lambda a, b: tuple(np.linalg.lstsq(a, b)[i] for i in (0, 1, 3)),
              lambda a, b: tuple(jnp.linalg.lstsq(a, b)[i] for i in (0, 1, 3)),
              (TALL, TALL[:, :2])),
    "var and std": (lambda x: (np.var(x, axis=0), np.std(x, ddof=1)),
                    lambda x: (jnp.var(x, axis=0), jnp.std(x, ddof=1)), (TALL,)),
    "norms": (lambda a: norms(a, np), lambda a: norms(a, jnp), (TALL,)),
    "a stack of matrices": (lambda a: stacked(a, np, np.linalg.eig),
                            lambda a: stacked(a, jnp, jeig), (STACK,)),
}
#: Functions of the outputs that no choice of phases changes (module docstring).
GAUGE_FREE = {
    "eigh": eigh_free, "eigh upper": eigh_free,
    "svd": svd_free, "svd tall": svd_free, "svd wide": svd_free, "svd hermitian": svd_free,
}
#: Holomorphic functions of their first argument: (NumPy, JAX, arguments).
HOLOMORPHIC = {
    "matmul and einsum": CASES["matmul and einsum"],
    "solve": CASES["solve"],
    "inv": CASES["inv"],
    "det": CASES["det"],
    "matrix_power and multi_dot": CASES["matrix_power and multi_dot"],
    "tensorsolve and tensorinv": CASES["tensorsolve and tensorinv"],
    "eigvals": (np.linalg.eigvals, jnp.linalg.eigvals, (SQ,)),
}


def flat(tree):
    """The arrays of an output (an array or nested tuples), in order. Not JAX's
    tree_leaves: under dualad_gpu a Dual is a JAX pytree of its parts."""
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in flat(t)]
    return [tree]


def leaves(tree):
    return [np.asarray(x) for x in flat(tree)]


def tree_map(f, *trees):
    if isinstance(trees[0], (tuple, list)):
        return tuple(tree_map(f, *parts) for parts in zip(*trees))
    return f(*trees)


def assert_trees_close(actual, expected, rtol=1e-10, atol=1e-12):
    actual, expected = leaves(actual), leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape
        assert_allclose(a, e, rtol=rtol, atol=atol * max(1.0, np.abs(e).max(initial=0)))


def like(x, rng):
    """A random value of the shape and kind (real or complex) of ``x``."""
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
    return rng.standard_normal(x.shape)


def central(f, args, tangents, h=1e-6):
    plus = f(*(a + h * t for a, t in zip(args, tangents)))
    minus = f(*(a - h * t for a, t in zip(args, tangents)))
    return tree_map(lambda p, m: (p - m) / (2 * h), plus, minus)


def real_loss(g, weights, xp):
    """Σ w·|y|² + Re Σ c·y over the outputs y of ``g``: a real function of them."""
    def value(*args):
        return sum(xp.sum(w * xp.abs(y) ** 2) + xp.sum(xp.real(c * y))
                   for y, (w, c) in zip(flat(g(*args)), weights))
    return value


@functools.cache
def reference(name):
    """Random tangents, cotangents and loss weights for a case (seeded by its name),
    and JAX's output, JVP, VJP and gradient for them, from one compiled program."""
    f, jf, args = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    y = f(*args)
    tangents = tuple(like(a, rng) for a in args)
    cotangents = tree_map(lambda x: like(x, rng), y)
    weights = [(like(np.real(x), rng), like(x, rng)) for x in leaves(y)]
    every = tuple(range(len(args)))

    def everything(args, tangents, cotangents):
        out, tangent = jax.jvp(jf, args, tangents)
        pulled = jax.vjp(jf, *args)[1](cotangents)
        return out, tangent, pulled, jax.grad(real_loss(jf, weights, jnp), every)(*args)

    out, tangent, pulled, gradient = jax.jit(everything)(args, tangents, cotangents)
    return SimpleNamespace(tangents=tangents, cotangents=cotangents, weights=weights,
                           out=out, tangent=tangent, pulled=pulled, gradient=gradient)


@pytest.mark.parametrize("name", list(CASES))
def test_jvp_is_jaxs_and_the_central_difference(name):
    f, _, args = CASES[name]
    jax_ = reference(name)
    y, t = dualad.jvp(f, args, jax_.tangents)
    assert_trees_close(y, jax_.out)
    assert_trees_close(t, jax_.tangent)
    assert [x.dtype for x in leaves(t)] == [x.dtype for x in leaves(jax_.tangent)]
    free = GAUGE_FREE.get(name)
    g = f if free is None else (lambda *a: free(f(*a)))
    assert_trees_close(dualad.jvp(g, args, jax_.tangents)[1],
                       central(g, args, jax_.tangents), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(CASES))
def test_vjp_is_jaxs(name):
    f, _, args = CASES[name]
    jax_ = reference(name)
    _, pullback = dualad.vjp(f, *args)
    assert_trees_close(pullback(jax_.cotangents), jax_.pulled)


@pytest.mark.parametrize("name", list(CASES))
def test_grad_of_a_real_loss_is_jaxs(name):
    f, _, args = CASES[name]
    jax_ = reference(name)
    every = tuple(range(len(args)))
    assert_trees_close(dualad.grad(real_loss(f, jax_.weights, np), every)(*args),
                       jax_.gradient)


@pytest.mark.parametrize("name", list(HOLOMORPHIC))
def test_holomorphic_jacobians_are_jaxs(name):
    f, jf, args = HOLOMORPHIC[name]
    rest = args[1:]
    expected = jax.jit(jax.jacfwd(lambda a: jf(a, *rest), holomorphic=True))(args[0])
    for jacobian in (dualad.jacfwd, dualad.jacrev):
        assert_trees_close(jacobian(lambda a: f(a, *rest), holomorphic=True)(args[0]),
                           expected)


# ---------------------------------------------------------------------------
# The triangle LAPACK reads, and full singular vectors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_and_cholesky_read_one_triangle_and_the_real_diagonal(uplo):
    """Of a matrix that is not Hermitian, NumPy reads one triangle (and ignores the
    imaginary part of the diagonal): every perturbation, central differences."""
    lower = uplo == "L"
    rng = np.random.default_rng(5)
    garbage = like(B, rng)  # in the triangle NumPy does not read
    h = herm(B, np) + (np.triu(garbage, 1) if lower else np.tril(garbage, -1))
    h = h + 1j * np.diag(rng.standard_normal(4))
    t = like(B, rng)
    functions = [lambda a: eigh_free(np.linalg.eigh(a, UPLO=uplo)),
                 lambda a: np.linalg.eigvalsh(a, UPLO=uplo),
                 lambda a: np.linalg.cholesky(a + 8 * np.eye(4), upper=not lower)]
    for f in functions:
        assert_trees_close(dualad.jvp(f, (h,), (t,))[1], central(f, (h,), (t,)),
                           rtol=1e-6, atol=1e-7)
    g = dualad.grad(lambda a: np.sum(np.linalg.eigvalsh(a, UPLO=uplo) * WEIGHTS[:4]))(h)
    other = np.triu(np.ones((4, 4)), 1) if lower else np.tril(np.ones((4, 4)), -1)
    assert np.all(g[other == 1] == 0) and np.all(np.diag(g).imag == 0)


def test_det_of_a_singular_matrix():
    """At a singular matrix det's rule is tr(adj(A) dA), adj(A) from the SVD: checked
    against JAX in forward, reverse and forward over forward."""
    rng = np.random.default_rng(7)
    a = like(TALL[:3, :2], rng) @ like(WIDE[:2, :3], rng)  # rank 2
    t, u = like(a, rng), like(a, rng)
    _, dt = dualad.jvp(np.linalg.det, (a,), (t,))
    assert_allclose(dt, jax.jvp(jnp.linalg.det, (a,), (t,))[1], rtol=1e-12)
    assert_allclose(dt, central(np.linalg.det, (a,), (t,)), rtol=1e-7)
    assert_allclose(dualad.vjp(np.linalg.det, a)[1](1.0 - 2.0j)[0],
                    jax.vjp(jnp.linalg.det, a)[1](1.0 - 2.0j)[0], rtol=1e-12)
    second = dualad.jvp(lambda a: dualad.jvp(np.linalg.det, (a,), (t,))[1], (a,), (u,))[1]
    expected = jax.jvp(lambda a: jax.jvp(jnp.linalg.det, (a,), (t,))[1], (a,), (u,))[1]
    assert_allclose(second, expected, rtol=1e-12)


def test_full_singular_vectors_of_a_tall_matrix():
    """The first columns of a full U are the reduced ones; the others, any basis of a
    complement, have no derivative (nan, where JAX raises)."""
    t = like(TALL, np.random.default_rng(6))
    _, (du, ds, dvh) = dualad.jvp(lambda a: tuple(np.linalg.svd(a)), (TALL,), (t,))
    _, (ru, rs, rvh) = dualad.jvp(lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
                                  (TALL,), (t,))
    assert_allclose(du[:, :3], ru, rtol=1e-13)
    assert np.all(np.isnan(du[:, 3:]))
    assert_allclose(ds, rs, rtol=1e-13)
    assert_allclose(dvh, rvh, rtol=1e-13)


# ---------------------------------------------------------------------------
# Second order: real functions whose intermediates are complex
# ---------------------------------------------------------------------------

C = RNG.standard_normal((3, 3))
W3 = crandn(3, 3)  # (module level: drawn at import, whatever tests run)


def through(x, xp):
    return x + 1j * (x @ C)


#: name: a real function of a real 3×3 matrix, given the array namespace.
SECOND_ORDER = {
    "eigvals": lambda x, xp, eig: xp.real(xp.sum(eig(x)[0] ** 2 * W3[0])),
    "eig vectors": lambda x, xp, eig: xp.sum(xp.abs(eig(x)[1] * W3) ** 2)
    + xp.real(xp.sum(eig(x)[1] * W3)),
    "det": lambda x, xp, eig: xp.abs(xp.linalg.det(through(x, xp))),
    "slogdet": lambda x, xp, eig: xp.real(xp.linalg.slogdet(through(x, xp))[0] * W3[0, 0])
    + xp.linalg.slogdet(through(x, xp))[1],
    "inv": lambda x, xp, eig: xp.real(xp.sum(xp.linalg.inv(through(x, xp)) * W3)),
    "eigh": lambda x, xp, eig: xp.sum(xp.abs(xp.linalg.eigh(herm(through(x, xp), xp))[1]
                                             * W3) ** 2)
    + xp.sum(xp.linalg.eigvalsh(posdef(through(x, xp), xp)) * WEIGHTS[:3]),
    "svd": lambda x, xp, eig: xp.sum(xp.linalg.svd(through(x, xp), compute_uv=False)
                                     * WEIGHTS[:3])
    + xp.sum(xp.abs(xp.linalg.svd(through(x, xp))[0] * W3) ** 2),
    "cholesky": lambda x, xp, eig: xp.real(xp.sum(xp.linalg.cholesky(posdef(through(x, xp),
                                                                             xp)) * W3)),
    "qr": lambda x, xp, eig: xp.real(xp.sum(xp.linalg.qr(through(x, xp))[0] * W3))
    + xp.real(xp.sum(xp.linalg.qr(through(x, xp))[1] * W3.T)),
    "norms and std": lambda x, xp, eig: xp.linalg.norm(through(x, xp), 2)
    + xp.std(through(x, xp)) + xp.linalg.norm(through(x, xp)),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_hessian_of_a_real_function_through_complex_linear_algebra(name):
    """Against JAX for eig (of a real matrix with complex eigenvalues); the others
    against central differences of the gradient (checked against JAX above)."""
    f = SECOND_ORDER[name]
    x = ROT
    fn = lambda x: f(x, np, np.linalg.eig)
    if name.startswith("eig"):
        expected = jax.jit(jax.hessian(lambda x: f(x, jnp, jeig)))(x)
    else:
        grad, h = dualad.grad(fn), 1e-5
        expected = np.stack([(grad(x + h * e) - grad(x - h * e)) / (2 * h)
                             for e in np.eye(x.size).reshape(-1, *x.shape)], axis=-1)
        expected = expected.reshape(x.shape + x.shape)
    tolerance = {"rtol": 1e-10, "atol": 1e-12} if name.startswith("eig") else {"atol": 1e-7}
    for mode in ("hyperdual", "fwd-rev"):
        assert_allclose(dualad.hessian(fn, mode=mode)(x), expected, **tolerance)


# ---------------------------------------------------------------------------
# Polynomials: complex roots of real polynomials
# ---------------------------------------------------------------------------


def test_complex_roots_of_a_real_polynomial():
    p = np.array([1.0, 0.4, 2.0, -0.5])
    assert np.iscomplexobj(np.roots(p))
    j = dualad.jacfwd(np.roots)(p)
    h = 1e-6
    expected = np.stack([(np.roots(p + h * e) - np.roots(p - h * e)) / (2 * h)
                         for e in np.eye(4)], axis=1)
    assert_allclose(j, expected, atol=1e-8)
    modulus = lambda p: np.abs(np.roots(p))
    d_modulus = np.real(expected * np.conj(np.roots(p))[:, None]) / modulus(p)[:, None]
    assert_allclose(dualad.jacrev(modulus)(p), d_modulus, atol=1e-8)


def test_poly_of_a_matrix_with_complex_eigenvalues_is_real():
    j = dualad.jacfwd(np.poly)(ROT)
    assert j.dtype == np.float64
    assert_allclose(dualad.jvp(np.poly, (ROT,), (C,))[0], np.poly(ROT), rtol=1e-14)
    assert_allclose(np.einsum("kij,ij->k", j, C), central(np.poly, (ROT,), (C,)), atol=1e-8)


def test_matrix_rank_of_a_complex_matrix_is_a_value():
    assert dualad.jvp(np.linalg.matrix_rank, (SQ,), (SQ,))[1] == 0


def test_dualad_gpu_kernels_of_complex_matrices():
    """The JAX kernels dualad_gpu compiles (Hermitian mirrors, pinv's Vᴴ, lstsq's
    residuals, eig's largest components found on traced values) give the NumPy path's
    values and tangents."""
    dualad_gpu = pytest.importorskip("dualad_gpu")

    def f(a, h):
        return (np.linalg.cholesky(posdef(h, np), upper=True),
                np.linalg.pinv(herm(h, np), hermitian=True), np.linalg.pinv(a),
                np.linalg.lstsq(a, a[:, :2])[1], *np.linalg.eig(h + 4 * np.eye(4)),
                np.linalg.slogdet(h)[0], np.linalg.eigvalsh(herm(h, np), UPLO="U"))

    tangents = (like(TALL, np.random.default_rng(8)), like(B, np.random.default_rng(9)))
    assert_trees_close(dualad_gpu.jvp(f, (TALL, B), tangents),
                       dualad.jvp(f, (TALL, B), tangents))
