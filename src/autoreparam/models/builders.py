"""Functions that pair each model with its data as a `Problem` (used by `registry.load`).

Each takes ``data_dir`` and ``quirks`` plus its own options, and says in ``data_note`` how the
data handling compares with the original code (mgorinova/autoreparam ``models.py``).
"""

from __future__ import annotations

import functools

from autoreparam.models import data as _data
from autoreparam.models.checks import check_count, check_interval, check_seed
from autoreparam.models.data.radon_quirks import count_misassigned_uranium
from autoreparam.models.funnels import FUNNEL_SIGMA_RANGE, FUNNEL_Y_RANGE
from autoreparam.models.funnels import funnel_with_observation as _funnel_obs_model
from autoreparam.models.funnels import neals_funnel as _neals_funnel_model
from autoreparam.models.gaussian import gaussian_section3 as _gaussian_model
from autoreparam.models.gaussian import gaussian_section3_data
from autoreparam.models.hierarchical import eight_schools as _eight_schools_model
from autoreparam.models.hierarchical import election88 as _election88_model
from autoreparam.models.hierarchical import electric as _electric_model
from autoreparam.models.hierarchical import radon as _radon_model
from autoreparam.models.hierarchical import radon_stddvs as _radon_stddvs_model
from autoreparam.models.problem import Problem
from autoreparam.models.regression import german_credit as _german_credit_model
from autoreparam.models import simulated as _simulated

_SAME = "Data as in the original code."
_NO_DATA = "Synthetic model without a data file; nothing differs from the original code."
_NO_QUIRK = " (quirks=True changes nothing here.)"


def eight_schools(*, data_dir=None, quirks=False) -> Problem:
    # The numbers live in code, as in the original, so this problem needs no data folder.
    d = _data.eight_schools_data()
    return Problem(
        "eight_schools", _eight_schools_model, (d.sigma,), {"y": d.y},
        "Eight schools (Rubin 1981): 8 school effects, 10 latent dimensions.", _SAME + _NO_QUIRK,
    )


def radon_builder(variant: str, state: str):
    """A builder of ``{variant}_{state}`` for the registry."""
    return functools.partial(_radon, variant, state)


def _radon(variant, state, *, data_dir=None, quirks=False, missing_floor="mean") -> Problem:
    d = _data.load_radon(state, data_dir, quirks=quirks, missing_floor=missing_floor)
    model = _radon_model if variant == "radon" else _radon_stddvs_model
    latent = d.num_counties * (1 if variant == "radon" else 2) + 3
    description = (
        f"Radon in {state} homes (ARM ch. 12): {d.num_houses} houses, {d.num_counties} counties, "
        f"{latent} latent dimensions" + (", per-county noise scale." if variant != "radon" else ".")
    )
    note = _radon_note(d, data_dir, quirks, missing_floor)
    return Problem(
        f"{variant}_{state.lower()}", model, (d.county, d.floor, d.log_uranium, d.num_counties),
        {"y": d.y}, description, note,
    )


def _radon_note(d, data_dir, quirks, missing_floor) -> str:
    if quirks:
        return ("Reproduces the original code's data handling, quirks included: counties keyed by name, "
                "uranium looked up by position (many counties get another county's value), Uppm 0 -> "
                "log uranium 0, floor code 9 ('missing') used as a number.")
    original = _data.load_radon(d.state, data_dir, quirks=True)
    wrong = count_misassigned_uranium(original, data_dir)
    parts = []
    if wrong:
        parts.append(f"each county has its own uranium (the original gave {wrong} of "
                     f"{original.num_counties} counties another county's value)")
    if original.num_counties != d.num_counties:
        parts.append(f"counties keyed by FIPS: {d.num_counties} counties, not {original.num_counties} "
                     "(the original made a county of the houses with a blank county name)")
    if d.uranium_missing.any():
        parts.append(f"{int(d.uranium_missing.sum())} county(ies) with Uppm 0 (no measurement) get the "
                     "state's mean log uranium (original: log uranium 0)")
    floor9 = int(original.floor_missing.sum())
    if floor9:
        handled = "dropped" if missing_floor == "drop" else "given the state's mean floor"
        parts.append(f"{floor9} house(s) with floor code 9 ('missing') {handled} (original: floor = 9)")
    if not parts:
        return ("Same data as the original code: for this state its uranium lookup happens to be right "
                "and no floor is coded 9.")
    return "Differs from the original code: " + "; ".join(parts) + "."


