"""``autoreparam meta ...``: labels, train, ensemble, evaluate, report (docs/meta.md).

Every command is resumable: it writes one file per finished unit of work and skips finished units.
"""

from __future__ import annotations

import json
from pathlib import Path

from autoreparam.cli_types import count, natural, naturals


def _add_cluster_arguments(parser) -> None:
    parser.add_argument("--address", default=None, help="join this Ray cluster (default: start a local one)")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray cluster (default: all)")
    parser.add_argument("--serial", action="store_true", help="run the tasks in this process, without Ray")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _splits(text: str) -> tuple[str, ...]:
    return tuple(s for s in text.split(",") if s)


def cmd_labels(args) -> int:
    from autoreparam.meta.labels import make_labels

    summaries = make_labels(args.corpus, args.out, splits=_splits(args.splits), limit=args.limit,
                            address=args.address, num_cpus=args.num_cpus, serial=args.serial,
                            progress=not args.quiet, graphs_only=args.graphs_only, probes=args.probes)
    failed = [s for s in summaries if "error" in s]
    print(f"labelled {len(summaries) - len(failed)} programs now ({len(failed)} failed) in {args.out}")
    return 0


def cmd_train(args) -> int:
    from autoreparam.meta.train import TrainConfig, train

    overrides = {k: getattr(args, k) for k in ("regression_steps", "elbo_steps", "batch_models", "elbo_models")
                 if getattr(args, k) is not None}
    seeds = args.seeds
    labels = None if args.labels is None else [f for f in args.labels.split(",") if f]
    cards = train(args.corpus, labels, args.out, TrainConfig(**overrides), seeds=seeds,
                  progress=not args.quiet, limit=args.limit)
    print("\n".join(str(c) for c in cards))
    return 0


def cmd_synthetic(args) -> int:
    from autoreparam.meta.synthetic import write_synthetic

    print(write_synthetic(args.out, args.n, args.seed, args.layout))
    return 0


def cmd_prototype(args) -> int:
    from autoreparam.meta.prototype_train import PrototypeConfig, train_prototype

    print(train_prototype(args.out, PrototypeConfig(seed=args.seed), progress=not args.quiet))
    return 0


def cmd_evaluate(args) -> int:
    from autoreparam.meta_eval.run import PARTS, evaluate

    parts = _splits(args.parts) if args.parts else PARTS
    seeds = tuple(s for s in (args.seed_networks or "").split(",") if s)
    out = evaluate(args.out, corpus=args.corpus, protocol=args.protocol, network=args.network, seed_networks=seeds,
                   prototype=args.prototype, parts=parts, address=args.address, num_cpus=args.num_cpus,
                   serial=args.serial, progress=not args.quiet)
    print(f"evaluation results in {out}; `autoreparam meta report --results {out}` writes META.md")
    return 0


def cmd_ensemble(args) -> int:
    from autoreparam.meta.weights import save_ensemble

    print(save_ensemble(args.out, [s for s in args.networks.split(",") if s]))
    return 0


def cmd_report(args) -> int:
    from autoreparam.errors import ArgumentError
    from autoreparam.meta_eval.report import write_report

    if args.light_results and not args.card:
        raise ArgumentError("--light-results adds a section to the model card: give --card with it")
    if args.card:
        from autoreparam.meta.predict import SHIPPED

        # The card is the shipped default's: refuse results of another network (a default of the past).
        name = json.loads((Path(args.results) / "protocol.json").read_text()).get("network_name") \
            if (Path(args.results) / "protocol.json").exists() else None
        if name != SHIPPED:
            raise ArgumentError(f"--card writes the card of the default network {SHIPPED!r}, but {args.results} "
                                f"evaluated {name or 'a network it does not name'}; run the report without --card")
    print(write_report(args.results, args.out, runs=tuple(r for r in (args.runs or "").split(",") if r)))
    if args.card:
        from autoreparam.meta.predict import CARDS, SHIPPED, shipped_stem
        from autoreparam.meta_eval.card import write_model_card

        print(write_model_card(shipped_stem(), args.results, shipped_stem().parent / CARDS[SHIPPED],
                               light_results=args.light_results))
    return 0


