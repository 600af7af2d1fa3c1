"""Checks at the boundary between a user's model and autoreparam.

Bad input must fail here, early, with an error that names the argument or site and says what to do,
rather than deep inside JAX or NumPyro with an unrelated message, or not at all with NaN draws. Each
check is a small pure function; the entry points (``infer``, ``fit_vip``), site analysis and the
choice of initial values call them.
"""

from __future__ import annotations

import inspect
import numbers
import os
import re
import traceback
import warnings
from pathlib import Path
from typing import Callable

import jax
import numpy as np
import numpyro.distributions as dist
from numpyro.distributions import constraints
from numpyro.infer.util import log_density

from autoreparam.errors import ArgumentError, AutoreparamError, CompilationWarning, DataError, ModelError, SiteError

# Latent sample sites beyond which a model is almost surely a Python loop unrolled into the trace.
# Compiling grows faster than linearly with the unrolled program: issue 9's stochastic volatility
# model as a loop compiled our NUTS program in 34 s with 2.8 GB at 40 sites, and not within 21 GB at
# 100 (benchmarks/results/loop_model_compile/). Our language's generated series reach 61 sites.
MANY_SITES = 64


MAX_SEED = 2**32


def check_call(model, model_args: tuple, model_kwargs: dict, seed,
               entry: Callable | None = None) -> tuple[tuple, dict, int]:
    """Check what an entry point was given; return the model's arguments with lists of numbers as arrays,
    and the seed as a Python int (NumPyro's seed handler refuses a NumPy integer).

    A list of numbers is data: NumPyro distributions and JAX arithmetic take arrays, not lists
    (``[1.0, 2.0] - tracer`` is a TypeError deep inside a trace). Lists of anything else are left
    alone, as are tuples (often shapes). ``entry``: the calling entry point (``infer``, ...), whose own
    keywords a model parameter must not share (``check_keyword_names``).
    """
    check_model(model)
    if entry is not None:
        check_keyword_names(model, model_args, entry)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        # Negative seeds would fail late, inside NumPy's random generator, after compiling.
        raise ArgumentError(f"seed must be a non-negative integer, got {seed!r} ({type(seed).__name__})")
    if seed >= MAX_SEED:
        # JAX's keys take 32 bits without x64 (2**32 gave the draws of seed 0), and NumPyro's seed handler
        # a C long: larger seeds failed as an error about the model (found in review).
        raise ArgumentError(f"seed must be below 2**32 = {MAX_SEED}, got {seed}")
    args = tuple(_as_array(value) for value in model_args)
    kwargs = {name: _as_array(value) for name, value in model_kwargs.items()}
    return args, kwargs, int(seed)


def check_keyword_names(model, model_args: tuple, entry: Callable) -> None:
    """A model parameter named like one of ``entry``'s own keywords (``seed``, ``method``, ``sites``, ...)
    and not given positionally can never reach the model by keyword: ``infer(model, y, seed=3)`` gives
    infer its seed. Without a default the model then failed with a bare "missing argument"; with one,
    the value meant for the model went silently to ``entry`` (found in review). Refuse the first and
    warn of the second, naming the parameter and how to pass it."""
    try:
        signature = inspect.signature(model)
        bound = signature.bind_partial(*model_args).arguments
    except (TypeError, ValueError):  # no signature (some builtins) or too many arguments: the call says so
        return
    reserved = {name for name, p in inspect.signature(entry).parameters.items() if p.kind is p.KEYWORD_ONLY}
    name_of_entry = entry.__name__
    for name, parameter in signature.parameters.items():
        if name in bound or name not in reserved or parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD,
                                                                               parameter.KEYWORD_ONLY):
            continue
        how = (f"bind it first, functools.partial(model, {name}=...), or rename it" if
               parameter.kind is parameter.KEYWORD_ONLY else
               f"pass it positionally after the model's earlier arguments, bind it first with "
               f"functools.partial(model, {name}=...), or rename it")
        clash = (f"the model's parameter '{name}' has the name of {name_of_entry}'s own keyword {name}=, so "
                 f"{name_of_entry} takes {name}=... for itself and the model never receives it")
        if parameter.default is parameter.empty:
            raise ArgumentError(f"{clash}: {how}")
        warnings.warn(f"{clash}; it keeps its default {_short(parameter.default)}. To set it, {how}",
                      UserWarning, stacklevel=4)


# The diagnostics' ``diagnostics.standard.MIN_DRAWS`` (not imported: site analysis imports this module,
# and the diagnostics sit above it; a test checks that the two agree).
MIN_SAMPLES = 4


