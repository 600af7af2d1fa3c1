"""`autoreparam meta ...` argument parsing (the commands themselves run in test_commands_slow.py)."""

from __future__ import annotations


def test_the_command_line_offers_every_evaluation_protocol():
    from autoreparam import cli
    from autoreparam.meta_eval.protocol import PROTOCOLS

    parser = cli.build_parser()
    for name in PROTOCOLS:
        assert parser.parse_args(["meta", "evaluate", "--out", "x", "--protocol", name]).protocol == name