def add_meta_commands(sub) -> None:
    meta = sub.add_parser("meta", help="the meta-learned parameterisation: labels, train, evaluate, report")
    commands = meta.add_subparsers(dest="meta_command", required=True)

    labels = commands.add_parser("labels", help="graphs and VIP/CP/NCP fits of a corpus's programs (Ray tasks)")
    labels.add_argument("--corpus", required=True, help="a folder written by `autoreparam corpus`")
    labels.add_argument("--out", required=True, help="labels folder (resumable)")
    labels.add_argument("--splits", default="train", help="comma-separated splits, e.g. train,interpolation")
    labels.add_argument("--limit", type=count, default=None, help="the first N programs of each split")
    labels.add_argument("--graphs-only", action="store_true",
                        help="graphs and site plans only, no fits (programs with a closed-form optimum)")
    labels.add_argument("--probes", choices=("prior", "fit"), default="prior",
                        help="read the graphs' probes at the prior points (default) or at a short non-centred "
                             "fit's mean and +-1 sd; the network trained on these labels reads them there")
    _add_cluster_arguments(labels)
    labels.set_defaults(func=cmd_labels)

    train = commands.add_parser("train", help="train the graph network (checkpoints, resume)")
    train.add_argument("--corpus", required=True)
    train.add_argument("--labels", default=None, help="comma-separated labels folders (default: CORPUS/labels)")
    train.add_argument("--out", required=True, help="run folder: checkpoints, log, final weights")
    train.add_argument("--seeds", type=naturals, default=(0,),
                       help="comma-separated training seeds, one run each (out/seed_S)")
    # Checked here: --limit -2 trained on all but the last 2 programs, --elbo-models 0 failed deep inside
    # (found in review).
    train.add_argument("--regression-steps", type=natural, default=None, help="warm-start steps (regression on VIP)")
    train.add_argument("--elbo-steps", type=natural, default=None, help="steps of the ELBO objective")
    train.add_argument("--batch-models", type=count, default=None, help="models per step")
    train.add_argument("--elbo-models", type=count, default=None, help="models in the ELBO phase (default: all)")
    train.add_argument("--limit", type=count, default=None, help="train on the first N labelled programs")
    train.add_argument("--quiet", action="store_true")
    train.set_defaults(func=cmd_train)

    synthetic = commands.add_parser("synthetic", help="known-scale Gaussian hierarchies with closed-form optimum")
    synthetic.add_argument("--out", required=True)
    synthetic.add_argument("--n", type=count, default=200)
    synthetic.add_argument("--seed", type=natural, default=1)
    synthetic.add_argument("--layout", default="balanced", choices=["balanced", "indexed"],
                           help="balanced: y[j, n] per group; indexed: flat y[n] reaching mu[group[n]], groups of "
                                "unequal sizes (as real data arrive)")
    synthetic.set_defaults(func=cmd_synthetic)

    proto = commands.add_parser("prototype", help="train paper 003's prototype network (the baseline) on funnels")
    proto.add_argument("--out", required=True, help="weights stem, e.g. src/autoreparam/meta/weights/prototype")
    proto.add_argument("--seed", type=natural, default=0)
    proto.add_argument("--quiet", action="store_true")
    proto.set_defaults(func=cmd_prototype)

    ensemble = commands.add_parser("ensemble", help="stack networks trained with different seeds into one "
                                                    "(their lambda averaged)")
    ensemble.add_argument("--networks", required=True,
                          help="comma-separated network stems, e.g. RUN/seed_0/meta_gnn,RUN/seed_1/meta_gnn")
    ensemble.add_argument("--out", required=True, help="stem of the ensemble, e.g. src/autoreparam/meta/weights/meta_gnn")
    ensemble.set_defaults(func=cmd_ensemble)

    evaluate = commands.add_parser("evaluate", help="META.md's measurements: funnel grid, held-out, zoo, timing")
    evaluate.add_argument("--out", required=True, help="results folder (resumable)")
    evaluate.add_argument("--corpus", default=None, help="corpus whose held-out splits are evaluated")
    evaluate.add_argument("--protocol", default="cpu", choices=["cpu", "short", "short_3", "tiny", "full"])
    evaluate.add_argument("--network", default=None, help="network stem (default: the shipped weights)")
    evaluate.add_argument("--seed-networks", default=None, help="comma-separated stems of other training seeds")
    evaluate.add_argument("--prototype", default=None, help="prototype stem (default: the shipped one)")
    evaluate.add_argument("--parts", default=None, help="comma-separated: checks,funnel,held_out,zoo,timing,seeds")
    _add_cluster_arguments(evaluate)
    evaluate.set_defaults(func=cmd_evaluate)

    report = commands.add_parser("report", help="write META.md and its figures from evaluation results")
    report.add_argument("--results", required=True)
    report.add_argument("--out", default=".", help="folder for META.md (figures go to OUT/figures/meta)")
    report.add_argument("--runs", default=None, help="comma-separated training run folders (seeds)")
    report.add_argument("--card", action="store_true",
                        help="also write the default network's card (meta/weights/MODEL_CARD_fit.md), which the "
                             "evaluation ran as 'meta'")
    report.add_argument("--light-results", default=None,
                        help="with --card: a folder benchmarks/meta_fit_points.py wrote, whose comparison with the "
                             "network read at the prior points the card adds")
    report.set_defaults(func=cmd_report)


__all__ = ["add_meta_commands"]
