"""autoreparam: automatic reparameterisation of NumPyro models.

    import autoreparam as ar
    result = ar.infer(model, *model_args, method="auto", num_chains=4, seed=0, **model_kwargs)

Importing this package touches neither the file system nor the network.
"""

from autoreparam.coordinates import Coordinates
from autoreparam.errors import (
    ArgumentError,
    AutoreparamError,
    CompilationWarning,
    ConvergenceWarning,
    DataError,
    ModelError,
    SiteError,
    UnsupportedError,
)
from autoreparam.infer import infer
from autoreparam.meta.predict import predict_parameterisation
from autoreparam.reparam import (
    Parameterisation,
    analyse_model,
    centre,
    learnable_centring,
    noncentre,
    partially_centre,
    reparameterise,
    select_sites,
)
from autoreparam.vi.protocol import VIConfig
from autoreparam.vi.vip import fit_vip

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "AutoreparamError",
    "CompilationWarning",
    "ConvergenceWarning",
    "Coordinates",
    "DataError",
    "ModelError",
    "SiteError",
    "UnsupportedError",
    "Parameterisation",
    "VIConfig",
    "analyse_model",
    "centre",
    "fit_vip",
    "infer",
    "learnable_centring",
    "noncentre",
    "partially_centre",
    "predict_parameterisation",
    "reparameterise",
    "select_sites",
]
