"""Loaders of the real data sets used by `autoreparam.models`.

Files are found under ``$AUTOREPARAM_DATA`` (or the ``data_dir`` argument), else under
``${XDG_CACHE_HOME:-~/.cache}/autoreparam/data`` where `download` puts them. Every file's sha256 is
checked against `FILES` before it is read; parsed arrays are cached in memory and on disk.
Importing this package reads no file.
"""

from autoreparam.models.data.cache import clear_memory_cache
from autoreparam.models.data.download import download
from autoreparam.models.data.eight_schools import (
    TREATMENT_EFFECTS,
    TREATMENT_STDDEVS,
    EightSchoolsData,
    eight_schools_data,
    load_eight_schools,
)
from autoreparam.models.data.election88 import Election88Data, load_election88
from autoreparam.models.data.electric import ElectricData, load_electric
from autoreparam.models.data.german_credit import GermanCreditData, load_german_credit
from autoreparam.models.data.paths import DATA_ENV_VAR, resolve_data_dir
from autoreparam.models.data.radon import STATES as RADON_STATES
from autoreparam.models.data.radon import RadonData, load_radon
from autoreparam.models.data.registry import DATASETS, FILES, FileSpec

__all__ = [
    "DATASETS",
    "DATA_ENV_VAR",
    "FILES",
    "RADON_STATES",
    "TREATMENT_EFFECTS",
    "TREATMENT_STDDEVS",
    "EightSchoolsData",
    "Election88Data",
    "ElectricData",
    "FileSpec",
    "GermanCreditData",
    "RadonData",
    "clear_memory_cache",
    "download",
    "eight_schools_data",
    "load_eight_schools",
    "load_election88",
    "load_electric",
    "load_german_credit",
    "load_radon",
    "resolve_data_dir",
]
