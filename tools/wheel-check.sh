#!/bin/sh
# wheel-check.sh DIST [OUT]: install each wheel of DIST into a fresh virtual
# environment that holds nothing else (no numpy, no source tree on the path, the
# build folders out of reach), and run, through the wheel's own `samebits`
# console script: `version` (the binary's facts and the package's build facts),
# `doctor`, `verify` at 1 and 2 threads (every pinned fixture against the
# reference cards carried in the wheel), `check-fixture --dir` on the cards
# installed with it, and `verify device=cuda`, which must be a named refusal
# (SB_ERR_BACKEND_UNAVAILABLE) where no CUDA driver is, never an import error.
# Then `import samebits` and a small fit through the package's Python API.
# The x86-64 wheel runs natively; the aarch64 wheel under qemu-user with
# Debian's own arm64 CPython (tools/qemu-python.sh: binfmt is not registered
# here, so each aarch64 program is started through qemu-aarch64 -L SYSROOT).
# Each wheel's outputs go to OUT/<wheel>/ (default build/wheel-check/): the
# evidence of the artifact class "installed wheel". Exit 0 only if every step
# of every wheel passed.
set -u
DIST=${1:-dist}
OUT=${2:-build/wheel-check}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
PY=${PY:-python3}
# The installed wheel must load its own library and nothing of the tree: a
# SAMEBITS_LIB or PYTHONPATH inherited from the caller (a test process) would
# point it elsewhere (the aarch64 wheel at the x86-64 build).
unset SAMEBITS_LIB PYTHONPATH
status=0
mkdir -p "$OUT"
ls "$DIST"/samebits-*.whl >/dev/null 2>&1 || { echo "wheel-check: no wheel in $DIST (make wheels)" >&2; exit 2; }

step() { # NAME EXPECT(pass|refused) COMMAND...: run, record, judge
  name=$1; want=$2; shift 2
  "$@" >"$W/$name.txt" 2>&1
  rc=$?
  case $want in
    pass) ok=$([ $rc = 0 ] && echo yes || echo no) ;;
    refused) ok=$(grep -q "REFUSED SB_ERR_BACKEND_UNAVAILABLE" "$W/$name.txt" && [ $rc = 1 ] && echo yes || echo no) ;;
  esac
  echo "$name: rc $rc, $ok" >>"$W/summary.txt"
  if [ "$ok" = yes ]; then echo "  $name: ok"; else echo "  $name: FAILED (rc $rc)"; tail -5 "$W/$name.txt"; status=1; fi
}

for whl in "$DIST"/samebits-*.whl; do
  base=$(basename "$whl" .whl)
  arch=$(echo "$base" | sed 's/.*_\(x86_64\|aarch64\)$/\1/')
  W="$OUT/$base"
  rm -rf "$W"
  mkdir -p "$W"
  VENV=$(mktemp -d /tmp/sb-wheel-venv.XXXXXX)
  echo "wheel-check: $base ($arch), venv $VENV"
  if [ "$arch" = x86_64 ]; then
    run() { "$@"; }
    HOSTPY=$PY
  elif [ "$arch" = aarch64 ]; then
    run() { sh "$ROOT/tools/qemu-python.sh" run "$@"; }
    HOSTPY="sh $ROOT/tools/qemu-python.sh python"
    # the console script starts the wheel's aarch64 CLI through qemu (samebits/_cli.py)
    SAMEBITS_CLI_LAUNCHER="${QEMU_AARCH64:-qemu-aarch64} -L $(sh "$ROOT/tools/qemu-python.sh" sysroot)"
    export SAMEBITS_CLI_LAUNCHER
  else
    echo "wheel-check: $base: unknown architecture" >&2; status=1; continue
  fi
  # shellcheck disable=SC2086
  if ! $HOSTPY -m venv "$VENV" >"$W/venv.txt" 2>&1; then
    echo "  venv: FAILED"; cat "$W/venv.txt"; status=1; rm -rf "$VENV"; continue
  fi
  step install pass run "$VENV/bin/python" -m pip install --no-index --no-deps --no-cache-dir -q "$whl"
  step pip-list pass run "$VENV/bin/python" -m pip list --format=freeze
  extra=$(grep -v -E '^(pip|setuptools|samebits)==' "$W/pip-list.txt" || true)
  [ -z "$extra" ] || { echo "  pip-list: the venv holds more than pip, setuptools and samebits: $extra"; status=1; }
  # The console script is a Python script: started by the venv's interpreter.
  SB="$VENV/bin/samebits"
  cd /tmp || exit 2  # out of the source tree: nothing of it on the path
  step version pass run "$VENV/bin/python" "$SB" version
  step doctor pass run "$VENV/bin/python" "$SB" doctor
  step verify-t1 pass run "$VENV/bin/python" "$SB" verify --threads 1
  step verify-t2 pass run "$VENV/bin/python" "$SB" verify --threads 2
  cards=$(run "$VENV/bin/python" -c "import os, samebits; print(os.path.join(os.path.dirname(samebits.__file__), 'cards'))")
  step check-fixture pass run "$VENV/bin/python" "$SB" check-fixture --dir "$cards"
  if grep -q "CUDA in" "$W/version.txt"; then
    step verify-cuda-refused refused run "$VENV/bin/python" "$SB" verify gbdt-regression device=cuda
  fi
  step python-api pass run "$VENV/bin/python" -c "
import samebits
X = [[float(i % 7), float(i % 5)] for i in range(200)]
y = [float((i % 7) > 3) for i in range(200)]
m = samebits.GradientBoostingClassifier(n_estimators=5).fit(X, y)
print('digest', m.model_digest_)
print('facts', samebits.build_info().get('arch'))
try:
    samebits.GradientBoostingClassifier(n_estimators=2, device='cuda').fit(X, y)
    print('cuda: trained')
except samebits.SameBitsError as e:
    print('cuda: refused', e.status_name)
"
  cd "$ROOT" || exit 2
  rm -rf "$VENV"
  unset SAMEBITS_CLI_LAUNCHER
done
[ $status = 0 ] && echo "wheel-check: pass" || echo "wheel-check: FAIL"
exit $status
