#!/usr/bin/env bash
# META.md's model tasks (paper 003's funnel grid, held-out programs, the zoo, other training seeds'
# networks) on a lent GPU machine's 16 CPU cores, through benchmarks/process_pool.py (no Ray there).
# Run by the session's device tool from the repository root with these ignored paths carried:
#   .whl       wheels (benchmarks/gpu_site.sh says which)
#   .gpu_data  a copy of ../shared/data (the zoo's real data; never committed)
#   runs       the corpus (runs/corpus) and the seed networks (runs/seed_{0,1,2}/meta_gnn.*)
# Results come back in $OUT/ev_fit.tgz (one JSON per finished task); unpacked, the rest runs on a quiet
# machine with the same options (a folder refuses others; what finished is skipped):
#   autoreparam meta evaluate --out runs/ev_fit --corpus runs/corpus --protocol short_3 \
#     --seed-networks runs/seed_0/meta_gnn,runs/seed_1/meta_gnn,runs/seed_2/meta_gnn --num-cpus 2
# Locally: PY=.venv/bin/python OUT=/tmp/out WORKERS=2 DEADLINE=1 bash benchmarks/gpu_meta_eval.sh
set -uo pipefail
source benchmarks/gpu_site.sh
# An inner limit, so that the results are packed before the device tool's own limit ends the command
# (its file transfer refuses names with "+" and many files: one tarball comes back).
timeout "${LIMIT:-520}" "$PY" benchmarks/process_pool.py meta-evaluate --out "$OUT/ev_fit" --corpus runs/corpus --protocol "${PROTOCOL:-short_3}" \
  --seed-networks runs/seed_0/meta_gnn,runs/seed_1/meta_gnn,runs/seed_2/meta_gnn \
  --workers "${WORKERS:-16}" --deadline-minutes "${DEADLINE:-6}" 2>&1 | tee "$OUT/log.txt"
tar czf "$OUT/ev_fit.tgz" -C "$OUT" ev_fit && rm -rf "$OUT/ev_fit"
