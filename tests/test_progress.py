"""Progress of long derivatives (:mod:`dualad.progress`): ``progress=`` on every chunked
transform and on ensembles — a tqdm bar on stderr and lines at ``logging.INFO`` — the
automatic choice (a bar only for work expected to be long), results unchanged, the
phases of a sparse preparation and long recordings logged. No time is asserted: the
threshold is patched to 0 (every problem "long") or to a day (none)."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

import dualad
from dualad import progress as progress_module
from test_parallel import energy, model, residual

pytest.importorskip("tqdm")


X = np.linspace(0.1, 1.3, 8)

#: name -> (the transform with the given keywords, the unit counted, how many there are)
CHUNKED = {
    "jacfwd": (lambda **kw: dualad.jacfwd(model, chunk_size=3, **kw), "passes", 3),
    "jacrev": (lambda **kw: dualad.jacrev(model, chunk_size=3, **kw), "passes", 3),
    "hessian": (lambda **kw: dualad.hessian(energy, chunk_size=4, mode="hyperdual", **kw),
                "passes", 3),
    "hessian-fwd-rev": (lambda **kw: dualad.hessian(energy, chunk_size=3, mode="fwd-rev", **kw),
                        "passes", 3),
    "sparse_jacobian": (lambda **kw: dualad.sparse_jacobian(residual, mode="fwd", chunk_size=1,
                                                            **kw), "passes", 3),
    "sparse_jacobian-rev": (lambda **kw: dualad.sparse_jacobian(residual, mode="rev",
                                                                chunk_size=1, **kw),
                            "passes", 3),
    "sparse_hessian": (lambda **kw: dualad.sparse_hessian(energy, chunk_size=1, **kw),
                       "passes", None),
    "ensemble": (lambda **kw: lambda x: dualad.ensemble(
        dualad.jacfwd(model), np.stack([x, 2 * x, 3 * x]), **kw), "points", 3),
}


def same(a, b) -> bool:
    if hasattr(a, "toarray"):
        a, b = a.toarray(), b.toarray()
    return a.dtype == b.dtype and np.array_equal(a, b)


@pytest.fixture
def info(caplog):
    caplog.set_level(logging.INFO, logger="dualad")
    return caplog


def lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "dualad"]


@pytest.mark.parametrize("name", list(CHUNKED))
def test_progress_true_shows_a_bar_and_logs_the_start_and_end(name, info, capsys):
    make, unit, count = CHUNKED[name]
    expected = make(progress=False)(X)
    capsys.readouterr()
    info.clear()
    assert same(make(progress=True)(X), expected)
    err = capsys.readouterr().err
    logged = lines(info)
    bar = [line for line in logged if f" {unit}" in line and " in " not in line]
    done = [line for line in logged if f" {unit} in " in line]
    assert len(bar) == 1 and len(done) == 1, logged
    shown = int(bar[0].split(": ")[-1].split()[0])
    assert shown >= 2 and (count is None or shown == count)
    assert f"{shown} of {shown} {unit} in " in done[0]
    assert f"{shown}/{shown}" in err or f"0/{shown}" in err  # tqdm's bar on stderr


@pytest.mark.parametrize("name", list(CHUNKED))
def test_progress_false_says_nothing_even_for_long_work(name, info, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_SECONDS", 0.0)
    make, unit, _ = CHUNKED[name]
    make(progress=False)(X)
    assert capsys.readouterr().err == ""
    assert not [line for line in lines(info) if f" {unit}" in line]


@pytest.mark.parametrize("name", ["jacfwd", "hessian", "ensemble"])
def test_by_default_a_bar_only_for_work_expected_to_be_long(name, info, capsys, monkeypatch):
    make, unit, count = CHUNKED[name]
    monkeypatch.setattr(progress_module, "PROGRESS_SECONDS", 86400.0)
    expected = make()(X)
    assert capsys.readouterr().err == "" and not lines(info)
    monkeypatch.setattr(progress_module, "PROGRESS_SECONDS", 0.0)
    assert same(make()(X), expected)
    logged = lines(info)
    assert any(f"{count} {unit}, about " in line for line in logged), logged
    assert f"/{count}" in capsys.readouterr().err


def test_one_pass_has_no_bar(info, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_SECONDS", 0.0)
    dualad.jacfwd(model, progress=True)(X)
    assert capsys.readouterr().err == "" and not lines(info)


def test_without_tqdm_the_log_lines_stay_and_a_warning_says_what_to_install(
        info, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    make, _, _ = CHUNKED["jacfwd"]
    with pytest.warns(RuntimeWarning, match=r"pip install tqdm"):
        J = make(progress=True)(X)
    assert same(J, make(progress=False)(X))
    assert capsys.readouterr().err == ""
    assert any("3 of 3 passes in " in line for line in lines(info))


def test_a_sparse_preparation_logs_its_phases(info):
    dualad.sparse_jacobian(residual, progress=False)(X)
    logged = lines(info)
    assert any(line.startswith("jacobian_sparsity: the pattern of residual at an input of "
                               "shape (8,) in ") for line in logged), logged
    assert any(line.startswith("sparse_jacobian: colouring a (8, 8) pattern with 22 "
                               "nonzeros in ") for line in logged), logged
    info.clear()
    dualad.sparse_hessian(energy)(X)
    assert any("star colouring" in line for line in lines(info))


def test_a_long_recording_is_logged(info, monkeypatch):
    monkeypatch.setattr(progress_module, "PROGRESS_SECONDS", 0.0)

    def scaled(x):
        return model(x) * 2.0

    jac = dualad.jacfwd(scaled)
    for _ in range(3):
        jac(X)
    assert jac.counts["recorded"] == 1
    assert sum("recorded a call of scaled (the next calls replay it) in " in line
               for line in lines(info)) == 1


@pytest.mark.parametrize("value", [1, "yes", 0.5])
def test_progress_must_be_none_true_or_false(value):
    for make in (lambda: dualad.jacfwd(model, progress=value),
                 lambda: dualad.jacrev(model, progress=value),
                 lambda: dualad.hessian(energy, progress=value),
                 lambda: dualad.sparse_jacobian(residual, progress=value),
                 lambda: dualad.sparse_hessian(energy, progress=value),
                 lambda: dualad.ensemble(model, np.ones((2, 3)), progress=value)):
        with pytest.raises(TypeError, match="progress must be None"):
            make()


def test_a_failing_pass_closes_the_bar(info, capsys):
    def failing(x):
        if x.tangent.shape[0] < 3:  # the last pass (chunk of 2 of 8 seeds)
            raise FloatingPointError("the model diverged")
        return model(x)

    with pytest.raises(FloatingPointError):
        dualad.jacfwd(failing, chunk_size=3, progress=True)(X)
    assert any("2 of 3 passes in " in line for line in lines(info))
