"""dtype, shape and printing queries on Duals give NumPy's values; savers refuse."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import dualad


def _queries(x):
    return [np.result_type(x, np.float32), np.can_cast(x, np.float32),
            np.min_scalar_type(x), np.array_repr(x), np.array_str(x),
            *np.diag_indices_from(x), *np.tril_indices_from(x, -1), *np.triu_indices_from(x),
            np.einsum_path("ij,j", x, np.ones(3))[0],
            *np.unravel_index(np.argmax(x), x.shape), np.common_type(x, np.float32(1)),
            np.may_share_memory(x, x[1:]), np.shares_memory(x, x * 2)]


def test_queries_on_a_dual_are_those_on_its_value():
    a = np.arange(9.0).reshape(3, 3) / 7
    seen = []

    def f(x):
        seen.append(_queries(x))
        return x

    assert_array_equal(dualad.jacfwd(f)(a), np.eye(9).reshape(3, 3, 3, 3))
    dualad.jacrev(f)(a)
    for got in seen:
        for g, e in zip(got, _queries(a), strict=True):
            assert repr(g) == repr(e)


def test_float32_keeps_its_dtype_in_result_type():
    def f(x):
        assert np.result_type(x) == np.float32
        return x

    dualad.jacfwd(f)(np.ones(2, np.float32))


@pytest.mark.parametrize("save", [np.save, np.savez, np.savez_compressed, np.savetxt])
def test_saving_a_dual_refuses_to_drop_the_derivative(save, tmp_path):
    def f(x):
        save(tmp_path / "x.npy", x)
        return x

    with pytest.raises(TypeError, match=f"numpy.{save.__name__} would store only the value"):
        dualad.grad(lambda x: np.sum(f(x)))(np.ones(2))
    assert not list(tmp_path.iterdir())
