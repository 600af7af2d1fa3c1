"""The benchmark harness's command-line entry point (argparse lives in ``autoreparam.cli``).

    python benchmarks/run.py --protocol cpu --out results/bench      # about an hour on 2 cores
    python benchmarks/run.py --protocol tiny --out /tmp/smoke        # a minute: every cell kind once
    python benchmarks/run.py --help

Every finished cell is saved at once; rerunning the same command resumes where it stopped.
Then ``autoreparam report --results results/bench --out .`` writes BENCHMARKS.md and the figures.
"""

import sys

from autoreparam.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