def german_credit(*, data_dir=None, quirks=False) -> Problem:
    d = _data.load_german_credit(data_dir)
    return Problem(
        "german_credit", _german_credit_model, (d.x,), {"y": d.y},
        f"German credit logistic regression: {d.x.shape[0]} loans, {d.num_features} features, "
        f"{2 * d.num_features + 1} latent dimensions.",
        _SAME + _NO_QUIRK,
    )


def election88(*, data_dir=None, quirks=False) -> Problem:
    d = _data.load_election88(data_dir, quirks=quirks)
    return Problem(
        "election88", _election88_model, (d.state, d.black, d.female, d.num_states), {"y": d.y},
        f"Election '88 poll (ARM ch. 14): {d.num_respondents} respondents, {d.num_states} states.",
        _index_note("state 51", quirks),
    )


def electric(*, data_dir=None, quirks=False) -> Problem:
    d = _data.load_electric(data_dir, quirks=quirks)
    return Problem(
        "electric", _electric_model,
        (d.pair, d.grade, d.grade_pair, d.treatment, d.num_pairs, d.num_grades), {"y": d.y},
        f"Electric Company (ARM ch. 23): {d.num_classrooms} classrooms, {d.num_pairs} pairs, "
        f"{d.num_grades} grades.",
        _index_note("pair 96 and grade 4", quirks),
    )


def _index_note(last: str, quirks: bool) -> str:
    if quirks:
        return (f"Reproduces the original code's quirk: 1-based indices used as 0-based, so {last} "
                "get(s) no effect.")
    return (f"Differs from the original code: indices converted to 0-based (the original used the "
            f"1-based indices as 0-based, so {last} got no effect).")


def neals_funnel(*, data_dir=None, quirks=False, dim=1) -> Problem:
    dim = check_count("dim", dim)  # dim=0 loaded and failed only when the model ran (found in review)
    return Problem(
        "neals_funnel", _neals_funnel_model, (), {"dim": dim},
        f"Neal's funnel: z ~ N(0, 3), {dim} x ~ N(0, exp(z/2)).", _NO_DATA,
    )


def funnel_with_observation(*, data_dir=None, quirks=False, y=0.0, sigma=1.0) -> Problem:
    # Check now rather than at the first run of the model.
    check_interval("y", y, *FUNNEL_Y_RANGE)
    check_interval("sigma", sigma, *FUNNEL_SIGMA_RANGE)
    return Problem(
        "funnel_with_observation", _funnel_obs_model, (), {"y": y, "sigma": sigma},
        f"Funnel observed through noise (meta-learning paper): y = {y}, sigma = {sigma}.", _NO_DATA,
    )


def gaussian_section3(*, data_dir=None, quirks=False, q=1.0, n=10, sigma_mu=1.0, seed=0) -> Problem:
    y, sigma = gaussian_section3_data(q, n, sigma_mu=sigma_mu, seed=seed)
    return Problem(
        "gaussian_section3", _gaussian_model, (), {"y": y, "sigma": sigma, "sigma_mu": sigma_mu},
        f"Gaussian model of Section 3 with known posterior: q = N / sigma^2 = {q}, N = {n}.", _NO_DATA,
    )


_SIMULATED = "Data simulated from the model by seed {seed} (no data file); nothing to compare with the paper."


def hierarchical_linear(*, data_dir=None, quirks=False, seed=0) -> Problem:
    seed = check_seed(seed)
    group, x, num_groups, y = _simulated.hierarchical_linear_data(seed)
    return Problem(
        "hierarchical_linear", _simulated.hierarchical_linear, (group, x, num_groups), {"y": y},
        f"Varying intercepts, common slope, half-normal scales: {len(y)} rows, {num_groups} groups, "
        f"{num_groups + 4} latent dimensions.", _SIMULATED.format(seed=int(seed)),
    )


def sparse_logistic(*, data_dir=None, quirks=False, seed=0) -> Problem:
    seed = check_seed(seed)
    features, y = _simulated.sparse_logistic_data(seed)
    return Problem(
        "sparse_logistic", _simulated.sparse_logistic, (features,), {"y": y},
        f"Logistic regression with Gamma local scales: {features.shape[0]} rows, {features.shape[1]} "
        f"features, {2 * features.shape[1] + 2} latent dimensions.", _SIMULATED.format(seed=int(seed)),
    )
