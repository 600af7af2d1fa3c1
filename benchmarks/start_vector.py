"""The starts of a first call's variational fits: mapped op by op, or in one compiled program.

    python benchmarks/start_vector.py --repeats 3 --out benchmarks/results/start_vector.json

Each fit of ``vi.fits.fit_targets`` starts from the initial values mapped into its parameterisation
(CP, NCP, the learned centring's start). Run op by op, the first such map of a process compiled every
primitive it met separately; `Coordinates.start_vector` runs it as one compiled program. Every cell is a
fresh process that does what ``infer`` does before it (the site analysis and the initial values, which
warm the same eager caches), then times the three maps, ``eager`` or ``compiled``, alternating by
repeat. The persistent compilation cache is off in the children. Writes JSON and a markdown table.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fresh_process import ZOO_MODEL, alternating_cells, parse_args, write_report  # noqa: E402

CHILD = ZOO_MODEL + """
from autoreparam.initial import initial_values
init = initial_values(p.model, p.args, p.kwargs, coords.names)
targets = [Parameterisation.centred(plan), Parameterisation.non_centred(plan), Parameterisation.tied(plan, 0.5)]
start = time.perf_counter()
if variant == "eager":
    flats = [coords.ravel(coords.from_original(init, t)) for t in targets]
else:
    flats = [coords.start_vector(init, t) for t in targets]
jax.block_until_ready(flats)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""

MODELS = ("eight_schools", "radon_mn", "radon_pa", "german_credit", "electric", "election88")


def main(argv=None) -> int:
    args = parse_args(__doc__, MODELS, argv)
    models = args.models
    started = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    cells = alternating_cells(CHILD, models, ("eager", "compiled"), args.repeats)
    lines = ["| model | op by op (s) | compiled (s) | saved (s) |", "|---|---|---|---|"]
    for model in models:
        med = {m: float(np.median([c["seconds"] for c in cells if c["model"] == model and c["variant"] == m]))
               for m in ("eager", "compiled")}
        lines.append(f"| {model} | {med['eager']:.2f} | {med['compiled']:.2f} | {med['eager'] - med['compiled']:.2f} |")
    write_report(args.out, started, args.repeats, cells, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
