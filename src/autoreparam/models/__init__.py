"""The model zoo: the paper's models, centred, with their real data.

``load(name)`` gives a `Problem` (model, args, kwargs, notes); ``available()`` lists the names.
The models are plain NumPyro functions and can be used directly; `autoreparam.models.data` holds
the data loaders. Importing this package reads no file.
"""

from autoreparam.models.funnels import funnel_with_observation, neals_funnel
from autoreparam.models.gaussian import gaussian_section3, gaussian_section3_data, gaussian_section3_posterior
from autoreparam.models.hierarchical import eight_schools, election88, electric, radon, radon_stddvs
from autoreparam.models.problem import Problem
from autoreparam.models.registry import available, load
from autoreparam.models.regression import german_credit

__all__ = [
    "Problem",
    "available",
    "eight_schools",
    "election88",
    "electric",
    "funnel_with_observation",
    "gaussian_section3",
    "gaussian_section3_data",
    "gaussian_section3_posterior",
    "german_credit",
    "load",
    "neals_funnel",
    "radon",
    "radon_stddvs",
]
