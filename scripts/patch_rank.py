"""Bring stored graphs (label files) up to main's rank feature: the number of axes larger than 1.

main changed only this node feature (column "rank") after the labels were written; the node shapes
are stored, so the new value is recomputed from them exactly, without rebuilding the graph.
"""
import json
import sys
from pathlib import Path

from autoreparam.graph.features import NODE_FEATURES

RANK = [name for name, _ in NODE_FEATURES].index("rank")
changed = total = 0
for folder in sys.argv[1:]:
    for path in sorted(Path(folder).glob("*.graph.json")):
        g = json.loads(path.read_text())
        new = False
        for row, shape in zip(g["node_features"], g["node_shape"]):
            rank = float(sum(1 for d in shape if d > 1))
            if row[RANK] != rank:
                row[RANK], new = rank, True
        total += 1
        if new:
            changed += 1
            path.write_text(json.dumps(g))
print(f"{changed} of {total} graphs changed")
