"""``autoreparam meta train``: fit the network on a labelled corpus, with checkpoints and resume.

Two phases (docs/meta.md):

1. *Warm start*: regression of the network's lambda on each training model's VIP lambda (binary
   cross-entropy with soft targets, every model weighted equally), for ``regression_steps`` steps.
2. *ELBO* (paper 003, "Method" step 4): each step draws ``batch_models`` models, predicts their
   centring, lets each model's `ModelObjective` refresh its q and return ``dELBO/dlambda``, and
   descends the mean normalised regret ``-(ELBO - best fixed ELBO) / max(1, |ELBO_CP - ELBO_NCP|)``
   by a vector-Jacobian product through the batched network. The warm start's cross-entropy stays
   in the loss with weight ``anchor_weight`` (on a fresh batch of all training programs): where the
   ELBO is flat in lambda (weak data, where any small lambda is as good) its gradient is ~0 and the
   ELBO gradients of other models would otherwise move those predictions freely (measured: without
   the anchor the Section 3 error rose from 0.059 after the warm start to 0.075).

The run folder holds ``checkpoint_<step>.eqx``/``checkpoint.json`` (network and optimiser state; the
JSON names that file and holds the step, the random generator's state and the training data's
fingerprint; written every ``checkpoint_every`` steps; a rerun on the same data resumes from it), ``log.jsonl`` (one
line per step), ``warm_start.eqx``/``.json`` (the network after phase 1, for the ablation) and, at
the end, ``meta_gnn.eqx``/``meta_gnn.json`` (the network and its card). A resumed ELBO phase starts
each model's q afresh from its label (q is not checkpointed).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from autoreparam.errors import ArgumentError, DataError
from autoreparam.meta.batching import batch_sizes, pad_graphs
from autoreparam.meta.dataset import Item, load_items, probes_of
from autoreparam.meta.files import read_json, write_json, write_text
from autoreparam.meta.network import as_jax
from autoreparam.meta.objective import ObjectiveConfig
from autoreparam.meta.weights import (ELEMENT_FEATURE_NAMES, NODE_FEATURE_NAMES, build_network, save_network,
                                      weights_finite)
from autoreparam.progress import task_bar


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    hidden: int = 64
    num_steps: int = 8  # message-passing rounds
    form: str = "tied"
    batch_models: int = 16
    regression_steps: int = 1500
    regression_learning_rate: float = 3e-3
    elbo_steps: int = 300
    elbo_learning_rate: float = 5e-4
    elbo_models: int | None = None  # models in the ELBO phase (balanced over families); None: all
    anchor_weight: float = 0.5  # weight of the warm start's cross-entropy kept in the ELBO phase
    weight_decay: float = 1e-4
    clip_norm: float = 1.0
    checkpoint_every: int = 50
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig)

    def __post_init__(self):
        for name in ("hidden", "num_steps", "batch_models", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ArgumentError(f"TrainConfig.{name} must be positive, got {getattr(self, name)}")
        if self.regression_steps < 0 or self.elbo_steps < 0:
            raise ArgumentError("TrainConfig.regression_steps and elbo_steps must be non-negative")

    @property
    def total_steps(self) -> int:
        return self.regression_steps + self.elbo_steps

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _optimiser(config: TrainConfig):
    """optax's clipped AdamW on a per-phase cosine schedule, one object per schedule.

    Shared: the jitted steps take the optimiser as a static argument, hashed by its functions' identity,
    so a fresh optimiser per `Trainer` compiled every step program again (each resume, each training
    seed in one process: 11 compilations of 2.7 s in tests/meta/test_train_resume.py, two now)."""
    return _optimiser_for(config.regression_steps, config.elbo_steps, config.regression_learning_rate,
                          config.elbo_learning_rate, config.weight_decay, config.clip_norm)


@functools.lru_cache(maxsize=16)
def _optimiser_for(regression_steps, elbo_steps, regression_learning_rate, elbo_learning_rate, weight_decay,
                   clip_norm):
    def schedule(step):
        # Cosine decay within each phase, from its own learning rate.
        in_regression = step < regression_steps
        length = jnp.where(in_regression, max(regression_steps, 1), max(elbo_steps, 1))
        position = jnp.where(in_regression, step, step - regression_steps) / length
        base = jnp.where(in_regression, regression_learning_rate, elbo_learning_rate)
        return base * 0.5 * (1.0 + jnp.cos(jnp.pi * jnp.clip(position, 0.0, 1.0)))

    return optax.chain(optax.clip_by_global_norm(clip_norm), optax.adamw(schedule, weight_decay=weight_decay))


def _regression_loss(network, batch, target, weight):
    logits = network(batch)[:, -1]
    # Binary cross-entropy with soft targets, written on logits for stability.
    bce = jnp.maximum(logits, 0) - logits * target + jnp.log1p(jnp.exp(-jnp.abs(logits)))
    return jnp.sum(weight * bce)


@eqx.filter_jit
def _regression_step(network, opt_state, batch, target, weight, optimiser):
    loss, grads = eqx.filter_value_and_grad(_regression_loss)(network, batch, target, weight)
    updates, opt_state = optimiser.update(grads, opt_state, eqx.filter(network, eqx.is_array))
    return eqx.apply_updates(network, updates), opt_state, loss


@eqx.filter_jit
def _logits_and_vjp(network, batch):
    return eqx.filter_vjp(lambda net: net(batch), network)


@eqx.filter_jit
def _apply(network, opt_state, grads, optimiser):
    updates, opt_state = optimiser.update(grads, opt_state, eqx.filter(network, eqx.is_array))
    return eqx.apply_updates(network, updates), opt_state


@eqx.filter_jit
def _anchored(network, grads, batch, target, weight, anchor_weight):
    """The ELBO gradient plus ``anchor_weight`` times the warm start's cross-entropy gradient."""
    anchor = eqx.filter_grad(_regression_loss)(network, batch, target, weight)
    return jax.tree_util.tree_map(lambda g, a: g + anchor_weight * a, grads, anchor)


