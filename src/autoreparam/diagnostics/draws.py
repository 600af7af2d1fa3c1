"""Validation and flattening of MCMC draws given as {site name: array (chains, draws, *shape)}.

Every diagnostic here works on scalar elements; this file names them ("theta[3]", "b[0,1]") and
hands out bounded chunks of them so that 200 chains x 50,000 draws x 200 elements never need to be
copied whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from autoreparam.errors import ArgumentError, DataError


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class Draws:
    """Validated draws: per site a (chains, draws, elements) view, plus element names.

    Attributes:
        sites: site name -> array (chains, draws, num_elements) (a view of the input when possible).
        shapes: site name -> the per-draw shape of that site.
        element_names: names of all scalar elements, site by site, in C order.
    """

    sites: dict[str, np.ndarray]
    shapes: dict[str, tuple[int, ...]]
    element_names: tuple[str, ...]

    @property
    def num_chains(self) -> int:
        return next(iter(self.sites.values())).shape[0]

    @property
    def num_draws(self) -> int:
        return next(iter(self.sites.values())).shape[1]

    @property
    def num_elements(self) -> int:
        return len(self.element_names)


def as_draws(draws: Mapping, *, min_draws: int = 2) -> Draws:
    """Check a {name: (chains, draws, *shape)} mapping and flatten each site's element axes."""
    if not isinstance(draws, Mapping) or not draws:
        raise ArgumentError(
            "draws must be a non-empty mapping {site name: array (chains, draws, ...)}"
        )
    sites, shapes, names, leading = {}, {}, [], None
    for name, value in draws.items():
        array = np.asarray(value)
        if array.ndim < 2:
            raise ArgumentError(
                f"site '{name}': draws must have shape (chains, draws, ...), got {array.shape}"
            )
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise ArgumentError(
                f"site '{name}': draws must be real numbers, got dtype {array.dtype}"
            )
        if leading is None:
            leading = array.shape[:2]
        elif array.shape[:2] != leading:
            raise ArgumentError(
                f"site '{name}': (chains, draws) = {array.shape[:2]} differs from {leading}"
            )
        shape = array.shape[2:]
        sites[str(name)] = array.reshape(array.shape[0], array.shape[1], -1)
        shapes[str(name)] = shape
        names.extend(element_names(str(name), shape))
    if leading[0] < 1 or leading[1] < min_draws:
        raise ArgumentError(f"need at least 1 chain and {min_draws} draws, got {leading}")
    if len(names) == 0:
        raise ArgumentError("draws hold no scalar element (every site has a zero-sized shape)")
    return Draws(sites=sites, shapes=shapes, element_names=tuple(names))


def element_names(site: str, shape: tuple[int, ...]) -> list[str]:
    """'site' for a scalar site, 'site[i,j]' for the elements of an array site, in C order."""
    if shape == ():
        return [site]
    return [f"{site}[{','.join(map(str, index))}]" for index in np.ndindex(*shape)]


@dataclass(frozen=True, eq=False)  # holds arrays: no element-wise ==
class Block:
    """Some chains and some elements of the draws, as float64 (a view if they already were).

    Consumers must not write into `values`: it may be the caller's own array.

    Attributes:
        chains: which chains (a slice of the chain axis).
        elements: which elements (a slice of the global element index, see `Draws.element_names`).
        values: array (chains in block, draws, elements in block), float64.
    """

    chains: slice
    elements: slice
    values: np.ndarray


def blocks(draws: Draws, max_values: int) -> Iterator[Block]:
    """Yield the draws in float64 blocks of about `max_values` numbers (at least one series).

    Blocks take whole chains with all of a site's elements when they fit, because draws are stored
    (chains, draws, elements) and a chain is then one contiguous read; a site too large for that is
    split by elements within a chain. Raises DataError on NaN or infinite draws.
    """
    offset = 0
    n = draws.num_draws
    for name, site in draws.sites.items():
        num_chains, _, size = site.shape
        if size == 0:
            continue
        if n * size <= max_values:
            chain_step, element_step = max(1, max_values // (n * size)), size
        else:
            chain_step, element_step = 1, max(1, max_values // n)
        for c0 in range(0, num_chains, chain_step):
            for e0 in range(0, size, element_step):
                chains, local = slice(c0, c0 + chain_step), slice(e0, e0 + element_step)
                values = np.asarray(site[chains, :, local], dtype=np.float64)
                if not np.all(np.isfinite(values)):
                    raise DataError(f"site '{name}': draws contain NaN or infinite values")
                elements = slice(offset + e0, offset + e0 + values.shape[2])
                chains = slice(c0, c0 + values.shape[0])
                yield Block(chains=chains, elements=elements, values=values)
        offset += size
