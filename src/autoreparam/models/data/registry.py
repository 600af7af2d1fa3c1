"""The data files autoreparam knows: relative path, sha256 and public URLs.

The hashes are those recorded in each data folder's SOURCE.md. A file is only ever read after its
hash has been checked, so a parsed array always comes from exactly the bytes the hash names.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoreparam.errors import ArgumentError

# Snapshot of stan-dev/example-models that SOURCE.md names for the ARM files.
_STAN = "https://raw.githubusercontent.com/stan-dev/example-models/2847a61097354785ceda9fba40c7f761d6664491/ARM/"
# The copies the original autoreparam code read from Oct 2019 on (radon: LF line endings, which is
# what the hashes are of; the stat.columbia.edu and stan-dev copies have CRLF and other hashes).
_AUTOREPARAM = "https://raw.githubusercontent.com/mgorinova/autoreparam/4d6938c322ea975d7db71fd3f09950e5c905330e/data/"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/statlog/german/german.data"


@dataclass(frozen=True)
class FileSpec:
    """One data file: where it sits under the data folder, its sha256, and where to fetch it.

    ``urls[0]`` is the canonical source; later entries are mirrors tried in order by `download`
    (the hash decides whether a mirror's copy is acceptable).
    """

    relpath: str
    sha256: str
    urls: tuple[str, ...]

    @property
    def url(self) -> str:
        return self.urls[0]


FILES: dict[str, FileSpec] = {
    "eight_schools": FileSpec(
        "eight_schools/schools.data.json",
        "eb6fd71bef76cfcb258936a5926bf6033a7c42be3ce41b6cf9798609a65c4692",
        (_STAN + "Ch.19/schools.data.json",),
    ),
    "radon_srrs2": FileSpec(
        "radon/srrs2.dat",
        "4af66006f186bf84495bfe544b543b862e77f1f206b2f09534d65c5565a1ee86",
        (_AUTOREPARAM + "srrs2.dat",),
    ),
    "radon_cty": FileSpec(
        "radon/cty.dat",
        "b709ee016f57e0c9141f1441bc6d4ae527b283ac06ed612f0849818ecd14061b",
        (_AUTOREPARAM + "cty.dat",),
    ),
    "german_credit": FileSpec(
        "german_credit/german.data",
        "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
        # The hashed copy is the one in the authors' repository; the UCI server's copy was never
        # compared byte for byte (SOURCE.md), so it is only a fallback that the hash must accept.
        (_AUTOREPARAM + "german.data", _UCI),
    ),
    "election88": FileSpec(
        "election88/election88_full.data.json",
        "e218dab21ddbafaf0063a0cd1f600a5332c60b1307f4e22a38188314ff4a7138",
        (_STAN + "Ch.14/election88_full.data.json",),
    ),
    "electric": FileSpec(
        "electric/electric.data.json",
        "b8bfeb3044428c9fb99fc8119f2a4dad8b0aa7539586712541cc5644fa123c0f",
        (_STAN + "Ch.23/electric.data.json",),
    ),
}

# Data sets as users name them, each with the files it needs.
DATASETS: dict[str, tuple[str, ...]] = {
    "eight_schools": ("eight_schools",),
    "radon": ("radon_srrs2", "radon_cty"),
    "german_credit": ("german_credit",),
    "election88": ("election88",),
    "electric": ("electric",),
}


def files_for(name: str) -> tuple[str, ...]:
    """File names (keys of `FILES`) for a data set name, a file name, or ``"all"``."""
    if name == "all":
        return tuple(FILES)
    if name in DATASETS:
        return DATASETS[name]
    if name in FILES:
        return (name,)
    known = ", ".join(["all", *DATASETS, *(f for f in FILES if f not in DATASETS)])
    raise ArgumentError(f"unknown data set or file {name!r}; known: {known}")