def check_counts(num_chains, num_warmup, num_samples, num_leapfrog) -> None:
    """Chains, warm-up and draws are positive integers; L is one too, or "oracle"."""
    for name, value in (("num_chains", num_chains), ("num_warmup", num_warmup), ("num_samples", num_samples)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
            raise ArgumentError(f"{name} must be a positive integer, got {value!r}")
    if num_samples < MIN_SAMPLES:
        # Fewer draws failed in the diagnostics after sampling, without naming num_samples (found in review).
        raise ArgumentError(f"num_samples must be at least {MIN_SAMPLES} (R-hat and ESS need that many draws per "
                            f"chain), got {num_samples}")
    if num_leapfrog != "oracle" and (not isinstance(num_leapfrog, (int, np.integer)) or isinstance(num_leapfrog, bool)
                                     or num_leapfrog <= 0):
        raise ArgumentError(f"num_leapfrog must be a positive integer or 'oracle', got {num_leapfrog!r}")


def check_hmc_options(kernel: str, num_leapfrog, step_size_rule: str, oracle_metric: str) -> None:
    """Options of fixed-length HMC, refused on the command line under NUTS: there they did nothing,
    without a word (``run --leapfrog 8`` with the default ``auto``, ``compare --paper`` with its default
    NUTS; found in review). ``infer`` and ``compare`` themselves accept them with any kernel (a
    caller's settings shared across methods) and use them only with HMC."""
    if kernel != "nuts":
        return
    given = [text for text, default in ((f"num_leapfrog={num_leapfrog!r}", num_leapfrog == "oracle"),
                                        (f"step_size_rule={step_size_rule!r}", step_size_rule == "window"),
                                        (f"oracle_metric={oracle_metric!r}", oracle_metric == "pooled"))
             if not default]
    if given:
        raise ArgumentError(f"{', '.join(given)} configure fixed-length HMC, but the kernel is NUTS, which chooses its "
                            "own trajectory lengths and tunes its step size by Stan's window adaptation: use "
                            "kernel='hmc' (on the command line --kernel hmc), or drop them")


def check_target_accept(target_accept) -> None:
    """None (the default, 0.8) or a number strictly between 0 and 1."""
    if target_accept is None:
        return
    if not isinstance(target_accept, numbers.Real) or isinstance(target_accept, bool):
        raise ArgumentError(f"target_accept must be a number in (0, 1), got {type(target_accept).__name__} "
                            f"{target_accept!r}")
    if not 0.0 < float(target_accept) < 1.0:
        raise ArgumentError(f"target_accept must lie in (0, 1), got {target_accept!r}")


def warn_if_unrolled(site_names, stacklevel: int = 3) -> None:
    """Warn, before anything compiles, that a model with very many latent sites will compile slowly."""
    if len(site_names) <= MANY_SITES:
        return
    shown = ", ".join(site_names[:3])
    warnings.warn(
        f"the model has {len(site_names)} latent sample sites ({shown}, ...): a Python loop that samples a "
        "site per step is unrolled into every compiled program, and compiling grows faster than linearly "
        "with it (a 100-step loop did not compile within 21 GB of memory). Write the loop with "
        "numpyro.contrib.control_flow.scan (its sites are reparameterised step by step) or vectorise it "
        "under numpyro.plate. (A program in autoreparam's language unrolls a loop that reads its own earlier "
        "elements the same way: write a long series in NumPyro with scan.)",
        CompilationWarning,
        stacklevel=stacklevel,
    )


def check_model(model) -> None:
    if not callable(model):
        raise ArgumentError(
            f"model must be a NumPyro model: a callable that calls numpyro.sample, got "
            f"{type(model).__name__} {_short(model)}. Pass the function itself, e.g. infer(my_model, data)"
        )


def _as_array(value):
    if not isinstance(value, list):
        return value
    try:
        array = np.asarray(value)
    except ValueError:  # ragged nested lists
        return value
    return array if array.dtype.kind in "biuf" else value


def _short(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def model_failure(model: Callable, error: Exception, last_site: str | None = None,
                  cause: str | None = None) -> ModelError:
    """The error for a model that raised while autoreparam ran it; ``last_site``: the last site it reached;
    ``cause``: the advice when the caller knows better where the fault lies (e.g. a user's init values)."""
    if isinstance(error, AutoreparamError):
        return error
    text = str(error) or "(no message)"
    hint = "fix the model or the arguments given to it"
    if cause:
        hint = cause
    elif "size of plate should be positive" in text:
        hint = "a plate of size 0 (e.g. an empty data set) is not allowed: pass at least one observation"
    elif isinstance(error, jax.errors.TracerArrayConversionError) and _raised_in(error, "numpyro/distributions/constraints"):
        hint = (
            "an observed value given as a NumPy array or Python number meets a support whose bounds depend on a "
            "latent (e.g. Uniform(0, theta)); NumPyro checks that only for JAX arrays: pass obs=jnp.asarray(...)"
        )
    elif isinstance(error, jax.errors.JAXTypeError) or "Tracer" in type(error).__name__:
        hint = (
            "the model turns a latent value into a Python or NumPy value (float(x), np.asarray(x), `if x > 0`), "
            "which compiled inference cannot do: use jax.numpy and jax.lax.cond / jnp.where instead"
        )
    elif isinstance(error, TypeError) and re.search(_SIGNATURE_MISMATCH, text):
        hint = "autoreparam passes *model_args and **model_kwargs to the model unchanged: check they match its signature"
    elif re.search(r"distribution got invalid \w+ parameter", text):
        hint = (
            "a distribution's parameter is outside its domain (e.g. a scale <= 0): if it is a latent, give it a prior "
            "on its domain (HalfNormal, LogNormal, or exp() of a real latent); if it comes from the data or a "
            "constant, check those"
        )
    elif isinstance(error, NotImplementedError):
        hint = "a distribution in the model cannot be sampled or evaluated; see README 'Supported models'"
    elif isinstance(error, IndexError) and "with size 0" in text and _raised_in(error, "control_flow/scan", anywhere=True):
        hint = (
            "a numpyro.contrib.control_flow.scan over zero steps (an empty series): NumPyro's scan cannot take "
            "the substituted values inference gives its sites; skip the scan when the series is empty"
        )
    elif "does not support observe statements" in text:
        hint = (
            "a NumPyro reparam handler was handed a site that already has a value; a handler placed around a "
            "model meets the sites of a scan body only after the scan, with their values: give autoreparam "
            "the centred model (it rewrites scan bodies itself) or put the handler inside the scan body"
        )
    name = getattr(model, "__name__", type(model).__name__)
    where = f" after its site '{last_site}'" if last_site else ""
    return ModelError(f"the model {name}() raised {type(error).__name__}{where}: {text} ({hint})")


def _raised_in(error: Exception, path_part: str, anywhere: bool = False) -> bool:
    """Whether the error was raised in (``anywhere``: passed through) a file whose path contains ``path_part``."""
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    return any(path_part in f.filename.replace("\\", "/") for f in (frames if anywhere else frames[-1:]))


_SIGNATURE_MISMATCH = r"required (positional|keyword-only) argument|unexpected keyword argument|positional arguments? but"


def check_observed_site(name: str, msg: dict) -> None:
    """An observed value must broadcast with its distribution's shape and lie in its support (unless masked)."""
    value, fn = msg["value"], msg["fn"]
    if isinstance(value, jax.core.Tracer):
        return
    value = np.asarray(value)
    try:
        np.broadcast_shapes(value.shape, fn.shape())
    except ValueError:
        raise SiteError(
            name,
            f"the observed value has shape {value.shape}, which does not broadcast with the distribution's "
            f"shape {fn.shape()} (batch {fn.batch_shape}, event {fn.event_shape}): check the data passed for "
            "this site and the sizes of the plates around it",
        ) from None
    if not _parameter_free(fn.support):
        # A support that depends on parameters (Uniform(0, theta)) may hold the data for other values
        # of the latents; the log density at the initial values decides (`nonfinite_site`).
        return
    inside = np.asarray(fn.support(value))
    if msg.get("mask") is not None and not isinstance(msg["mask"], jax.core.Tracer):
        try:
            inside = inside | ~np.broadcast_to(np.asarray(msg["mask"], dtype=bool), inside.shape)
        except ValueError:
            pass  # a mask that does not broadcast is NumPyro's to report
    if not np.all(inside):
        event_dims = len(fn.event_shape)
        leading = value.shape[: value.ndim - event_dims]
        bad = value[~np.broadcast_to(inside, leading)] if inside.shape == leading or inside.ndim == 0 else value
        raise DataError(
            f"observed site '{name}': {int(np.sum(~inside))} value(s) outside the support of "
            f"{type(fn).__name__} ({fn.support}), e.g. {_short(np.ravel(bad)[:3].tolist())}: "
            "fix the data or choose a distribution whose support contains them"
        )


def _parameter_free(constraint) -> bool:
    """True for supports fixed by the family alone (real, positive, nonnegative_integer, simplex, ...)."""
    while isinstance(constraint, constraints.independent):
        constraint = constraint.base_constraint
    return any(constraint is singleton for singleton in _SINGLETON_CONSTRAINTS)


_SINGLETON_CONSTRAINTS = tuple(
    c for c in vars(constraints).values() if isinstance(c, constraints.Constraint) and c is not constraints.dependent
)


def nonfinite_site(model: Callable, model_args: tuple, model_kwargs: dict, values: dict,
                   cause: str | None = None) -> tuple[str, str] | None:
    """``(site, explanation)`` for the first site whose log density is not finite at the latent ``values``.

    None when the model's log density is finite there. Factors count as sites (NumPyro records
    ``numpyro.factor`` as an observed ``Unit`` site), so a NaN factor is named too. ``cause``: as for
    `model_failure`, if the model raises.
    """
    # NumPyro's validation stays as the samplers will see it: where it is on (the default), a value
    # outside a site's support gets log density -inf, which is what we are looking for.
    try:
        # Compiled, as every later stage is; the site-by-site search below runs only on failure.
        total = jax.jit(lambda latents: log_density(model, model_args, model_kwargs, latents)[0])(values)
        if np.isfinite(float(total)):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPyro's "out-of-support values" warning: we say it better
            _, trace = log_density(model, model_args, model_kwargs, values)
            return _first_nonfinite_site(trace, total)
    except Exception as error:  # noqa: BLE001 - re-raised as an autoreparam error naming the model
        raise model_failure(model, error, cause=cause) from error


def _first_nonfinite_site(trace, total) -> tuple[str, str]:
    for name, site in trace.items():
        if site["type"] != "sample":
            continue
        log_prob = np.asarray(site["fn"].log_prob(site["value"]))
        if site.get("mask") is not None:
            log_prob = np.where(np.asarray(site["mask"]), log_prob, 0.0)
        site_total = float(np.sum(log_prob))
        if np.isfinite(site_total):
            continue
        kind = "factor" if isinstance(site["fn"], dist.Unit) else "observed" if site["is_observed"] else "latent"
        if site_total == np.inf:
            # Said as such: the advice below speaks of NaN and -inf (a +inf factor read "NaN or -inf"; found
            # in review).
            return name, (f"{kind} site with log density +inf at the initial values: the density is unbounded "
                          "there (e.g. a term that divides by zero), and no sampler can leave such a point: make "
                          "the term finite wherever the latents are valid")
        return name, f"{kind} site with log density {site_total} at the initial values; {_ADVICE[kind]}"
    return "<model>", f"the total log density is {float(total)} at the initial values, though every site's is finite"


_ADVICE = {
    "factor": "the numpyro.factor term is NaN or -inf there: make it finite wherever the latents are valid",
    "observed": "the data are impossible, or the likelihood is NaN, at those latent values: check the data and "
    "this site's distribution parameters",
    "latent": "its prior density is not finite at the initial value: pass "
    "init_strategy=numpyro.infer.init_to_value(values={...}) with a value inside the support",
}


def output_folder(path: str | os.PathLike, flag: str = "--out") -> Path:
    """``path`` as a folder that exists, made if needed, before any work: an ``--out`` that is a file
    failed as a bare OSError, for ``bench`` only after its first fits (found in review)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ArgumentError(f"{flag} {path} is a file; give a folder (it is made if it does not exist)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ArgumentError(f"{flag} {path} cannot be made ({error.strerror}); give a folder you can write") from None
    return path


def refuse_nonfinite_draws(samples: dict, structure) -> None:
    """A ``SiteError`` naming the first site whose draws reached NaN or infinity, and the likely causes.

    The diagnostics refused them with "draws contain NaN or infinite values", filed as a data error
    and with nothing to do (found in review: ``ImproperUniform`` with no data, whose chains ran off to
    float32's limit). ``structure``: the model's ``ModelStructure``; ``samples``: site -> draws.
    """
    masked = {s.name: s.without_density for s in structure.latents if s.without_density is not None}
    for name, values in samples.items():
        bad = ~np.isfinite(np.asarray(values))
        if name in masked:  # elements outside the density (obs_mask) mean nothing, as in the diagnostics
            bad &= ~np.broadcast_to(masked[name], bad.shape)
        if not np.any(bad):
            continue
        flat = [s.name for s in structure.latents if s.distribution == "ImproperUniform"]
        improper = "the posterior is improper"
        if flat:
            improper += f" ({', '.join(flat)}: a flat ImproperUniform prior"
            improper += ", and no observed site to bound it)" if not structure.observed else ")"
        raise SiteError(name, f"{int(bad.sum())} of its {bad.size} drawn values are NaN or infinite: the chains ran "
                        f"off to infinity. Likely {improper}, or the values overflow the float type (float32 unless "
                        "jax_enable_x64): give every latent a proper prior, or rescale the model")
