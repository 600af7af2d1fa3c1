"""The distributions a program may name, their parameters and the NumPyro distribution each builds.

The location-scale and scale families are the ones `autoreparam.reparam.families` can partially
centre (normal, student_t, cauchy, laplace, logistic, gumbel, lognormal, half_normal, half_cauchy,
exponential); the others are for likelihoods and for priors left as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax.numpy as jnp
import numpyro.distributions as dist
from jax.scipy.special import gammaln


@dataclass(frozen=True)
class DistSpec:
    """``name(params...)``: ``build(*args)`` gives the NumPyro distribution; ``support`` its value type.

    ``int_params`` must be integers (a binomial's count). ``optional_zero_loc``: a half
    distribution may also be written with a leading location 0, as in the slides'
    ``halfCauchy(0, 5)``.
    """

    name: str
    params: tuple[str, ...]
    build: Callable[..., dist.Distribution]
    support: str = "real"  # "real" or "int"
    int_params: tuple[str, ...] = ()
    optional_zero_loc: bool = False
    # Observed values outside the support give a log density of -inf at every point, so the compiler
    # refuses them. ``domain``: (what the values must be, (values, {param: value}) -> mask of those
    # inside). The mask may need ``domain_params`` (a binomial's count), used only when they are data.
    domain: tuple[str, Callable] | None = None
    domain_params: tuple[str, ...] = ()
    # A rule among parameters that NumPyro does not validate (uniform's low < high: Uniform(1, 0) builds,
    # and its log density is log(-1) = NaN): (what it requires, {param: value} -> mask of valid elements).
    # Checked when the parameters it reads come from constants and data alone.
    param_rule: tuple[str, Callable] | None = None


class Poisson(dist.Poisson):
    """``poisson_log(log_rate)``: NumPyro's Poisson of rate exp(log_rate), its log probability computed
    from the log rate, y log_rate - exp(log_rate) - log y!. Through the rate, a log rate above
    log(float32 max) = 88.7 made the rate inf and the log density NaN (inf - inf; found in review);
    here it is -inf. Named ``Poisson`` so the graph (`autoreparam.graph`, by distribution name) and
    ``isinstance`` read it as NumPyro's."""

    def __init__(self, log_rate, *, validate_args=None):
        self.log_rate = log_rate
        super().__init__(jnp.exp(log_rate), validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return value * self.log_rate - jnp.exp(self.log_rate) - gammaln(value + 1)


_POSITIVE = ("positive values", lambda y, p: y > 0)
_NON_NEGATIVE = ("non-negative values", lambda y, p: y >= 0)
_BINARY = ("only 0 or 1", lambda y, p: (y == 0) | (y == 1))
_OPEN_UNIT = ("values strictly between 0 and 1", lambda y, p: (y > 0) & (y < 1))


def _specs() -> dict[str, DistSpec]:
    specs = [
        DistSpec("normal", ("loc", "scale"), dist.Normal),
        DistSpec("student_t", ("df", "loc", "scale"), dist.StudentT),
        DistSpec("cauchy", ("loc", "scale"), dist.Cauchy),
        DistSpec("laplace", ("loc", "scale"), dist.Laplace),
        DistSpec("logistic", ("loc", "scale"), dist.Logistic),
        DistSpec("gumbel", ("loc", "scale"), dist.Gumbel),
        DistSpec("lognormal", ("loc", "scale"), dist.LogNormal, domain=_POSITIVE),
        DistSpec("half_normal", ("scale",), dist.HalfNormal, optional_zero_loc=True, domain=_NON_NEGATIVE),
        DistSpec("half_cauchy", ("scale",), dist.HalfCauchy, optional_zero_loc=True, domain=_NON_NEGATIVE),
        DistSpec("exponential", ("rate",), dist.Exponential, domain=_NON_NEGATIVE),
        DistSpec("gamma", ("shape", "rate"), dist.Gamma, domain=_POSITIVE),
        DistSpec("beta", ("alpha", "beta"), dist.Beta, domain=_OPEN_UNIT),
        DistSpec("uniform", ("low", "high"), dist.Uniform, domain_params=("low", "high"),
                 domain=("values between low and high", lambda y, p: (y >= p["low"]) & (y <= p["high"])),
                 param_rule=("low below high", lambda p: p["low"] < p["high"])),
        DistSpec("bernoulli_logit", ("logit",), lambda logit: dist.Bernoulli(logits=logit), "int", domain=_BINARY),
        DistSpec("bernoulli", ("prob",), lambda prob: dist.Bernoulli(probs=prob), "int", domain=_BINARY),
        DistSpec("poisson_log", ("log_rate",), Poisson, "int", domain=_NON_NEGATIVE),
        DistSpec("poisson", ("rate",), dist.Poisson, "int", domain=_NON_NEGATIVE),
        DistSpec(
            "binomial_logit", ("count", "logit"),
            lambda count, logit: dist.Binomial(count, logits=logit), "int", int_params=("count",),
            domain=("values between 0 and the count", lambda y, p: (y >= 0) & (y <= p["count"])),
            domain_params=("count",),
        ),
    ]
    return {s.name: s for s in specs}


DISTRIBUTIONS: dict[str, DistSpec] = _specs()

# Other spellings people write (the slides' camelCase, Stan's names); the IR keeps what was written.
ALIASES = {
    "halfCauchy": "half_cauchy", "halfNormal": "half_normal", "studentT": "student_t",
    "logNormal": "lognormal", "bernoulliLogit": "bernoulli_logit", "poissonLog": "poisson_log",
    "binomialLogit": "binomial_logit", "double_exponential": "laplace",
}


def lookup(name: str) -> DistSpec | None:
    """The distribution called ``name`` (or one of its aliases), or None."""
    return DISTRIBUTIONS.get(ALIASES.get(name, name))


def known_names() -> list[str]:
    return sorted(DISTRIBUTIONS)