def _regression_arrays(items: list[Item], at_least):
    padded, rows = pad_graphs([i.graph for i in items], at_least)
    m = padded.element_node.shape[0]
    target, weight = np.zeros(m, np.float32), np.zeros(m, np.float32)
    for item, r in zip(items, rows):
        labelled = np.isfinite(item.target)
        if labelled.any():
            idx = np.arange(r.start, r.stop)[labelled]
            target[idx] = item.target[labelled]
            weight[idx] = 1.0 / (labelled.sum() * len(items))
    return as_jax(padded), jnp.asarray(target), jnp.asarray(weight)


def balanced_subset(items: list[Item], size: int | None) -> list[Item]:
    """The first ``size`` items taking families in turn (each family's items in id order)."""
    if size is None or size >= len(items):
        return list(items)
    by_family: dict[str, list[Item]] = {}
    for item in items:
        by_family.setdefault(item.label["family"], []).append(item)
    chosen, queues = [], [list(v) for _, v in sorted(by_family.items())]
    while len(chosen) < size:
        for queue in queues:
            if queue and len(chosen) < size:
                chosen.append(queue.pop(0))
    return chosen


# The record's entries that name the training data; a resume must find them unchanged.
DATA_KEYS = ("corpus", "corpus_manifest", "labels", "limit")


