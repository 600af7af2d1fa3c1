"""Converting the 1-based group indices of the ARM/Stan data files.

The original autoreparam code fed these 1-based indices to ``tf.one_hot(index, n)``, which reads
them as 0-based and turns the out-of-range index ``n`` into a row of zeros: group 1 borrows the
effect of parameter 1 (0-based), ..., and the last group gets no effect at all, while parameter 0
is fitted to its prior only. ``quirks=True`` keeps the indices as they are so that the models'
zero-filling gather (`autoreparam.models.indexing.take_or_zero`) reproduces that.
"""

from __future__ import annotations

import numpy as np

from autoreparam.errors import DataError


def group_index(source: str, field: str, one_based: np.ndarray, size: int, *, quirks: bool) -> np.ndarray:
    """0-based int32 indices in ``[0, size)``, or with ``quirks`` the raw 1-based ones."""
    one_based = np.asarray(one_based)
    if one_based.size and (one_based.min() < 1 or one_based.max() > size):
        raise DataError(f"{source}: {field} must lie in 1..{size}, found {one_based.min()}..{one_based.max()}")
    return np.array(one_based if quirks else one_based - 1, dtype=np.int32)
