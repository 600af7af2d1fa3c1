"""Experiment (not kept): cap NUTS's tree depth during the warm-up before the first rule switch.

    PYTHONPATH=<checkout>/src python benchmarks/results/auto_changes/depth_cap_experiment.py CAP LABEL MODELS SEEDS

Patches `auto` to run its first warm-up stretch (up to the first rule switch) with a second segment
sampler whose `max_num_doublings` is CAP (0: no patch), then runs `benchmarks/auto_compare.py LABEL
MODELS SEEDS`. Compare warm-up gradients. (`not_kept_depth_cap.jsonl` came from this script's first
version, which had its own copy of auto_compare's loop and recorded `total_grads`, the sampling
phase's gradients.)
"""
import dataclasses
import runpy
import sys
from pathlib import Path

import autoreparam.auto as auto
from autoreparam.mcmc.segments import SegmentSampler

CAP = int(sys.argv[1])
_segments = auto._Run.segments


def segments(self, phase, param, chains, codes, source=None, target=None, stop=None):
    if phase != "warmup" or getattr(self, "_first_done", False) or CAP <= 0:
        return _segments(self, phase, param, chains, codes, source, target, stop)
    self._first_done, full = True, self.sampler
    self.sampler = SegmentSampler(self.coords, dataclasses.replace(self.config, max_num_doublings=CAP),
                                  full.segment_length)
    try:
        return _segments(self, phase, param, chains, codes, source, target, stop)
    finally:
        self.sampler = full


auto._Run.segments = segments
sys.argv = ["auto_compare.py", *sys.argv[2:]]
runpy.run_path(str(Path(__file__).resolve().parents[2] / "auto_compare.py"), run_name="__main__")
