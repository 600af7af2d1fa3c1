"""Training items: a labelled program's graph, its VIP lambda targets and, on demand, its ELBO objective."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autoreparam.errors import DataError
from autoreparam.graph import ModelGraph
from autoreparam.meta.labels import read_labels
from autoreparam.meta.objective import ModelObjective, ObjectiveConfig


@dataclass(eq=False)
class Item:
    """One labelled program."""

    label: dict
    graph: ModelGraph
    target: np.ndarray  # (M,) VIP's lambda per element row; NaN where the site is not planned
    objective: ModelObjective | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"{self.label['split']}/{self.label['id']}"

    def make_objective(self, config: ObjectiveConfig, form: str) -> ModelObjective:
        if self.objective is None:
            from autoreparam.lang import compile_program

            model, args, kwargs = compile_program(self.label["program"], self.label["data"])
            self.objective = ModelObjective(model, args, kwargs, self.graph, config=config, form=form,
                                            label=self.label)
        return self.objective


def _targets(label: dict, graph: ModelGraph) -> np.ndarray:
    """VIP's lambda per element row, or the closed-form optimum where the program records one
    (``params["optimal_lambda"]``, `synthetic.py`: one tied value, or one per element); NaN for
    elements no site plan rewrites."""
    target = np.full(graph.num_elements, np.nan, dtype=np.float32)
    optimum = label.get("params", {}).get("optimal_lambda")
    for name in label.get("sites", {}):
        rows = graph.element_rows(name)
        rows = rows[np.argsort(graph.element_index[rows], kind="stable")]
        if optimum is not None:
            if np.size(optimum) not in (1, rows.size):
                raise DataError(f"label {label.get('id')}: optimal_lambda has {np.size(optimum)} values, and site "
                                f"{name} has {rows.size} elements; regenerate the synthetic set and its labels")
            target[rows] = optimum
        elif name in label.get("vip_lambda", {}):
            target[rows] = np.asarray(label["vip_lambda"][name], dtype=np.float32).ravel()
    return target


def probes_of(items: list[Item]) -> str:
    """Where every item's graph read its probes (labels written before the choice existed: the prior
    points); a mix is an error, since one network reads one kind of feature."""
    kinds = {item.label.get("probes", "prior") for item in items}
    if len(kinds) > 1:
        mixed = {kind: next(i.key for i in items if i.label.get("probes", "prior") == kind) for kind in sorted(kinds)}
        raise DataError(f"the labels mix graphs probed at {' and '.join(sorted(kinds))} points (e.g. "
                        f"{', '.join(f'{k}: {v}' for k, v in mixed.items())}); label every folder with the same "
                        "`autoreparam meta labels --probes`")
    return kinds.pop() if kinds else "prior"


def load_items(labels_folder: str | Path, split: str = "train", limit: int | None = None) -> list[Item]:
    """Items of every successful label of ``split`` (VIP's fit finite, or a closed-form optimum), in id order."""
    items = []
    for label in read_labels(labels_folder, split)[:limit]:
        closed_form = label.get("params", {}).get("optimal_lambda") is not None
        if label["fits"].get("vip", {}).get("elbo") is None and not closed_form:
            continue
        graph = ModelGraph.from_json(Path(label["graph_path"]).read_text(encoding="utf-8"))
        items.append(Item(label, graph, _targets(label, graph)))
    return items