class Trainer:
    """State of one training run in ``out``: network, optimiser, step, random generator, log."""

    def __init__(self, items: list[Item], out: Path, config: TrainConfig, record: dict):
        if not items:
            raise DataError("no labelled training programs; run `autoreparam meta labels` first")
        self.items, self.out, self.config, self.record = items, out, config, record
        self.optimiser = _optimiser(config)
        arch = {"hidden": config.hidden, "num_steps": config.num_steps, "form": config.form, "probes": probes_of(items),
                "num_node_features": len(NODE_FEATURE_NAMES), "num_element_features": len(ELEMENT_FEATURE_NAMES)}
        self.network = build_network(arch, jax.random.PRNGKey(config.seed))
        self.opt_state = self.optimiser.init(eqx.filter(self.network, eqx.is_array))
        self.step = 0
        self.rng = np.random.default_rng([config.seed, 7])
        self.seconds = {"regression": 0.0, "elbo": 0.0, "objective_first_use": 0.0}
        self.elbo_items = balanced_subset(items, config.elbo_models)
        # One padded shape per phase: every batch compiles the network once.
        self.sizes = batch_sizes([i.graph for i in items], config.batch_models)
        self.elbo_sizes = batch_sizes([i.graph for i in self.elbo_items], config.batch_models)
        for item in self.elbo_items:
            if item.objective is not None:
                item.objective.reset()  # each run starts q afresh from the labels
        self._resume()

    # --- checkpoints ---------------------------------------------------------------------------
    def _data(self) -> dict:
        """What the run trains on, compared on resume: the record's corpus, labels folders and limit,
        and a fingerprint of the items themselves (keys and targets), which catches other data even
        when the record does not say where it came from."""
        digest = hashlib.sha256()
        for item in self.items:
            digest.update(item.key.encode())
            digest.update(np.ascontiguousarray(item.target, np.float32).tobytes())
        plain = json.loads(json.dumps({k: self.record.get(k) for k in DATA_KEYS}))
        # Paths resolved: the same folder named from another working directory is the same data.
        if plain["corpus"] is not None:
            plain["corpus"] = str(Path(plain["corpus"]).resolve())
        if plain["labels"] is not None:
            plain["labels"] = [str(Path(f).resolve()) for f in plain["labels"]]
        return {**plain, "num_models": len(self.items), "items_sha256": digest.hexdigest()}

    def _resume(self) -> None:
        card = self.out / "checkpoint.json"
        if not card.exists():
            # Killed before its first checkpoint: the steps logged so far run again (they were logged
            # twice; found in review), and a warm start written before the kill is not this run's.
            self._truncate_log()
            for stale in self.out.glob("warm_start.*"):
                stale.unlink()
            return
        try:
            saved = read_json(card)
        except (json.JSONDecodeError, UnicodeDecodeError, OSError) as error:
            raise DataError(f"the checkpoint {card} is damaged ({error}); delete the folder {self.out} (or the "
                            "checkpoint files in it) to train from the start") from None
        if saved["config"] != json.loads(json.dumps(self.config.to_dict())):
            raise ArgumentError(f"{self.out} holds a run with another configuration; choose a new --out")
        if saved.get("probes", "prior") != self.network.probes:  # not in the config: it comes from the labels
            raise ArgumentError(f"{self.out} holds a run on graphs probed at {saved.get('probes', 'prior')} points, "
                                f"these labels are probed at {self.network.probes} points; choose a new --out")
        # Resuming on other training data would silently mix two runs. Checkpoints written before the
        # data were recorded ("data" absent) are accepted as before.
        if "data" in saved:
            data = self._data()
            differ = [f"{k}: checkpoint {saved['data'].get(k)!r}, now {data[k]!r}"
                      for k in data if saved["data"].get(k) != data[k]]
            if differ:
                raise ArgumentError(f"{self.out} holds a run on other training data ({'; '.join(differ)}); "
                                    f"choose a new --out")
        # The JSON names the weights written with it (older checkpoints: checkpoint.eqx), so a kill
        # between the two writes can never pair newer weights with an older step.
        weights = self.out / saved.get("weights", "checkpoint.eqx")
        try:
            self.network, self.opt_state = eqx.tree_deserialise_leaves(weights, (self.network, self.opt_state))
        except Exception as error:  # noqa: BLE001 -- Equinox's and NumPy's errors for a damaged file, named here
            raise DataError(f"the checkpoint weights {weights} are missing or damaged ({type(error).__name__}); "
                            f"delete {card} and the checkpoint files in {self.out} to train from the start") from None
        self.step = int(saved["step"])
        # Restored, not reseeded: a run resumed in the regression phase repeats the uninterrupted one bit for
        # bit; in the ELBO phase the per-model q are not checkpointed, so it continues from fresh ones.
        if "rng" in saved:
            self.rng.bit_generator.state = saved["rng"]
        else:  # older checkpoints did not save it
            self.rng = np.random.default_rng([self.config.seed, 7, self.step])
        self.seconds = saved["seconds"]
        self._truncate_log()

    def _truncate_log(self) -> None:
        """Drop log lines after the checkpoint's step: those steps run again and are logged again."""
        log = self.out / "log.jsonl"
        if not log.exists():
            return
        lines = log.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.strip() and (_logged_step(line) or 0) <= self.step
                and _logged_step(line) is not None]
        if len(kept) != len(lines):
            write_text(log, "".join(line + "\n" for line in kept))

    def checkpoint(self) -> None:
        # Weights under a step-named file first, then the JSON naming them (atomic), then the old
        # weights go: at every moment checkpoint.json names a complete file of its own step.
        if not weights_finite(self.network):
            # Never checkpoint non-finite weights (with every model's objective failing, the loss is None).
            raise DataError(f"meta training diverged before step {self.step}: the network's weights are not "
                            f"finite; the last checkpoint in {self.out} is kept. Check the labels' features "
                            "(values beyond float32) or lower the learning rate")
        name = f"checkpoint_{self.step:07d}.eqx"
        tmp = self.out / f"{name}.tmp"
        eqx.tree_serialise_leaves(tmp, (self.network, self.opt_state))
        tmp.replace(self.out / name)
        write_json(self.out / "checkpoint.json", {"step": self.step, "config": self.config.to_dict(),
                                                  "probes": self.network.probes, "seconds": self.seconds,
                                                  "weights": name, "rng": self.rng.bit_generator.state,
                                                  "data": self._data()})
        for old in self.out.glob("checkpoint*.eqx"):
            if old.name != name:
                old.unlink(missing_ok=True)

    def log(self, entry: dict) -> None:
        with open(self.out / "log.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    # --- steps ---------------------------------------------------------------------------------
    def _draw(self, items: list[Item] | None = None) -> list[Item]:
        items = self.items if items is None else items
        size = min(self.config.batch_models, len(items))
        return [items[i] for i in self.rng.choice(len(items), size=size, replace=False)]

    def regression_step(self) -> dict:
        batch, target, weight = _regression_arrays(self._draw(), self.sizes)
        self.network, self.opt_state, loss = _regression_step(self.network, self.opt_state, batch, target,
                                                              weight, self.optimiser)
        return {"phase": "regression", "loss": float(loss)}

    def elbo_step(self) -> dict:
        items = self._draw(self.elbo_items)
        padded, rows = pad_graphs([i.graph for i in items], self.elbo_sizes)
        logits, vjp = _logits_and_vjp(self.network, as_jax(padded))
        lam = np.asarray(jax.nn.sigmoid(logits), dtype=np.float64)
        cotangent = np.zeros(logits.shape, np.float32)
        regrets, failures = [], 0
        key = jax.random.PRNGKey(int(self.rng.integers(2**31)))
        for item, r in zip(items, rows):
            fresh = item.objective is None or item.objective.state is None
            start = time.perf_counter()
            objective = item.make_objective(self.config.objective, self.config.form)
            key, sub = jax.random.split(key)
            elbo, gradient, ok = objective(lam[r], sub)
            if fresh:
                self.seconds["objective_first_use"] += time.perf_counter() - start
            if not ok:
                failures += 1
                continue
            regrets.append((objective.reference - elbo) / objective.unit)
            # d(regret)/d(logit) = -dELBO/dlambda * lambda (1 - lambda) / unit, averaged over the batch.
            cotangent[r] = -gradient * lam[r] * (1 - lam[r]) / objective.unit / len(items)
        (grads,) = vjp(jnp.asarray(cotangent))
        if self.config.anchor_weight:
            grads = _anchored(self.network, grads, *_regression_arrays(self._draw(), self.sizes),
                              self.config.anchor_weight)
        self.network, self.opt_state = _apply(self.network, self.opt_state, grads, self.optimiser)
        return {"phase": "elbo", "loss": float(np.mean(regrets)) if regrets else None,
                "median_regret": float(np.median(regrets)) if regrets else None, "failures": failures}

    def prepare_objectives(self, threads: int = 2) -> None:
        """Build and compile every ELBO-phase model's objective, ``threads`` at a time (XLA compiles
        outside the GIL), before the ELBO phase starts; failures leave the model out, with a log line."""
        from concurrent.futures import ThreadPoolExecutor

        start = time.perf_counter()
        outputs = 1 if self.config.form == "tied" else 2

        def compile_(item, lowered):
            try:
                item.objective.compile(outputs, lowered)
                return None
            except Exception as error:  # noqa: BLE001 - a model the objective cannot take is skipped, and logged
                return f"{type(error).__name__}: {error}"

        ready, futures = [], []
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for item in self.elbo_items:
                try:  # tracing in this thread only: NumPyro's handler stack is global
                    objective = item.make_objective(self.config.objective, self.config.form)
                    lowered = None if objective._compiled is not None else objective.lower(outputs)
                except Exception as error:  # noqa: BLE001 - logged, the model is left out
                    self.log({"step": self.step, "phase": "prepare", "model": item.key,
                              "error": f"{type(error).__name__}: {error}"})
                    continue
                futures.append((item, pool.submit(compile_, item, lowered)))
            for item, future in futures:
                error = future.result()
                if error is None:
                    ready.append(item)
                else:
                    self.log({"step": self.step, "phase": "prepare", "model": item.key, "error": error})
        self.elbo_items = ready
        self.seconds["objective_compile"] = self.seconds.get("objective_compile", 0.0) + time.perf_counter() - start

    def run(self, progress: bool = True, threads: int = 2) -> None:
        config = self.config
        if config.elbo_steps and self.elbo_items and self.step < config.total_steps:
            self.prepare_objectives(threads)
        bar = None
        if progress:
            bar = task_bar(config.total_steps, f"meta train (seed {config.seed})", initial=self.step, mininterval=1.0)
        try:
            while self.step < config.total_steps:
                phase = "regression" if self.step < config.regression_steps else "elbo"
                start = time.perf_counter()
                entry = self.regression_step() if phase == "regression" else self.elbo_step()
                self.seconds[phase] += time.perf_counter() - start
                if entry.get("loss") is not None and not np.isfinite(entry["loss"]):
                    # NaN weights were checkpointed and saved with exit status 0 (found in review).
                    raise DataError(f"meta training diverged at step {self.step + 1} ({phase} loss {entry['loss']}); "
                                    f"the last checkpoint in {self.out} is kept. Check the labels' features "
                                    "(values beyond float32) or lower the learning rate")
                self.step += 1
                self.log({"step": self.step, **entry, "seconds": time.perf_counter() - start})
                if bar is not None:
                    bar.update(1)
                    if entry.get("loss") is not None:
                        bar.set_postfix_str(f"{phase} loss {entry['loss']:.4f}", refresh=False)
                if self.step == config.regression_steps and config.elbo_steps:
                    # The warm start alone, kept for the ablation "does the ELBO phase help?". Written
                    # before the checkpoint of this step: a run resumed past it never writes it again.
                    save_network(self.out / "warm_start", self.network, {**self.record, "phase": "warm start"})
                if self.step % config.checkpoint_every == 0 or self.step == config.total_steps:
                    self.checkpoint()
        finally:
            if bar is not None:
                bar.close()

    def finish(self) -> Path:
        record = {**self.record, "seconds": self.seconds, "config": self.config.to_dict(), "steps": self.step}
        return save_network(self.out / "meta_gnn", self.network, record)


def train(corpus: str | Path, labels, out: str | Path, config: TrainConfig = TrainConfig(),
          *, seeds: tuple[int, ...] | None = None, progress: bool = True, limit: int | None = None,
          items: list[Item] | None = None) -> list[Path]:
    """Train (or resume) one run per seed in ``out/seed_<s>``; returns the trained networks' card paths.

    ``labels``: a labels folder or a list of them (default ``corpus/labels``); ``limit``: the first
    ``limit`` labelled programs of each folder.

    The seeds run one after another in this process, so each model's ELBO objective compiles once.
    """
    import os
    import platform

    out = Path(out)
    folders = [Path(corpus) / "labels"] if labels is None else \
        [Path(f) for f in ([labels] if isinstance(labels, (str, Path)) else labels)]
    if items is None:
        items = [item for folder in folders for item in load_items(folder, "train", limit)]
    manifest = Path(corpus) / "manifest.json"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cards = []
    for seed in (config.seed,) if seeds is None else seeds:
        run_config = dataclasses.replace(config, seed=seed)
        record = {"corpus": str(corpus), "corpus_manifest": read_json(manifest) if manifest.exists() else None,
                  "labels": [str(f) for f in folders], "limit": limit, "num_models": len(items), "seed": seed,
                  "families": sorted({i.label["family"] for i in items}),
                  "machine": f"{platform.node()} ({platform.machine()}, {jax.devices()[0].platform}, {cpus} CPUs)"}
        run_out = out / f"seed_{seed}"
        run_out.mkdir(parents=True, exist_ok=True)
        trainer = Trainer(items, run_out, run_config, record)
        trainer.run(progress)
        cards.append(trainer.finish())
    return cards


def _logged_step(line: str) -> int | None:
    """The step of one log line; None for a line cut short by a kill (it was a JSONDecodeError that
    blocked every resume; found in review)."""
    try:
        return int(json.loads(line).get("step", 0))
    except (json.JSONDecodeError, AttributeError, TypeError, ValueError):
        return None
