"""Every kind of fault in a program or its data gives a ProgramError at the right line and column."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from autoreparam.lang import ProgramError, compile_program

GROUPS = """data N: int
data J: int
data g: int[N]
data y: real[N]
mu ~ normal(0, 1)
for (j in 1 .. J)
  a[j] ~ normal(mu, 1)
for (n in 1 .. N)
  y[n] ~ normal(a[g[n]], 1)
"""
GOOD_DATA = {"N": 3, "J": 2, "g": [1, 2, 2], "y": [0.1, 0.2, 0.3]}
SIZED = "data N: int\nmu ~ normal(0, 1)\nfor (i in 1 .. N)\n  x[i] ~ normal(mu, 1)\n"
OBSERVED = "data y: {}[2]\ndata x: real[2]\nb ~ normal(0, 1)\nfor (n in 1 .. 2)\n  y[n] ~ {}\n"


def _error(text, data=None) -> ProgramError:
    with pytest.raises(ProgramError) as info:
        compile_program(text, data)
    return info.value


def test_the_good_program_compiles():
    model, args, kwargs = compile_program(GROUPS, GOOD_DATA)
    assert set(kwargs) == {"y"}


CASES = {
    "undefined variable": ("x ~ normal(mu, 1)\nmu ~ normal(0, 1)\n", None, "name", 1, 12, "undefined variable 'mu'"),
    "misspelt variable": ("mu ~ normal(0, 1)\nx ~ normal(mv, 1)\n", None, "name", 2, 12, "did you mean 'mu'"),
    "unknown distribution": ("x ~ nromal(0, 1)\n", None, "name", 1, 1, "unknown distribution 'nromal' (did you mean 'normal'?)"),
    "wrong arity": ("x ~ normal(0, 1, 2)\n", None, "type", 1, 1, "normal takes 2 argument(s) (loc, scale), got 3"),
    "half with a non-zero location": ("x ~ half_cauchy(1, 5)\n", None, "type", 1, 17, "must be 0"),
    "unknown function": ("x ~ normal(exq(1), 1)\n", None, "name", 1, 12, "did you mean 'exp'"),
    "function arity": ("x ~ normal(exp(1, 2), 1)\n", None, "type", 1, 12, "exp takes 1 argument(s), got 2"),
    "real index": ("data v: real[2]\nx ~ normal(v[1.5], 1)\n", {"v": [1, 2]}, "type", 2, 14, "must be an integer"),
    "latent index": ("data v: real[2]\nk ~ normal(0, 1)\nx ~ normal(v[k], 1)\n", {"v": [1, 2]}, "type", 3, 14, "must be an integer"),
    "too many indices": ("data v: real[2]\nx ~ normal(v[1, 1], 1)\n", {"v": [1, 2]}, "type", 2, 12, "indexed with 2"),
    "vector argument": ("data v: real[2]\nx ~ normal(v, 1)\n", {"v": [1, 2]}, "type", 2, 12, "scalar per element"),
    "discrete latent": ("k ~ poisson_log(0)\n", None, "type", 1, 1, "discrete latent"),
    "redefinition": ("x ~ normal(0, 1)\nx ~ normal(0, 2)\n", None, "name", 2, 1, "already defined at line 1"),
    "index out of range": (GROUPS, {**GOOD_DATA, "g": [1, 3, 2]}, "shape", 9, 19,
                           "index out of range for the data given: g[n] takes values 1..3, but axis 1 of 'a' has indices 1..2"),
    "index zero": (GROUPS, {**GOOD_DATA, "g": [0, 1, 2]}, "shape", 9, 19, "takes values 0..2"),
    "declared size": (GROUPS, {**GOOD_DATA, "y": [1.0, 2.0]}, "shape", 4, 1, "has shape (2,), but is declared real[N] = (3,)"),
    # reached site analysis, whose advice was NumPyro code: the language's own rewrite now
    "support moving with a latent": ("s ~ lognormal(0, 1)\nx ~ uniform(0, s)\n", None, "type", 2, 1,
                                     "latent 'x' ~ uniform: its high depends on a latent, so its support moves "
                                     "with that latent"),
    "elements' support moving with latents": ("a ~ normal(0, 1)\nb ~ normal(5, 1)\nfor (j in 1 .. 3)\n"
                                              "  x[j] ~ uniform(a, b)\n", None, "type", 4, 3,
                                              "latent 'x[j]' ~ uniform: its low and high depend on a latent"),
    # was a shape error "declared real[N] = (-1,)", as if the data's length were the fault
    "negative declared size": (GROUPS, {**GOOD_DATA, "N": -1, "g": [], "y": []}, "data", 3, 1,
                               "data field 'g' is declared int[N], whose size N is -1 here: a size must be 0 or more"),
    "loop longer than data": ("data y: real[2]\nfor (n in 1 .. 3)\n  y[n] ~ normal(0, 1)\n", {"y": [1, 2]},
                              "shape", 3, 3, "has shape (2,), but this statement's loops give (3,)"),
    "dot of different lengths": ("data a: real[2]\ndata b: real[3]\nx ~ normal(dot(a, b), 1)\n",
                                 {"a": [1, 2], "b": [1, 2, 3]}, "shape", 3, 12, "shape mismatch: (2,) and (3,)"),
    "missing data field": (GROUPS, {k: v for k, v in GOOD_DATA.items() if k != "g"}, "data", 3, 1, "missing data field 'g'"),
    "observed never given data": (GROUPS, {k: v for k, v in GOOD_DATA.items() if k != "y"}, "data", 9, 3,
                                  "observed variable 'y' was never given data"),
    "undeclared data field": (GROUPS, {**GOOD_DATA, "z": 1}, "data", 0, 0, "'z' are not declared"),
    "non-integer int field": (GROUPS, {**GOOD_DATA, "g": [1, 1.5, 2]}, "data", 3, 1, "holds non-integer values"),
    "ragged data": ("data m: real[2, 2]\nx ~ normal(m[1, 1], 1)\n", {"m": [[1, 2], [3]]}, "data", 1, 1, "ragged"),
    "data rank": ("data m: real[2, 2]\nx ~ normal(m[1, 1], 1)\n", {"m": [1, 2]}, "data", 1, 1, "has 1 axis(es)"),
    "given twice": ("observe y = [1]\ny[1] ~ normal(0, 1)\n", {"y": [1]}, "data", 1, 1, "in the program and in the data"),
    "non-integer count": ("data y: real[1]\ny[1] ~ bernoulli_logit(0)\n", {"y": [0.5]}, "data", 2, 1, "needs integer data"),
    "whole target in a loop": ("for (n in 1 .. 2)\n  x ~ normal(0, 1)\n", None, "syntax", 2, 3, "defines an element"),
    "unrolled element used early": ("for (t in 1 .. 3)\n  x[t + 1] ~ normal(0, 1)\n  z[t] ~ normal(x[t], 1)\n", None,
                                    "name", 3, 17, "x[1] is used before it is defined"),
    # Found in review: each of these was accepted, or failed later with a bare error.
    "int data beyond int32 (2**63 wrapped)": (SIZED, {"N": 2**63}, "data", 1, 1, "'N' holds 9.22337e+18, beyond the integers"),
    "int data 1e20": (SIZED, {"N": 1e20}, "data", 1, 1, "'N' holds 1e+20, beyond the integers"),
    "int data beyond 64 bits": (SIZED, {"N": 2**70}, "data", 1, 1, "beyond the integers"),
    "element index 0": ("x[0] ~ normal(0, 1)\ns = sum(x)\n", None, "shape", 1, 1, "x[0]: indices start at 1"),
    "element index -1": ("x[-1] ~ normal(0, 1)\n", None, "shape", 1, 1, "x[-1]: indices start at 1"),
    "bernoulli data 2": (OBSERVED.format("int", "bernoulli_logit(b)"), {"y": [0, 2], "x": [1, 1]}, "data", 5, 3,
                         "observed y[2] = 2 is outside the support of bernoulli_logit, which takes only 0 or 1"),
    "poisson data -1": (OBSERVED.format("int", "poisson_log(b)"), {"y": [-1, 0], "x": [1, 1]}, "data", 5, 3,
                        "observed y[1] = -1 is outside the support of poisson_log, which takes non-negative values"),
    "binomial data above the count": (OBSERVED.format("int", "binomial_logit(3, b)"), {"y": [5, 1], "x": [1, 1]}, "data", 5, 3,
                                      "observed y[1] = 5 is outside the support of binomial_logit"),
    "lognormal data 0": (OBSERVED.format("real", "lognormal(b, 1)"), {"y": [1.0, 0.0], "x": [1, 1]}, "data", 5, 3, "positive values"),
    "observed element outside its support": ("data y: int[1]\ny[1] ~ poisson(2)\n", {"y": [-3]}, "data", 2, 1,
                                             "observed y[1] = -3 is outside the support of poisson"),
    "observed data no statement uses": ("data y: real[5]\nmu ~ normal(0, 1)\nfor (t in 2 .. 3)\n  y[t] ~ normal(mu, 1)\n",
                                        {"y": [1, 2, 3, 4, 5]}, "shape", 4, 3,
                                        "3 of them (y[1], y[4], y[5]) are neither sampled nor read"),
    # Third review: data no statement reads compiled, and a typo in the sampled name turned the
    # data's likelihood into a latent's prior.
    "observed name typed otherwise where sampled": ("observe y = [1, 2, 3]\nmu ~ normal(0, 1)\nfor (i in 1 .. 3)\n"
                                                    "  Y[i] ~ normal(mu, 1)\n", None, "shape", 1, 1,
                                                    "data field 'y' is given, but no statement reads it"),
    "declared data no statement reads": ("data x: real[3]\nmu ~ normal(0, 1)\n", {"x": [1, 2, 3]}, "shape", 1, 1,
                                         "'x' is given, but no statement reads it and no declaration's size uses it"),
    "observed element twice": ("data y: real[2]\nmu ~ normal(0, 1)\ny[1] ~ normal(mu, 1)\ny[1] ~ normal(mu, 2)\n"
                               "y[2] ~ normal(mu, 1)\n", {"y": [1, 2]}, "name", 4, 1, "y[1] is observed twice"),
    "log of 0 in data feeding a latent expression": (OBSERVED.format("real", "normal(b * log(x[n]), 1)"),
                                                     {"y": [0, 0], "x": [1.0, 0.0]}, "value", 5, 21,
                                                     "log(x[n]) is infinite or NaN for the data given"),
    "data divisor 0 under a latent": (OBSERVED.format("real", "normal(b / x[n], 1)"), {"y": [0, 0], "x": [0.0, 1.0]},
                                      "value", 5, 21, "x[n] is 0 for the data given, and divides"),
    "data-only infinity assigned with a latent": ("data x: real[2]\nb ~ normal(0, 1)\nfor (n in 1 .. 2)\n"
                                                  "  m[n] = b + 1 / x[n]\n  z[n] ~ normal(m[n], 1)\n", {"x": [1.0, 0.0]},
                                                  "value", 4, 14, "1 / x[n] is infinite or NaN"),
    "ragged nested loop": ("data N: int\ndata K: int[N]\nfor (i in 1 .. N)\n  for (j in 1 .. K[i])\n    z[i, j] ~ normal(0, 1)\n",
                           {"N": 2, "K": [1, 2]}, "shape", 4, 20, "may not depend on the enclosing loop variable 'i'"),
    # Second review: each was accepted (a stray site, a different model), or failed as a bare or wrong error.
    "integer literal beyond 2**53": ("s ~ normal(0, 1)\nmu ~ normal(s * 100000000000000000000000, 1)\n", None,
                                     "syntax", 2, 17, "the integer 100000000000000000000000 is too large"),
    "element redefined with more indices": ("x[1] ~ normal(0, 1)\nx[2] ~ normal(0, 1)\nx[1, 5] ~ normal(0, 1)\n"
                                            "z ~ normal(sum(x), 1)\n", None, "shape", 3, 1,
                                            "'x' is defined with 1 index(es) at line 1, column 1, here with 2"),
    "observed row as one element": ("observe y = [[1, 2], [3, 4]]\ny[1, 1] ~ normal(0, 1)\ny[1, 2] ~ normal(0, 1)\n"
                                    "y[2] ~ normal(0, 1)\n", None, "shape", 4, 1, "'y' is defined with 2 index(es)"),
    "syntax error inside an indented loop body": ("for (i in 1 .. 3)\n  mu[i] ~ normal(0 1)\n", None, "syntax", 2, 20,
                                                  "unexpected '1'; expected ')'"),
    "loops nested too deep": ("".join("  " * k + f"for (i{k} in 1 .. 1)\n" for k in range(33)) + "  " * 33
                              + "z[" + ", ".join(f"i{k}" for k in range(33)) + "] ~ normal(0, 1)\n", None,
                              "shape", 33, 65, "loops nest more than 32 deep"),
    "data field named by a number": ("data N: int\nmu ~ normal(N, 1)\n", {"N": 2, 1: 3}, "data", 0, 0,
                                     "data field names must be text"),
    # Fourth review: uniform(1, 0) compiled to a NaN log density.
    "uniform with low above high": ("x ~ uniform(1, 0)\n", None, "value", 1, 1,
                                    "uniform at site 'x' needs low below high, but here low = 1, high = 0"),
    "uniform data bounds crossing": ("data a: real[2]\nfor (i in 1 .. 2)\n  x[i] ~ uniform(a[i], 2)\n", {"a": [0, 3]},
                                     "value", 3, 3, "needs low below high, but here low = 3, high = 2"),
    "indented first line": ("  for (i in 1 .. 3)\n  a[i] ~ normal(0, 1)\n", None, "syntax", 1, 1,
                            "the first statement is indented"),
}
# As the model computes (float32 unless jax_enable_x64): checked in float64, these compiled to a log
# density of -inf at every point (found in review).
FLOAT32_CASES = {
    "exp of data overflowing float32": ("data x: real\ns ~ normal(0, 1)\nmu ~ normal(s * exp(x), 1)\n", {"x": 100},
                                        "value", 3, 17, "exp(x) is infinite or NaN for the data given"),
    "data divisor 0 in float32": ("data x: real\ns ~ normal(0, 1)\nmu ~ normal(s / x, 1)\n", {"x": 1e-46}, "value", 3,
                                  17, "x is 0 for the data given, and divides"),
    "observed 1 in float32 under a beta": ("observe y = 0.99999999\ny ~ beta(2, 2)\n", None, "data", 2, 1,
                                           "observed y = 0.99999999 (in the model's float32: 1) is outside the "
                                           "support of beta"),
    "constant beyond float32": ("mu ~ normal(1e39, 1)\n", None, "value", 1, 13,
                                "the number 1e+39 is beyond the numbers the model computes with (float32"),
    "constant beyond float32 beside a latent": ("s ~ normal(0, 1)\nmu ~ normal(s * 1e39, 1)\n", None, "value", 2, 17,
                                                "the number 1e+39 is beyond"),
    "computed constant beyond float32": ("mu ~ normal(1e30 * 1e30, 1)\n", None, "value", 1, 1,
                                         "normal's loc is 1e+60 here, beyond the numbers the model computes with"),
    "observed 0 in float32 under a lognormal": ("observe y = 1e-50\ny ~ lognormal(0, 1)\n", None, "data", 2, 1,
                                                "(in the model's float32: 0) is outside the support of lognormal"),
}


FLOAT64 = pytest.mark.skipif(jnp.result_type(float) != jnp.float32, reason="float64 holds these")


@pytest.mark.parametrize("case", list(CASES) + [pytest.param(case, marks=FLOAT64) for case in FLOAT32_CASES],
                         ids=list(CASES) + list(FLOAT32_CASES))
def test_error(case):
    text, data, kind, line, column, says = {**CASES, **FLOAT32_CASES}[case]
    error = _error(text, data)
    assert says in error.message
    assert (error.kind, error.pos.line, error.pos.column) == (kind, line, column)
    if line:
        assert f":{line}:{column}: {kind} error" in str(error)


def test_a_data_file_fault_names_the_data_file_not_the_program(tmp_path):
    program = tmp_path / "groups.arp"
    program.write_text(GROUPS)
    cut = tmp_path / "cut.json"
    cut.write_text('{"N": 3,\n "J": 2 "g": [1]}')
    error = _error(str(program), str(cut))
    assert str(error).startswith(f"{cut}:2:9: data error: not valid JSON") and "groups.arp" not in str(error)
    assert '"J": 2 "g"' in str(error)  # the data file's line, with a caret under the fault
    missing = tmp_path / "nope.json"
    assert str(_error(str(program), str(missing))) == f"{missing}: data error: data file not found"
    assert "is a folder" in str(_error(str(program), str(tmp_path)))
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"N": "é"}'.encode("latin-1"))
    assert str(_error(str(program), str(latin))).startswith(f"{latin}: data error: the data file is not UTF-8")
    assert "not list" in str(_error(str(program), ["N", 3]))
    repeated = tmp_path / "repeated.json"
    repeated.write_text('{"N": 3, "J": 2, "g": [1, 2, 2], "y": [0.1, 0.2, 0.3], "J": 1}')
    assert str(_error(str(program), str(repeated))) == (
        f"{repeated}: data error: the data file gives field 'J' twice; JSON keeps only the last, so remove the one "
        "you do not mean")


@pytest.mark.parametrize("source,says", [
    (None, "not NoneType"), (b"mu ~ normal(0, 1)\n", "not bytes; decode it first"), (3, "not int"),
])
def test_a_program_that_is_neither_text_nor_a_path_is_refused_by_type(source, says):
    error = _error(source)
    assert error.kind == "syntax" and "the program must be its text (a str) or the path of a .arp file" in str(error)
    assert says in str(error)


def test_a_program_path_without_the_arp_suffix_is_refused(tmp_path):
    from pathlib import Path

    program = tmp_path / "groups.txt"
    program.write_text(GROUPS)
    assert "must end in .arp" in str(_error(Path(program), GOOD_DATA))
    assert "must end in .arp" in str(_error(str(program), GOOD_DATA))  # a str naming it, too
    assert _error("x" * 5000 + ".arp2").kind == "syntax"  # a name too long for the file system is text


def test_a_program_file_that_is_not_utf8_names_the_file(tmp_path):
    latin = tmp_path / "latin.arp"
    latin.write_bytes("mu ~ normal(0, 1) # café\n".encode("latin-1"))
    assert str(_error(str(latin))).startswith(f"{latin}: syntax error: the program file is not UTF-8 text")


@pytest.mark.skipif(jnp.result_type(float) != jnp.float32, reason="float64 holds 1e39")
def test_real_data_beyond_float32_is_refused_rather_than_made_inf():
    error = _error("data x: real\nmu ~ normal(x, 1)\n", {"x": 1e39})
    assert error.kind == "data" and "'x' holds 1e+39, beyond the numbers" in str(error)


@pytest.mark.parametrize("text,data,line,message", [
    ("mu ~ normal(0, -5)\n", None, 1, "normal's parameters are invalid at site 'mu' (Normal distribution got invalid "
     "scale parameter.); its scale comes from constants and data alone"),
    ("mu ~ normal(0, 1)\nx ~ exponential(0)\n", None, 2, "exponential's parameters are invalid at site 'x'"),
    ("mu ~ normal(0, 1/0)\n", None, 1, "normal's scale is infinite or NaN here"),
    ("data J: int\ndata s: real[J]\nmu ~ normal(0, 1)\nfor (j in 1 .. J)\n  t[j] ~ normal(mu, s[j])\n",
     {"J": 2, "s": [1.0, 0.0]}, 5, "normal's parameters are invalid at site 't[2]' (Normal distribution got invalid "
     "scale parameter.); its scale comes from constants and data alone"),  # not the latent mu's fault (review)
])
def test_a_parameter_out_of_its_domain_names_the_statement_when_the_model_runs(text, data, line, message):
    import numpyro

    # No errstate here: 1/0 among the constants must give our error alone, not NumPy's warning first
    # (pytest turns that warning into a failure).
    model, args, kwargs = compile_program(text, data)
    with pytest.raises(ProgramError) as info:
        numpyro.handlers.seed(model, 0)(*args, **kwargs)
    assert info.value.kind == "value" and info.value.pos.line == line and message in str(info.value)
    assert str(info.value).startswith(f"<program>:{line}:") and "^" in str(info.value)


def test_a_scale_fed_by_a_latent_is_told_to_give_that_latent_a_prior_on_its_domain():
    import autoreparam as ar

    model, args, kwargs = compile_program("s ~ normal(-3, 0.1)\nx ~ normal(0, s)\n")
    with pytest.raises(ProgramError, match=r"<program>:2:1: value error: .*a latent feeds its scale: give that latent a prior.*half_normal"):
        ar.infer(model, *args, method="cp", kernel="nuts", num_chains=2, num_warmup=20, num_samples=20,
                 progress=False, **kwargs)


def test_a_loop_too_large_for_memory_is_named_before_anything_is_allocated():
    text = "data J: int\nmu ~ normal(0, 1)\nfor (j in 1 .. J)\n  t[j] ~ normal(mu, 1)\n"
    error = _error(text, {"J": 10**9})  # beyond 2**31 - 1 a size is refused as data already (it would wrap in JAX)
    assert error.kind == "shape" and error.pos.line == 3 and "1,000,000,000 elements" in str(error)


def test_a_latent_scale_that_overflows_the_float_type_is_told_so_not_to_change_its_prior():
    import numpyro

    # exp(1000 s) for any s drawn from the prior is inf or 0 in float32 and float64 alike
    model, args, kwargs = compile_program("s ~ normal(0, 1)\nx ~ normal(0, exp(1000 * s))\n")
    with pytest.raises(ProgramError) as info:
        numpyro.handlers.seed(model, 0)(*args, **kwargs)
    assert "a latent feeds its scale, and here it is not finite, or 0 after underflowing" in str(info.value)
    assert info.value.pos.line == 2


def test_a_uniform_bounded_by_a_latent_is_refused_naming_the_site_and_that_latent():
    """The program form of ``x ~ Uniform(0, s)``: it gave a bare UnexpectedTracerError, then site
    analysis's SiteError with NumPyro advice (found in review); now the compiler refuses it at its line."""
    error = _error("s ~ half_normal(0, 1)\nx ~ uniform(0, s)\n")
    assert error.kind == "type" and error.pos.line == 2
    assert "latent 'x' ~ uniform: its high depends on a latent" in str(error)
    assert "`u ~ uniform(0, 1)` then `x = s * u`" in str(error)
