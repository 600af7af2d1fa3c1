"""Exceptions raised by autoreparam.

Every error names the site, file or argument at fault, so a user can act on it without a debugger.
"""


class AutoreparamError(Exception):
    """Base class of all autoreparam errors."""


class ModelError(AutoreparamError, ValueError):
    """The model cannot be handled as written (e.g. a discrete latent, no latent at all)."""


class SiteError(ModelError):
    """A problem with one sample site; the message names the site."""

    def __init__(self, site: str, message: str):
        self.site = site
        super().__init__(f"site '{site}': {message}")


class DataError(AutoreparamError, ValueError):
    """Data are missing, corrupt or contain non-finite values; the message names the file or site."""


class ArgumentError(AutoreparamError, ValueError):
    """An argument of an autoreparam function is out of range or of the wrong kind."""


class ConvergenceWarning(UserWarning):
    """A result whose R-hat, effective sample size or divergences make it untrustworthy as it is;
    the message says what is wrong and what to try (``InferenceResult.health`` has the details)."""

class CompilationWarning(UserWarning):
    """A model whose shape will make compiling its programs slow or memory-hungry; the message says
    why and how to write it instead."""


class UnsupportedError(ModelError):
    """The model uses something an analysis does not cover (a primitive, a distribution, a wrapper).

    ``what`` names it, e.g. ``"primitive 'cholesky'"``; the message also says what to do instead.
    """

    def __init__(self, what: str, message: str):
        self.what = what
        self.detail = message
        super().__init__(f"{what}: {message}")
