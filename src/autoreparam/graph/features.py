"""Scale-robust node features: every number enters as a sign and a clipped log-magnitude.

Rescaling the data by a factor c shifts log-magnitudes by log c instead of multiplying them, so a
network sees radon in Bq and in pCi on a comparable footing. Every column is documented in
``NODE_FEATURES`` (and in docs/graph.md); a column that does not apply to a node is 0.
"""

from __future__ import annotations

import numpy as np

from autoreparam.graph.builder import Node
from autoreparam.graph.types import LATENT_TYPES, SITE_TYPES, STATIC_TYPES, NodeType

LOG_CLIP = 30.0  # |log| is clipped here; log 0 counts as -LOG_CLIP


def log_abs(x) -> np.ndarray:
    """``log |x|`` clipped to ``[-LOG_CLIP, LOG_CLIP]``, with ``log 0 = -LOG_CLIP`` (no -inf, no NaN for 0)."""
    magnitude = np.abs(np.asarray(x, dtype=np.float64))
    with np.errstate(divide="ignore"):
        return np.clip(np.log(magnitude), -LOG_CLIP, LOG_CLIP)


NODE_FEATURES: tuple[tuple[str, str], ...] = (
    ("log_size", "log of the number of elements of the node's tensor (site value, primitive output, data)"),
    ("rank", "number of dimensions of that tensor larger than 1 (a size-1 axis is layout: broadcasting a "
             "scalar to shape (1,) changes no model)"),
    ("is_integer", "1 if the tensor has an integer dtype (indices, counts)"),
    ("is_boolean", "1 if the tensor is boolean (comparisons)"),
    ("mean_sign", "constant/data: sign of the mean"),
    ("mean_log_abs", "constant/data: log |mean|"),
    ("std_log", "constant/data: log of the standard deviation over elements (-30 for a constant)"),
    ("min_sign", "constant/data: sign of the minimum"),
    ("min_log_abs", "constant/data: log |minimum|"),
    ("max_sign", "constant/data: sign of the maximum"),
    ("max_log_abs", "constant/data: log |maximum|"),
    ("fraction_zero", "constant/data: fraction of elements equal to 0"),
    ("log_distinct_fraction", "constant/data: log(number of distinct values / number of elements)"),
    ("is_binary", "constant/data: 1 if every element is 0 or 1 (indicators, Bernoulli data)"),
    ("log_contraction", "primitive: log of the number of elements summed into one output element "
                        "(dot_general's contracted size, a reduction's reduced size, scan's length)"),
    ("exponent", "primitive: integer_pow's exponent (a small integer, not logged)"),
    ("index_summarised", "gather with static indices along one axis: 1, else 0 and the index columns are 0"),
    ("index_log_groups", "gather: log of the number of groups G (size of the gathered axis)"),
    ("index_log_min_count", "gather: log(1 + fewest reads of one group)"),
    ("index_log_mean_count", "gather: log(1 + mean reads per group)"),
    ("index_log_max_count", "gather: log(1 + most reads of one group)"),
    ("index_fraction_empty", "gather: fraction of groups never read"),
    ("index_fraction_out_of_range", "gather: fraction of indices outside [0, G) (filled, e.g. with 0)"),
    ("event_dim", "site: number of event dimensions"),
    ("log_likelihood_scale", "site: log of NumPyro's site scale (handlers.scale, subsampling); 0 if none"),
    ("probe_log_prior_scale_mean", "latent: mean over elements of the element probe log_prior_scale"),
    ("probe_log_abs_curvature_mean", "latent: mean over elements of the element probe log_abs_curvature"),
    ("probe_log_scale2_curvature_mean", "latent: mean over elements of the element probe log_scale2_curvature"),
    ("probe_log_scale2_curvature_std", "latent: its standard deviation over elements"),
)
NODE_FEATURE_NAMES: tuple[str, ...] = tuple(name for name, _ in NODE_FEATURES)


