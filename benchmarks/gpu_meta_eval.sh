#!/usr/bin/env bash
# META.md's model tasks (paper 003's funnel grid, held-out programs, the zoo, other training seeds'
# networks) on a lent GPU machine's 16 CPU cores, through benchmarks/process_pool.py (no Ray there).
# Run by the session's device tool from the repository root with these ignored paths carried:
#   .whl       wheels the machine's image (Python 3.12) lacks: numpyro 0.22.0 always, the others only where
#              an import fails (pure Python, or cp312 builds)
#   .gpu_data  a copy of ../shared/data (the zoo's real data; never committed)
#   runs       the corpus (runs/corpus) and the seed networks (runs/seed_{0,1,2}/meta_gnn.*)
# Results come back in $OUT/ev_fit.tgz (one JSON per finished task); unpacked, the rest runs on a quiet
# machine with the same options (a folder refuses others; what finished is skipped):
#   autoreparam meta evaluate --out runs/ev_fit --corpus runs/corpus --protocol short_3 \
#     --seed-networks runs/seed_0/meta_gnn,runs/seed_1/meta_gnn,runs/seed_2/meta_gnn --num-cpus 2
# Locally: PY=.venv/bin/python OUT=/tmp/out WORKERS=2 DEADLINE=1 bash benchmarks/gpu_meta_eval.sh
set -uo pipefail
PY=${PY:-python3}
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT" /tmp/site
# numpyro must be the pinned one (our transforms need 0.22's pytree registration); the rest only where missing.
"$PY" -c "import numpyro, sys; sys.exit(numpyro.__version__ != '0.22.0')" 2>/dev/null || \
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/numpyro-*.whl
for pair in blackjax:blackjax lark:lark equinox:equinox jaxtyping:jaxtyping wadler_lindig:wadler_lindig \
            optax:optax tqdm:tqdm absl:absl_py arviz:arviz xarray:xarray xarray_einstats:xarray_einstats \
            h5netcdf:h5netcdf h5py:h5py pandas:pandas matplotlib:matplotlib contourpy:contourpy cycler:cycler \
            fontTools:fonttools kiwisolver:kiwisolver PIL:pillow pyparsing:pyparsing dateutil:python_dateutil \
            platformdirs:platformdirs multipledispatch:multipledispatch packaging:packaging \
            typing_extensions:typing_extensions pooch:pooch; do
  "$PY" -c "import ${pair%%:*}" 2>/dev/null || { echo "installing ${pair##*:}";
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/"${pair##*:}"-*.whl; }
done
export JAX_PLATFORMS=cpu PYTHONPATH=/tmp/site:src AUTOREPARAM_DATA=${AUTOREPARAM_DATA:-.gpu_data} XDG_CACHE_HOME=/tmp/xdg PYTHONUNBUFFERED=1
"$PY" -c "import jax, numpyro, blackjax, equinox, optax, arviz, lark; print('jax', jax.__version__, 'numpyro', numpyro.__version__, 'equinox', equinox.__version__, 'arviz', arviz.__version__)" 2>&1 | tee "$OUT/versions.txt"
# An inner limit, so that the results are packed before the device tool's own limit ends the command
# (its file transfer refuses names with "+" and many files: one tarball comes back).
timeout "${LIMIT:-520}" "$PY" benchmarks/process_pool.py meta-evaluate --out "$OUT/ev_fit" --corpus runs/corpus --protocol "${PROTOCOL:-short_3}" \
  --seed-networks runs/seed_0/meta_gnn,runs/seed_1/meta_gnn,runs/seed_2/meta_gnn \
  --workers "${WORKERS:-16}" --deadline-minutes "${DEADLINE:-6}" 2>&1 | tee "$OUT/log.txt"
tar czf "$OUT/ev_fit.tgz" -C "$OUT" ev_fit && rm -rf "$OUT/ev_fit"
