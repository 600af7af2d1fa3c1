"""Chains on one device (``vmap``) against chains split across host devices, in seconds, side by side.

    python benchmarks/sharding.py --devices 2 --repeats 3 --out benchmarks/results/sharding.json

Issue 9 asks to compare, on the CPU, chains spread over host devices
(``xla_force_host_platform_device_count``, which ``mcmc/sharding.py`` uses unchanged) against all
chains in one ``vmap`` on one device, and to keep the faster. Each run is a fresh process with the
given device count that calls ``ar.infer`` twice on the same model (seeds 0 and 1) and reports both
calls' wall seconds (the second compiles nothing), gradients and min bulk ESS per second of the second
call. The runs alternate between device counts, ``--repeats`` rounds. Models: centred eight schools
with NUTS at acceptance 0.95 (the funnel: long, uneven trajectories, where waiting matters most),
eight schools with ``auto``, and radon MN with ``auto`` when the real data is found. Writes JSON with
the machine, the commit and every run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "eight_schools_cp_nuts": dict(model="eight_schools", method="cp", kernel="nuts", target_accept=0.95),
    "eight_schools_auto": dict(model="eight_schools", method="auto"),
    "radon_mn_auto": dict(model="radon_mn", method="auto"),
}

CHILD = r"""
import json, os, sys, time, warnings
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=%(devices)d"
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["AUTOREPARAM_COMPILATION_CACHE"] = "0"
import jax
import autoreparam as ar
from autoreparam.models import load
warnings.simplefilter("ignore")
case = json.loads(sys.argv[1])
problem = load(case.pop("model"))
calls = []
for seed in (0, 1):
    start = time.perf_counter()
    r = ar.infer(problem.model, *problem.args, num_chains=%(chains)d, num_warmup=1000, num_samples=1000,
                 seed=seed, progress=False, **case, **problem.kwargs)
    seconds = time.perf_counter() - start
    ess = float(r.diagnostics.standard.min_ess_bulk)
    calls.append(dict(seconds=seconds, gradients=int(r.num_grad_evals), min_bulk_ess=ess,
                      ess_per_second=ess / seconds, trustworthy=bool(r.trustworthy)))
print("RESULT " + json.dumps(dict(devices=jax.device_count(), calls=calls)))
"""


def run_case(case: dict, devices: int, chains: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD % dict(devices=devices, chains=chains), json.dumps(case)],
                         capture_output=True, text=True, timeout=1800)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode or not lines:
        raise RuntimeError(f"{case} on {devices} devices failed:\n{out.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def data_found() -> bool:
    from autoreparam.models.data.paths import resolve_data_dir

    return (resolve_data_dir() / "radon" / "srrs2.dat").exists()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2, help="host devices of the split runs")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    cases = [name for name in args.cases.split(",") if name]
    if "radon_mn_auto" in cases and not data_found():
        print("radon_mn_auto skipped: real data not found (set AUTOREPARAM_DATA)", file=sys.stderr)
        cases.remove("radon_mn_auto")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    record = dict(started=time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), commit=commit,
                  machine=f"{platform.machine()}, {os.cpu_count()} CPUs", chains=args.chains, runs=[])
    for repeat in range(args.repeats):
        for name in cases:
            order = (1, args.devices) if repeat % 2 == 0 else (args.devices, 1)
            for devices in order:
                result = run_case(dict(CASES[name]), devices, args.chains)
                record["runs"].append(dict(case=name, repeat=repeat, **result))
                second = result["calls"][1]
                print(f"{name} devices={devices} repeat={repeat}: first {result['calls'][0]['seconds']:.1f} s, "
                      f"second {second['seconds']:.1f} s, {second['ess_per_second']:.1f} ESS/s", flush=True)
                Path(args.out).write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
