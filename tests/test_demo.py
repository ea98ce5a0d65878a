"""The demo (``python -m dualad``) and the trace tables the docs print from it."""

import doctest
import subprocess
import sys

import pytest
from numpy.testing import assert_allclose

import dualad
import dualad.__main__ as demo


def test_demo_prints_the_trace_gradient_and_jacobian():
    out = subprocess.run([sys.executable, "-m", "dualad"], capture_output=True, text=True,
                         check=True).stdout
    assert "Forward primal trace" in out
    assert "11.6521" in out and "5.5" in out  # f(2, 5) and ∂f/∂x1


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_the_usage_not_the_demo(flag):
    run = subprocess.run([sys.executable, "-m", "dualad", flag], capture_output=True,
                         text=True)
    assert run.returncode == 0
    assert run.stdout.startswith("usage: python -m dualad")
    assert "bench" in run.stdout and "demo" in run.stdout
    assert "Forward primal trace" not in run.stdout


def test_an_unknown_command_is_an_error_with_the_usage(capsys):
    with pytest.raises(SystemExit) as info:
        demo.main(["bnech"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m dualad") and "bnech" in err


def test_demo_command_runs_the_demo(capsys):
    assert demo.main(["demo"]) == 0
    assert "Forward primal trace" in capsys.readouterr().out


def test_bench_help_is_the_bench_usage(capsys):
    with pytest.raises(SystemExit) as info:
        demo.main(["bench", "--help"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: python -m dualad bench")


def test_bench_exit_status_is_passed_on(monkeypatch):
    # --check makes the bench return 1 when a target is missed; the process must exit 1
    import dualad.bench

    calls = []
    monkeypatch.setattr(dualad.bench, "main", lambda argv: calls.append(argv) or 1)
    assert demo.main(["bench", "--check", "--only", "jvp"]) == 1
    assert calls == [["--check", "--only", "jvp"]]


def test_bench_runs_from_the_command_line():
    run = subprocess.run([sys.executable, "-m", "dualad", "bench", "--only", "jacfwd_textbook",
                          "--peers", "none", "--repeat", "1", "--min-time", "0.001"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "jacfwd ln(x1)+x1*x2-sin(x2)" in run.stdout


def test_bench_profiles_the_replay(capsys):
    from dualad.bench import main as bench_main

    assert bench_main(["--only", "jacfwd_textbook", "--profile", "20"]) == 0
    out = capsys.readouterr().out
    assert "jacfwd_textbook / dualad, 20 calls" in out and "<dualad replay>" in out


def test_traces_agree_with_the_transforms():
    forward = demo.forward_trace()
    assert_allclose(forward[-1][2], demo.textbook(2.0, 5.0))
    assert_allclose(forward[-1][4], 5.5)
    adjoints = {row[0]: row[3] for row in demo.reverse_trace()}
    gradient = dualad.grad(demo.textbook, argnums=(0, 1))(2.0, 5.0)
    assert_allclose([adjoints["x̄1"], adjoints["x̄2"]], gradient)


def test_doctests_of_the_demo_module():
    # pytest's --doctest-modules does not collect __main__.py
    result = doctest.testmod(demo, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_bench_without_its_packages_says_which_extra_to_install():
    code = ("import sys; sys.modules['scipy'] = None\n"
            "from dualad.__main__ import main\nsys.exit(main(['bench', '--help']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("usage: python -m dualad bench")
    assert "scipy is not installed" in done.stderr and "dualad[bench]" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_reader_that_leaves_early_gets_no_traceback():
    # python -m dualad | head -1: the pipe closes under the demo's later lines
    demo_run = subprocess.Popen([sys.executable, "-m", "dualad"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    demo_run.stdout.close()  # (before the demo writes: its writes meet a closed pipe)
    _, err = demo_run.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err
