# Sourced by the scripts run on a lent GPU machine (gpu_meta_eval.sh, gpu_fuzz.sh): install the carried
# wheels (.whl) that machine's image (Python 3.12) lacks into /tmp/site, and set the environment of a
# CPU-only run (JAX on the CPU cores; the GPU is not used by these tasks).
#   .whl  numpyro 0.22.0 always (the image has 0.21; our transforms need 0.22's pytree registration);
#         the others only where an import fails: blackjax, lark, arviz, xarray_einstats, h5netcdf,
#         platformdirs, pooch (the image has the rest, benchmarks' KINDS.md list)
PY=${PY:-python3}
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT" /tmp/site
PYTHONPATH=/tmp/site "$PY" -c "import numpyro, sys; sys.exit(numpyro.__version__ != '0.22.0')" 2>/dev/null || \
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/numpyro-*.whl
for pair in blackjax:blackjax lark:lark equinox:equinox jaxtyping:jaxtyping wadler_lindig:wadler_lindig \
            optax:optax tqdm:tqdm absl:absl_py arviz:arviz xarray:xarray xarray_einstats:xarray_einstats \
            h5netcdf:h5netcdf h5py:h5py pandas:pandas matplotlib:matplotlib contourpy:contourpy cycler:cycler \
            fontTools:fonttools kiwisolver:kiwisolver PIL:pillow pyparsing:pyparsing dateutil:python_dateutil \
            platformdirs:platformdirs multipledispatch:multipledispatch packaging:packaging \
            typing_extensions:typing_extensions pooch:pooch; do
  PYTHONPATH=/tmp/site "$PY" -c "import ${pair%%:*}" 2>/dev/null || { echo "installing ${pair##*:}";
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/"${pair##*:}"-*.whl; }
done
export JAX_PLATFORMS=cpu PYTHONPATH=/tmp/site:src AUTOREPARAM_DATA=${AUTOREPARAM_DATA:-.gpu_data} XDG_CACHE_HOME=/tmp/xdg PYTHONUNBUFFERED=1
"$PY" -c "import jax, numpyro, blackjax, equinox, optax, arviz, lark; print('jax', jax.__version__, 'numpyro', numpyro.__version__, 'equinox', equinox.__version__, 'arviz', arviz.__version__)" 2>&1 | tee "$OUT/versions.txt"
