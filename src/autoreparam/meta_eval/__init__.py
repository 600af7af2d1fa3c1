"""Evaluation of the meta-learned parameterisation against per-model VIP (META.md), and the ``meta`` commands.

This package sits above `autoreparam.infer` (it calls ``ar.infer``); `autoreparam.meta` sits below
it and never imports this package.
"""
