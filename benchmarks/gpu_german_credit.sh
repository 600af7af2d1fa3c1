#!/usr/bin/env bash
# German credit at (near) the paper's scale on one GPU: 100 chains, the five HMC methods, oracle L.
# Run by the session's device tool from the repository root, with .whl (pure-Python wheels the GPU
# image lacks) and .gpu_data (a copy of ../shared/data/german_credit) carried; results come back in
# $OUT as a tarball. Locally: OUT=/tmp/out WHEELS=none bash benchmarks/gpu_german_credit.sh
set -euo pipefail
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
if [ "${WHEELS:-carry}" != none ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:src
fi
export AUTOREPARAM_DATA=${AUTOREPARAM_DATA:-.gpu_data} XDG_CACHE_HOME=/tmp/xdg PYTHONUNBUFFERED=1
python3 -c "import jax, numpyro, blackjax; print('jax', jax.__version__, jax.devices(), 'numpyro', numpyro.__version__)"
python3 -m autoreparam.cli bench --protocol paper --models german_credit \
  --chains "${CHAINS:-100}" --warmup "${WARMUP:-5000}" --samples "${SAMPLES:-10000}" \
  --grid "${GRID:-1,2,4,8,16,32,64,128}" --patience 2 --methods vip,cp,ncp,ihmc,vip_discrete \
  --peers none --extras "" --deadline-minutes "${DEADLINE:-7.5}" --out results/gpu --quiet 2>&1 | tee "$OUT/log.txt"
tar czf "$OUT/gpu_results.tgz" results/gpu
split -b 15m "$OUT/gpu_results.tgz" "$OUT/gpu_results.tgz.part-" && rm "$OUT/gpu_results.tgz"
ls -la "$OUT"
