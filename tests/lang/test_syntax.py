"""Parsing and printing: the slides' program, the IR, ``parse(print(ir)) == ir``, syntax errors."""

from __future__ import annotations

import pytest

from autoreparam.lang import ProgramError, ir, parse, print_program
from tests.lang.conftest import EXAMPLES

SLIDES = """mu ~ normal(0, 5)
tau ~ halfCauchy(0, 5)
for(n in 1 .. 3)
  theta[n] ~ normal(mu, tau)
  y[n] ~ normal(theta[n], sigma[n])
observe y = [28, 8, -3]
observe sigma = [15, 10, 16]
"""


def test_slides_program_parses_to_the_expected_ir():
    program = parse(SLIDES)
    n = ir.Var("n")
    expected = ir.Program((
        ir.Sample(ir.Var("mu"), "normal", (ir.Num(0), ir.Num(5))),
        ir.Sample(ir.Var("tau"), "halfCauchy", (ir.Num(0), ir.Num(5))),
        ir.For("n", ir.Num(1), ir.Num(3), (
            ir.Sample(ir.Index("theta", (n,)), "normal", (ir.Var("mu"), ir.Var("tau"))),
            ir.Sample(ir.Index("y", (n,)), "normal", (ir.Index("theta", (n,)), ir.Index("sigma", (n,)))),
        )),
        ir.Observe("y", (28, 8, -3)),
        ir.Observe("sigma", (15, 10, 16)),
    ))
    assert program == expected
    assert program.statements[2].body[0].pos == ir.Pos(4, 3)


def test_arithmetic_precedence_and_associativity():
    (stmt,) = parse("z = a - b - c * d / e + -f\n").statements
    a, b, c, d, e, f = (ir.Var(x) for x in "abcdef")
    assert stmt.value == ir.BinOp("+", ir.BinOp("-", ir.BinOp("-", a, b), ir.BinOp("/", ir.BinOp("*", c, d), e)), ir.Neg(f))


@pytest.mark.parametrize("text", [
    SLIDES,
    "z = a - (b - c)\nw = -(a * b) / (c / d)\nv = --a\nu = a / b * c\n",
    "data x: real[N, D]\ndata n: int\nobserve q = [[1.5, -2], [0.001, 1e-07]]\nobserve e = []\n",
    "for (i in 1 .. N)\n  for (j in 1 .. M)\n    z[i, j] ~ normal(a[i] * b[j], exp(s))\n",
    "x = 1.0e20 + 5 + 5.0 + 1e-05 * 0.1\ny ~ bernoulli_logit(dot(x[n], beta) + inv_logit(-3))\n",
])
def test_print_then_parse_is_the_identity(text):
    program = parse(text)
    printed = print_program(program)
    assert parse(printed) == program
    assert print_program(parse(printed)) == printed


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.arp")), ids=lambda p: p.name)
def test_every_example_round_trips(path):
    program = parse(path.read_text())
    assert parse(print_program(program)) == program


@pytest.mark.parametrize("text, line, column, says", [
    ("mu \\sim normal(0, 5)\n", 1, 4, "write '~'"),
    ("mu ~ normal(0, 5\nx ~ normal(0, 1)\n", 2, 1, "unexpected 'x'"),
    ("for (n in 1 .. 3)\ny ~ normal(0, 1)\n", 2, 1, "indented block"),
    ("x ~ normal(0, 1)\n  y ~ normal(0, 1)\n", 2, 3, "unexpected indentation"),
    ("data x: flot[3]\n", 1, 9, "expected one of: int, real"),
    ("a = 1 +\n", 1, 8, "expected"),
    ("a = 1 $ 2\n", 1, 7, "unexpected character '$'"),
    # Found in review: no line at all, a name taken for the keyword `for`, a constant read as inf.
    ("for (i in 1 .. 3)\n    x[i] ~ normal(0, 1)\n  y[i] ~ normal(0, 1)\n", 3, 3,
     "indented 2 space(s), but the enclosing blocks are indented 0, 4"),
    ("forecast ~ normal(0, 1)\ny ~ normal(forecast, 1))\n", 2, 24, "unexpected ')'"),
    ("mu ~ normal(0, 1e400)\n", 1, 16, "the number 1e400 is too large"),
    ("observe y = [1, -1e400]\n", 1, 18, "the number 1e400 is too large"),
])
def test_syntax_errors_name_line_column_and_what_was_expected(text, line, column, says):
    with pytest.raises(ProgramError) as info:
        parse(text)
    error = info.value
    assert (error.kind, error.pos.line, error.pos.column) == ("syntax", line, column)
    assert says in str(error)
    assert f"<program>:{line}:{column}" in str(error)


def test_a_long_expression_is_refused_at_its_line_not_by_a_recursion_error():
    from autoreparam.lang import check, compile_program

    def chain(n):
        return "mu ~ normal(0, 1)\nz = " + " + ".join(["mu"] * n) + "\nw ~ normal(z, 1)\n"

    for n in (201, 5000):
        with pytest.raises(ProgramError, match=r"<program>:2:1: syntax error: an expression here nests more than 200"):
            parse(chain(n))
    # The longest accepted expression goes through every stage that recurses over it.
    program = parse(chain(200))
    check(program)
    assert parse(print_program(program)) == program
    compile_program(chain(200))
    assert parse("z = " + "(" * 1000 + "1" + ")" * 1000 + "\n") == parse("z = 1\n")  # parentheses add no depth
