"""Argument types for the command lines: a bad number is argparse's one-line error, exit status 2,
before anything runs (not a traceback from deep inside, nor a run that does nothing)."""

from __future__ import annotations

import argparse
import math


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def count(text: str) -> int:
    """A positive integer (chains, draws, replications, workers, a chunk size)."""
    value = _integer(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def natural(text: str) -> int:
    """A non-negative integer (a seed, a number of programs that may be 0)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def acceptance(text: str) -> float:
    """A target acceptance probability, strictly between 0 and 1 (e.g. 0.95 against divergences)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text!r}")
    return value


def minutes(text: str) -> float:
    """A positive, finite number of minutes (a deadline): -5 ran nothing and NaN never stopped (found in review)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of minutes, got {text!r}") from None
    if not (value > 0.0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number of minutes, got {text!r}")
    return value


def naturals(text: str) -> tuple[int, ...]:
    """Comma-separated non-negative integers, e.g. seeds ``0,1,2`` (``,`` named none and ran nothing)."""
    values = tuple(natural(part) for part in text.split(",") if part.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"names no number, got {text!r}: give integers separated by commas")
    return values


def counts(text: str) -> tuple[int, ...]:
    """Comma-separated positive integers, e.g. an L grid ``1,2,4,8``."""
    values = tuple(count(part) for part in text.split(",") if part.strip())
    if not values:
        raise argparse.ArgumentTypeError(f"names no number, got {text!r}: give positive integers separated by commas")
    return values


def title_and_folder(text: str) -> tuple[str, str]:
    """``TITLE=DIR``, e.g. ``"H200 run=benchmarks/results/gpu_h200_german_credit"``."""
    title, equals, folder = text.partition("=")
    if not equals or not title.strip() or not folder.strip():
        raise argparse.ArgumentTypeError(f"must be TITLE=DIR (a section title, '=', a results folder), got {text!r}")
    return title.strip(), folder.strip()


def sites(text: str):
    """``default``, ``all`` or comma-separated site names; an empty list (``--sites ''``) would rewrite
    nothing, which ``run --method cp`` says plainly, so it is refused."""
    if text in ("default", "all"):
        return text
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"names no site, got {text!r}: give 'default', 'all' or site names "
                                         "separated by commas (to rewrite nothing: `run --method cp`)")
    return names
