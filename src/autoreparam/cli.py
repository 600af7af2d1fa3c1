"""The ``autoreparam`` command line: run, compare, bench, report, graph, meta, sbc, fuzz, reliability, data, ..."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import warnings

from autoreparam.cli_types import (acceptance, count, counts, minutes, natural, naturals, sites as site_names,
                                   title_and_folder)
from autoreparam.errors import ArgumentError, ConvergenceWarning
from autoreparam.validation import check_hmc_options


def _is_program_file(model: str) -> bool:
    from autoreparam.lang import PROGRAM_SUFFIX

    return model.endswith(PROGRAM_SUFFIX)


def _problem(args):
    from autoreparam.models import load

    if _is_program_file(args.model):
        from autoreparam.lang import compile_program

        if args.option or args.quirks:
            raise ArgumentError("--option and --quirks apply to zoo models; a program file reads its data from --data")
        return compile_program(args.model, args.data).problem()
    if args.data is not None:
        raise ArgumentError(f"--data is for program files (*.arp); zoo model '{args.model}' reads its data itself")

    options = {}
    for item in args.option or []:
        key, _, value = item.partition("=")
        options[key] = _option_value(value)
    return load(args.model, data_dir=args.data_dir, quirks=args.quirks, **options)


def _option_value(text: str):
    """An --option value: an integer (n=20, seed=1), else a number (q=1e-2), else the text. Every
    number was a float before, and n=20 was refused as 'not a positive integer' (found in review)."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def _leapfrog(value: str):
    return value if value == "oracle" else int(value)


def _add_model_arguments(parser):
    parser.add_argument("model", help="a model of the zoo (see `autoreparam models`) or a program file (*.arp)")
    parser.add_argument("--data", default=None, help="JSON data file of a program file (docs/language.md)")
    parser.add_argument("--data-dir", default=None, help="data folder (default: $AUTOREPARAM_DATA or the user cache)")
    parser.add_argument("--quirks", action="store_true", help="reproduce the original code's data handling")
    parser.add_argument("--option", action="append", help="model option key=value, e.g. q=100 for gaussian_section3")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sites", type=site_names, default="default", help="'default', 'all' or a comma-separated list")


def _add_sampler_arguments(parser):
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--leapfrog", type=_leapfrog, default="oracle", help="L, or 'oracle' (default)")
    parser.add_argument("--target-accept", type=acceptance, default=None,
                        help="mean acceptance the step size is tuned to (default 0.8); raise it, e.g. to 0.95, "
                             "against divergences")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


