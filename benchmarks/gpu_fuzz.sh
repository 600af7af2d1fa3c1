#!/usr/bin/env bash
# The invariance check of `autoreparam fuzz` (original-coordinate draws of cp, ncp, a random centring
# and auto agree) on a lent GPU machine's 16 CPU cores, through benchmarks/process_pool.py (no Ray there).
# Run by the session's device tool from the repository root with these ignored paths carried:
#   .whl    wheels (benchmarks/gpu_site.sh says which)
#   STORE   a copy of the local store (cells/, commands.txt; no jax_cache): its finished programs are
#           skipped, and the new cells come back in $OUT/cells.tgz, to unpack into the local store
#           (`tar xzf cells.tgz -C results/STORE`), where `autoreparam reliability` reads them with the rest.
# Locally: PY=.venv/bin/python OUT=/tmp/out STORE=results/x WORKERS=2 DEADLINE=1 bash benchmarks/gpu_fuzz.sh
set -uo pipefail
STORE=${STORE:?the store to continue, e.g. results/fuzz_invariance_final}
source benchmarks/gpu_site.sh
before=$(ls "$STORE/cells" 2>/dev/null | wc -l)
# An inner limit, so that the cells are packed before the device tool's own limit ends the command.
timeout "${LIMIT:-450}" "$PY" benchmarks/process_pool.py fuzz --out "$STORE" --n 0 --mcmc-n "${MCMC_N:-2000}" \
  --mcmc-methods none --workers "${WORKERS:-16}" --deadline-minutes "${DEADLINE:-6}" 2>&1 | tee "$OUT/log.txt"
echo "cells: $before before, $(ls "$STORE/cells" | wc -l) after" | tee -a "$OUT/log.txt"
# Only the cells written here travel back (the file transfer takes few files: one tarball).
(cd "$STORE" && find cells -newer commands.txt -name '*.json' -print0 | tar czf "$OUT/cells.tgz" --null -T -)
cp "$STORE/commands.txt" "$OUT/commands.txt"
