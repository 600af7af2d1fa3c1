"""What the sampling progress bar costs: NUTS's wall-clock seconds with no bar, plain lines and a tqdm bar.

    python benchmarks/progress_cost.py --out benchmarks/results/progress_cost.json

Issue 9 asks for a progress bar "on by default in interactive use, that costs no measurable
throughput". The bar is updated on the host between compiled segments of 50 transitions
(``mcmc.segments``), so what it can cost is the host's time between segments. The throughput script's
"nuts_with_progress" timed only the segments themselves (``seconds["sampling"]``), which leaves that
time out; here the clock runs around the whole ``NUTSSampler.run`` (warm-up and draws).

For each model and number of chains the program is compiled first; then ``--repeats`` rounds each run
the three variants (no bar; plain lines, as off a terminal; tqdm's bar, as on one, drawn to
/dev/null), each round starting with the next variant, same seed, so every variant draws the same
chains (checked). Reported: the median seconds of each
variant, its ratio to no bar, the spread of the no-bar runs (max / min), and the paired
comparison that decides "measurable": per round, each bar's seconds over the no-bar run's of the
same round, with the median ratio, how many rounds were slower, and a bootstrap 95% interval of
that median. ``--summarise FILE`` recomputes these from a written JSON without running anything.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")

import numpy as np  # noqa: E402

from autoreparam import progress as progress_module  # noqa: E402
from autoreparam.mcmc.config import NUTSConfig  # noqa: E402
from autoreparam.mcmc.nuts import NUTSSampler  # noqa: E402
from autoreparam.reparam import Parameterisation  # noqa: E402
from throughput import setup  # noqa: E402  (benchmarks/ is on the path of a script run from it)

VARIANTS = ("none", "plain", "tqdm")


@contextlib.contextmanager
def _bar(variant: str, total: int):
    """The progress object ``infer`` would pass, as on a terminal (``tqdm``) or off one (``plain``)."""
    if variant == "none":
        yield None
        return
    saved_interactive, saved_stderr = progress_module.interactive, sys.stderr
    with open(os.devnull, "w") as sink:
        progress_module.interactive = lambda: variant == "tqdm"
        sys.stderr = sink
        try:
            bar = progress_module.SamplingProgress(total)
            yield bar
            bar.close()
        finally:
            progress_module.interactive, sys.stderr = saved_interactive, saved_stderr


def paired(seconds: dict) -> dict:
    """Per round: each variant's seconds over the no-bar run's of the same round (rounds are aligned)."""
    rng = np.random.default_rng(0)
    none = np.asarray(seconds["none"])
    out = {}
    for variant in VARIANTS[1:]:
        ratio = np.asarray(seconds[variant]) / none
        boot = np.median(rng.choice(ratio, size=(2000, ratio.size)), axis=1)
        out[variant] = {"median_ratio": float(np.median(ratio)), "rounds_slower": int(np.sum(ratio > 1.0)),
                        "rounds": int(ratio.size), "ci95": [float(np.quantile(boot, 0.025)),
                                                            float(np.quantile(boot, 0.975))]}
    return out


def measure(name: str, chains: int, repeats: int, warmup: int, samples: int) -> dict:
    coords, centre = setup(name)
    x = (centre + 0.1 * np.random.default_rng(0).standard_normal((chains, centre.size))).astype(np.float32)
    param = Parameterisation.centred(coords.plan)
    sampler = NUTSSampler(coords, NUTSConfig(num_warmup=warmup, num_samples=samples))
    sampler.run(param, np.ones(coords.dim), x, seed=0)  # compile
    seconds = {v: [] for v in VARIANTS}
    gradients = {}
    for round_ in range(repeats):
        # Each round starts with another variant, so that a load that drifts within a round (other
        # jobs, CPU frequency) falls on all three alike.
        for variant in VARIANTS[round_ % 3:] + VARIANTS[:round_ % 3]:
            with _bar(variant, warmup + samples) as bar:
                start = time.perf_counter()
                result = sampler.run(param, np.ones(coords.dim), x, seed=1, progress=bar)
                seconds[variant].append(time.perf_counter() - start)
            gradients[variant] = int(np.sum(result.warmup_grad_evals) + np.sum(result.grad_evals))
    if len(set(gradients.values())) != 1:
        raise RuntimeError(f"{name}: the variants drew different chains ({gradients}); the bar changed the run")
    median = {v: float(np.median(s)) for v, s in seconds.items()}
    return {
        "model": name, "chains": chains, "gradients": gradients["none"], "seconds": seconds,
        "median_seconds": median,
        "ratio_to_none": {v: median[v] / median["none"] for v in VARIANTS},
        "none_spread_max_over_min": float(max(seconds["none"]) / min(seconds["none"])),
        "paired": paired(seconds),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="eight_schools,radon_mn")
    parser.add_argument("--chains", default="1,16")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--out", default="results/progress_cost.json")
    parser.add_argument("--summarise", default=None, help="recompute the paired comparison of this JSON, in place")
    args = parser.parse_args(argv)
    if args.summarise:
        written = json.loads(Path(args.summarise).read_text())
        for row in written["rows"]:
            row["paired"] = paired(row["seconds"])
            print(row["model"], row["chains"], row["paired"])
        Path(args.summarise).write_text(json.dumps(written, indent=1))
        return 0
    rows = []
    for name in args.models.split(","):
        for chains in (int(c) for c in args.chains.split(",")):
            row = measure(name, chains, args.repeats, args.warmup, args.samples)
            rows.append(row)
            print({k: row[k] for k in ("model", "chains", "median_seconds", "ratio_to_none",
                                       "none_spread_max_over_min")}, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"rows": rows, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                                          "argv": sys.argv}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