@contextlib.contextmanager
def _reported_not_warned():
    """Around an ``infer`` call whose summary the command prints: a flagged run's ConvergenceWarning
    says what the summary's WARNING lines say, so it would print twice, the first time beside a line
    of our source. (``compare`` warns nothing: its report carries every method's warnings.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def cmd_run(args) -> int:
    import autoreparam as ar

    if args.lam is not None and args.method != "given":
        raise ArgumentError(f"--lam sets the lambda of --method given, not of --method {args.method}; add "
                            "--method given or drop --lam")
    if args.lam is None and args.method == "given":  # it said "needs parameterisation=" (found in review)
        raise ArgumentError("--method given samples at a lambda you give: add --lam, a number in [0, 1]")
    if args.meta_probes is not None and args.method != "meta":
        raise ArgumentError(f"--meta-probes is for --method meta, not --method {args.method}; add --method meta "
                            "or drop --meta-probes")
    # The kernel infer will use: HMC's options under NUTS would do nothing, without a word.
    check_hmc_options(args.kernel or ("nuts" if args.method in ("auto", "meta") else "hmc"), args.leapfrog,
                      "window", "pooled")
    problem = _problem(args)
    with _reported_not_warned():
        result = ar.infer(
            problem.model, *problem.args, method=args.method, kernel=args.kernel, num_chains=args.chains,
            num_warmup=args.warmup, num_samples=args.samples, seed=args.seed, sites=args.sites,
            num_leapfrog=args.leapfrog, progress=not args.quiet, parameterisation=args.lam,
            target_accept=args.target_accept, meta_probes=args.meta_probes, **problem.kwargs,
        )
    print(f"{problem.name}: {problem.description}\n{problem.data_note}\n")
    print(result.summary())
    return 0


def cmd_vip(args) -> int:
    from autoreparam.vi.vip import fit_vip

    problem = _problem(args)
    result = fit_vip(problem.model, *problem.args, sites=args.sites, form=args.form, seed=args.seed, **problem.kwargs)
    print(result.plan.report() + "\n")
    print(result.summary())
    return 0


def cmd_compare(args) -> int:
    from autoreparam.compare import compare

    check_hmc_options(args.kernel, args.leapfrog, "sign" if args.paper else "window",
                      "paper" if args.paper else "pooled")
    problem = _problem(args)
    start = time.perf_counter()
    options = {"step_size_rule": "sign", "oracle_metric": "paper"} if args.paper else {}
    if args.paper:
        from autoreparam.vi.protocol import PAPER

        options["vi_config"] = PAPER
    comparison = compare(
        problem.model, *problem.args, kernel=args.kernel, num_chains=args.chains, num_warmup=args.warmup,
        num_samples=args.samples, seed=args.seed, sites=args.sites, num_leapfrog=args.leapfrog,
        progress=not args.quiet, target_accept=args.target_accept, **options, **problem.kwargs,
    )
    print(f"{problem.name}: {problem.description}")
    how = "NUTS" if args.kernel == "nuts" else "fixed-L HMC, L by oracle on pilot runs"
    print(f"{args.chains} chains x {args.samples} draws after {args.warmup} warm-up steps; {how}\n")
    print(comparison.report())
    print(f"\nwall time {time.perf_counter() - start:.1f}s")
    return 0


def cmd_bench(args) -> int:
    from autoreparam.benchmark.protocol import get_protocol
    from autoreparam.benchmark.runner import run_benchmark

    from autoreparam.benchmark.protocol import HMC_METHODS, PEERS

    def listed(text, cast=str):
        return None if text is None else tuple(cast(x) for x in text.split(",") if x)

    protocol = get_protocol(
        args.protocol,
        models=listed(args.models),
        seeds=args.seeds,
        num_chains=args.chains,
        num_warmup=args.warmup,
        num_samples=args.samples,
        leapfrog_grid=args.grid,
        grid_patience=args.patience,
    )
    methods = HMC_METHODS if args.methods is None else listed(args.methods)
    peers = PEERS if args.peers is None else tuple(p for p in listed(args.peers) if p != "none")
    # Checked before the first cell runs (the variational fits take seconds to minutes).
    for flag, given, known in (("--methods", methods, HMC_METHODS), ("--peers", peers, PEERS)):
        unknown = [name for name in given if name not in known]
        if unknown:
            raise ArgumentError(f"{flag}: unknown '{unknown[0]}'; choose from {', '.join(known)}"
                                + (" or none" if flag == "--peers" else ""))
    # A benchmark times first calls, compilation included, as NumPyro's cells pay it: no persistent
    # compilation cache from earlier runs (ours, or PyTensor's numba cache under nutpie), unless the
    # environment asks for one.
    os.environ.setdefault("AUTOREPARAM_COMPILATION_CACHE", "0")
    from autoreparam import compilation_cache

    if compilation_cache.switched_off():
        # JAX's own cache too: a user's JAX_COMPILATION_CACHE_DIR still served the cells (found in review).
        compilation_cache.disable_every_persistent_cache()
    pytensor_flags = os.environ.get("PYTENSOR_FLAGS", "")
    if "numba__cache" not in pytensor_flags:
        os.environ["PYTENSOR_FLAGS"] = ",".join(f for f in (pytensor_flags, "numba__cache=False") if f)
    store = run_benchmark(
        protocol, args.out, data_dir=args.data_dir, quirks=args.quirks, methods=methods, peers=peers,
        extras=listed(args.extras) or (),
        progress=not args.quiet, deadline_minutes=args.deadline_minutes,
    )
    print(f"{len(store.records())} cells in {store.root}")
    return 0


def cmd_report(args) -> int:
    from autoreparam.benchmark.report import write_report

    extra = dict(args.extra or [])
    path = write_report(args.results, args.out, extra_results=extra, notes_path=args.notes)
    print(f"wrote {path}")
    return 0


def cmd_figures(args) -> int:
    from autoreparam.analysis import write_figures

    for name, path in write_figures(args.out).items():
        print(f"{name}: {path}")
    return 0


def cmd_graph(args) -> int:
    from pathlib import Path

    from autoreparam.graph import model_graph

    if args.sites != "default":
        raise ArgumentError("--sites does not apply to graph: the graph holds every latent site of the model")
    problem = _problem(args)
    graph = model_graph(problem.model, *problem.args, seed=args.seed, **problem.kwargs)
    print(f"{problem.name}: {problem.description}\n{graph.describe()}")
    if args.json:
        try:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(graph.to_json())
        except OSError as error:
            raise ArgumentError(f"cannot write --json {args.json}: {error.strerror or error}") from None
        print(f"wrote {args.json}")
    return 0


def cmd_models(args) -> int:
    from autoreparam.models import available

    print("\n".join(available()))
    return 0


def cmd_download(args) -> int:
    from autoreparam.models.data import download

    download(args.name, cache_dir=args.cache_dir)
    return 0


def cmd_corpus(args) -> int:
    from autoreparam.corpus import write_corpus

    start = time.perf_counter()
    summary = write_corpus(args.out, n=args.n, seed=args.seed, held_out_family=args.held_out_family)
    counts = ", ".join(f"{split} {count}" for split, count in summary["splits"].items())
    print(f"{summary['n']} programs in {args.out} ({counts}) in {time.perf_counter() - start:.1f}s")
    return 0


def cmd_sbc(args) -> int:
    from autoreparam.reliability.cli import run_sbc_command

    return run_sbc_command(args)


def cmd_fuzz(args) -> int:
    from autoreparam.reliability.cli import run_fuzz_command

    return run_fuzz_command(args)


def cmd_reliability(args) -> int:
    from autoreparam.reliability.cli import run_report_command

    return run_report_command(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autoreparam", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="infer a model's posterior and print the summary and the parameterisation")
    _add_model_arguments(run)
    _add_sampler_arguments(run)
    run.add_argument("--method", default="auto", choices=["auto", "cp", "ncp", "vip", "ihmc", "given", "meta"])
    run.add_argument("--lam", type=float, default=None, help="lambda in [0, 1] for every element (method 'given')")
    run.add_argument("--kernel", default=None, choices=["hmc", "nuts"])
    run.add_argument("--meta-probes", default=None, choices=["prior", "fit"],
                     help="--method meta: the network reading the graph's probes at a short fit (the default, "
                          "MODEL_CARD_fit.md) or the one reading them at the prior points (MODEL_CARD.md)")
    run.set_defaults(func=cmd_run)

    vip = sub.add_parser("vip", help="the VIP search: lambda per element, ELBOs of CP, NCP and VIP")
    _add_model_arguments(vip)
    vip.add_argument("--form", default="tied", choices=["tied", "separate"])
    vip.set_defaults(func=cmd_vip)

    comp = sub.add_parser("compare", help="CP, NCP, VIP and auto side by side (NUTS); --kernel hmc: the paper's "
                          "CP-HMC, NCP-HMC, iHMC and VIP-HMC")
    _add_model_arguments(comp)
    _add_sampler_arguments(comp)
    comp.add_argument("--kernel", default="nuts", choices=["nuts", "hmc"])
    comp.add_argument("--paper", action="store_true", help="with --kernel hmc: the paper's protocol (sign rule, "
                      "per-chain metric, full VI)")
    comp.set_defaults(func=cmd_compare)

    bench = sub.add_parser("bench", help="the paper's benchmark; resumable, one JSON per finished cell")
    bench.add_argument("--protocol", default="cpu", choices=["cpu", "paper", "tiny"])
    bench.add_argument("--out", default="results/bench")
    bench.add_argument("--models", default=None, help="comma-separated subset of the protocol's models")
    bench.add_argument("--seeds", type=naturals, default=None, help="comma-separated seeds")
    bench.add_argument("--chains", type=count, default=None, help="override the protocol's number of chains")
    bench.add_argument("--warmup", type=count, default=None, help="override the protocol's burn-in steps")
    bench.add_argument("--samples", type=count, default=None, help="override the protocol's draws per chain")
    bench.add_argument("--grid", type=counts, default=None, help="override the L grid, e.g. 1,2,4,8")
    bench.add_argument("--patience", type=count, default=None, help="stop the L grid after this many drops")
    bench.add_argument("--methods", default=None, help="HMC methods, e.g. cp,ncp,ihmc,vip,vip_discrete")
    bench.add_argument(
        "--peers", default=None,
        help="peers: numpyro_nuts_cp,numpyro_nuts_ncp,numpyro_vip,nutpie_cp (nutpie needs `make peers`), or 'none'",
    )
    bench.add_argument(
        "--extras", default="nuts,vip_nuts,auto", help="NUTS on the best method, our VIP + NUTS, auto; or ''"
    )
    bench.add_argument("--deadline-minutes", type=minutes, default=None, help="start no new cell after this")
    bench.add_argument("--data-dir", default=None)
    bench.add_argument("--quirks", action="store_true")
    bench.add_argument("--quiet", action="store_true")
    bench.set_defaults(func=cmd_bench)

    report = sub.add_parser("report", help="turn benchmark results into BENCHMARKS.md and figures")
    report.add_argument("--results", default="results/bench")
    report.add_argument("--out", default=".")
    report.add_argument("--extra", action="append", type=title_and_folder,
                        help="TITLE=DIR of another run to append, e.g. a GPU run")
    report.add_argument("--notes", default=None, help="a hand-written markdown file appended verbatim at the end")
    report.set_defaults(func=cmd_report)

    figures = sub.add_parser("figures", help="Figure 2c and Figure 4: condition numbers of the Section 3 model")
    figures.add_argument("--out", default="figures")
    figures.set_defaults(func=cmd_figures)

    corpus = sub.add_parser("corpus", help="write random programs with data (text and JSON) in train/test splits")
    corpus.add_argument("--n", type=count, default=10000, help="number of programs")
    corpus.add_argument("--seed", type=natural, default=0)
    corpus.add_argument("--out", required=True, help="output folder (created; must be empty or absent)")
    corpus.add_argument("--held-out-family", default="student_t_hierarchy", help="family kept out of training")
    corpus.set_defaults(func=cmd_corpus)

    graph = sub.add_parser("graph", help="the typed graph of a model (nodes, edges, element probes)")
    _add_model_arguments(graph)
    graph.add_argument("--json", default=None, help="also write the graph as JSON to this file")
    graph.set_defaults(func=cmd_graph)

    from autoreparam.reliability.cli import add_fuzz_parser, add_report_parser, add_sbc_parser

    add_sbc_parser(sub).set_defaults(func=cmd_sbc)
    add_fuzz_parser(sub).set_defaults(func=cmd_fuzz)
    add_report_parser(sub).set_defaults(func=cmd_reliability)

    models = sub.add_parser("models", help="list the model zoo")
    models.set_defaults(func=cmd_models)

    download = sub.add_parser("download", help="fetch the data files into the user cache (needs a network)")
    download.add_argument("name", nargs="?", default="all")
    download.add_argument("--cache-dir", default=None)
    download.set_defaults(func=cmd_download)

    from autoreparam.meta_eval.commands import add_meta_commands

    add_meta_commands(sub)
    return parser


# Commands whose finished work is kept in their --out folder and skipped on rerun.
RESUMABLE = ("cmd_bench", "cmd_sbc", "cmd_fuzz", "cmd_labels", "cmd_train", "cmd_evaluate")


def main(argv=None) -> int:
    from autoreparam.errors import AutoreparamError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except AutoreparamError as error:
        print(f"autoreparam: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Only the commands that keep finished work say so (``run`` said it too; found in review).
        resumable = getattr(args, "out", None) is not None and args.func.__name__ in RESUMABLE
        print("autoreparam: interrupted" + ("; finished work is kept and skipped on rerun" if resumable else ""),
              file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
