"""Rerun one prior-reproduction cell of the fuzzer: is a failure reproducible or a false positive?

    python scripts/rerun_fuzz_cell.py --program 195 --method auto/nuts --out benchmarks/results/fuzz_rerun_195.json

Runs the cell as the fuzzer did (program ``generate_program(P, 0)``, its stored seed, 4 chains x 500
warm-up + 1000 draws), then at ``--seeds`` other seeds and at the stored seed with ``--longer`` times
the draws. A real bias fails again; a chance failure (the fuzzer's family-wise alpha is 0.001 per
check, so among about 2,000 checks about two fail by chance) passes at other seeds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from autoreparam.corpus import generate_program
from autoreparam.errors import AutoreparamError
from autoreparam.reliability.methods import RunSettings, find_spec
from autoreparam.reliability.prior import check_prior
from autoreparam.reliability.sbc import stable_seed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", type=int, required=True)
    parser.add_argument("--method", required=True, help="method/kernel, e.g. auto/nuts")
    parser.add_argument("--seeds", type=int, default=2, help="other seeds to run")
    parser.add_argument("--longer", type=int, default=4, help="draws factor of the long rerun at the stored seed")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    program = generate_program(args.program, 0)[1]
    stored = stable_seed("prior", 0, args.program, args.method)
    runs = [("stored seed", stored, RunSettings(4, 500, 1000))]
    runs += [(f"stored seed + {k}", stored + k, RunSettings(4, 500, 1000)) for k in range(1, args.seeds + 1)]
    runs.append((f"stored seed, {args.longer}x draws", stored, RunSettings(4, 500, 1000 * args.longer)))
    rows = []
    for label, seed, settings in runs:
        try:
            result = check_prior(program.text, program.data, find_spec(args.method), seed, settings)
        except AutoreparamError as error:  # a refused run (e.g. infinite draws) is a finding: record it, go on
            rows.append({"run": label, "seed": seed, "num_samples": settings.num_samples,
                         "error": f"{type(error).__name__}: {error}"})
        else:
            rows.append({"run": label, "seed": seed, "num_samples": settings.num_samples,
                         **{k: result[k] for k in ("min_adjusted_p", "worst", "failed", "trustworthy", "min_ess_bulk",
                                                   "max_r_hat", "divergences")}})
        print(rows[-1], flush=True)
    Path(args.out).write_text(json.dumps({"program": args.program, "family": program.family, "method": args.method,
                                          "text": program.text, "runs": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