def _static_summary(value: np.ndarray) -> dict:
    flat = np.asarray(value, dtype=np.float64).reshape(-1)
    if flat.size == 0:
        return {}
    # Only constants can be non-finite here (``build._check_static_values``): -inf as a huge negative.
    flat = np.nan_to_num(flat, nan=0.0, posinf=1e300, neginf=-1e300)
    mean, low, high = flat.mean(), flat.min(), flat.max()
    distinct = np.unique(flat).size
    return {
        "mean_sign": np.sign(mean), "mean_log_abs": log_abs(mean), "std_log": log_abs(flat.std()),
        "min_sign": np.sign(low), "min_log_abs": log_abs(low),
        "max_sign": np.sign(high), "max_log_abs": log_abs(high),
        "fraction_zero": float(np.mean(flat == 0)),
        "log_distinct_fraction": float(np.log(distinct / flat.size)),
        "is_binary": float(np.all((flat == 0) | (flat == 1))),
    }


def _primitive_summary(attrs: dict) -> dict:
    row = {}
    if "contraction" in attrs:
        row["log_contraction"] = float(np.log(max(attrs["contraction"], 1)))
    if "exponent" in attrs:
        row["exponent"] = float(attrs["exponent"])
    if "counts" in attrs:
        counts, groups = attrs["counts"], attrs["groups"]
        row.update({
            "index_summarised": 1.0,
            "index_log_groups": float(np.log(max(groups, 1))),
            "index_log_min_count": float(np.log1p(counts.min())) if groups else 0.0,
            "index_log_mean_count": float(np.log1p(counts.mean())) if groups else 0.0,
            "index_log_max_count": float(np.log1p(counts.max())) if groups else 0.0,
            "index_fraction_empty": float(np.mean(counts == 0)) if groups else 0.0,
            "index_fraction_out_of_range": attrs["fraction_out_of_range"],
        })
    return row


def _probe_summary(elements: np.ndarray, names: tuple[str, ...]) -> dict:
    if elements.shape[0] == 0:
        return {}
    column = {name: elements[:, i] for i, name in enumerate(names)}
    ratio = column["log_scale2_curvature"]
    return {
        "probe_log_prior_scale_mean": float(column["log_prior_scale"].mean()),
        "probe_log_abs_curvature_mean": float(column["log_abs_curvature"].mean()),
        "probe_log_scale2_curvature_mean": float(ratio.mean()),
        "probe_log_scale2_curvature_std": float(ratio.std()),
    }


def node_feature_matrix(nodes: list[Node], element_features: dict[int, np.ndarray],
                        element_feature_names: tuple[str, ...]) -> np.ndarray:
    """The ``(num_nodes, len(NODE_FEATURES))`` float32 matrix; ``element_features`` keyed by latent node."""
    matrix = np.zeros((len(nodes), len(NODE_FEATURE_NAMES)), dtype=np.float64)
    index = {name: i for i, name in enumerate(NODE_FEATURE_NAMES)}
    for i, node in enumerate(nodes):
        size = int(np.prod(node.shape, dtype=np.int64))
        row = {
            "log_size": float(np.log(max(size, 1))),
            "rank": float(sum(1 for d in node.shape if d > 1)),
            "is_integer": float(node.dtype_kind in "iu"),
            "is_boolean": float(node.dtype_kind == "b"),
        }
        if node.type in STATIC_TYPES:
            row.update(_static_summary(node.value))
        elif node.type == NodeType.PRIMITIVE:
            row.update(_primitive_summary(node.attrs))
        if node.type in SITE_TYPES:
            row["event_dim"] = float(node.attrs["event_dim"])
            row["log_likelihood_scale"] = float(node.attrs["log_likelihood_scale"])
        if node.type in LATENT_TYPES:
            row.update(_probe_summary(element_features[i], element_feature_names))
        for name, value in row.items():
            matrix[i, index[name]] = value
    return matrix.astype(np.float32)
