#!/bin/sh
# device-h200-wheel.sh WHEEL: the installed-wheel checks on a GPU machine (the
# device tool), for tools/evidence_wheel.py --device-run. WHEEL (the x86-64
# wheel of dist/, carried with the checkout) is installed with no index and
# no dependencies into a fresh virtual environment; its console script then
# writes version.txt, doctor.txt, verify-cuda.txt, verify-opencl.txt and
# verify-cpu-t16.txt, and nvidia-smi gpu.txt, all packed as $OUT/wheel.tar.gz
# (the device tool brings back few files). Exit status: nonzero when the
# install fails or a verify finds a fixture that differs or errs.
set -u
W=${1:?usage: device-h200-wheel.sh WHEEL}
OUT=${OUT:-/tmp/out}
D=$(mktemp -d)
V=$(mktemp -d)/venv
rc=0
python3 -m venv "$V" && "$V/bin/pip" install -q --no-index --no-deps "$W" >"$D/pip.txt" 2>&1 || {
  echo "device-h200-wheel: installing $W failed" >&2; cat "$D/pip.txt" >&2; exit 1; }
[ -f /etc/OpenCL/vendors/nvidia.icd ] || echo libnvidia-opencl.so.1 >/etc/OpenCL/vendors/nvidia.icd
S="$V/bin/samebits"
"$S" version >"$D/version.txt" 2>&1
"$S" doctor >"$D/doctor.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1 >"$D/gpu.txt"
"$S" verify device=cuda >"$D/verify-cuda.txt" 2>&1
"$S" verify device=opencl >"$D/verify-opencl.txt" 2>&1
"$S" verify --threads 16 >"$D/verify-cpu-t16.txt" 2>&1
for f in verify-cuda verify-opencl verify-cpu-t16; do
  if grep -E 'DIFFERS|ERROR' "$D/$f.txt" >/dev/null; then rc=1; fi
  echo "$f: $(tail -n 2 "$D/$f.txt" | tr '\n' ' ')"
done
mkdir -p "$OUT"
tar -czf "$OUT/wheel.tar.gz" -C "$D" version.txt doctor.txt gpu.txt verify-cuda.txt verify-opencl.txt verify-cpu-t16.txt
exit $rc
