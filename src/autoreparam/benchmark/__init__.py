"""The benchmark harness behind ``autoreparam bench`` and ``autoreparam report`` (paper 000 Section 6).

Cells (model x method x L x seed, plus peers) write their results as soon as they finish and are
skipped when rerun, so an interrupted benchmark loses nothing.
"""
