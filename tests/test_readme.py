"""The README's Python examples run, and each comment is what its line prints.

A comment in a README example is the repr of the expression on its line, as
Python's interactive prompt would print it (prose goes around the examples, not
in them). The guide's examples run in tests/test_docs.py.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def comments(source: str) -> dict[int, str]:
    """Line number -> text of the comment on that line."""
    return {tok.start[0]: tok.string[1:].strip()
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT}


def run_and_compare(source: str, name: str) -> int:
    """Run ``source`` statement by statement; check each comment against the repr
    of the expression statement it ends. Returns the number of comments checked."""
    expected = comments(source)
    namespace: dict = {}
    checked = set()
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Expr):
            code = compile(ast.Expression(statement.value), name, "eval")
            value = eval(code, namespace)
            if statement.end_lineno in expected:
                assert repr(value) == expected[statement.end_lineno], (
                    f"{name}, line {statement.end_lineno}: the comment says "
                    f"{expected[statement.end_lineno]!r}, the line prints {value!r}")
                checked.add(statement.end_lineno)
        else:
            exec(compile(ast.Module([statement], []), name, "exec"), namespace)
    unchecked = sorted(set(expected) - checked)
    assert not unchecked, (f"{name}: comments on lines {unchecked} are not on an expression "
                           "line; write what the line prints, or move the prose out of the code")
    return len(checked)


def test_the_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_prints_what_its_comments_say(index):
    run_and_compare(BLOCKS[index], f"README.md, example {index + 1}")


def test_the_comparison_catches_a_wrong_comment():
    assert run_and_compare("x = 2.5\nx * 2  # 5.0\n", "ok") == 1
    with pytest.raises(AssertionError, match="the line prints"):
        run_and_compare("x = 2.5\nx * 2  # 5\n", "wrong value")
    with pytest.raises(AssertionError, match="not on an expression line"):
        run_and_compare("x = 2.5  # a number\n", "prose")
