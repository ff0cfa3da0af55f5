#!/bin/sh
# demo.sh BUILD_DIR: the main job of `make demo`.
#  1. samebits doctor (build facts and the self-check against reference cards);
#  2. a card demo: one fixture on 1 and 3 threads, compared stage by stage;
#  3. gradient boosting on a real dataset that a registry package ships:
#     Fashion-MNIST (Debian's dataset-fashion-mnist: 60,000 training and 10,000
#     test images of 28x28 pixels, 10 classes), installed when missing. It prints
#     the held-out accuracy, the model digest, and the digest recorded for the
#     same command on x86-64, aarch64 and s390x (fixtures/demo/).
set -eu
B=${1:-build}
SB="$B/samebits"
DATA=/usr/share/datasets/fashion-mnist
WORK="$B/demo"
mkdir -p "$WORK"

echo "== 1. samebits doctor"
status=0
"$SB" doctor || status=1

echo
echo "== 2. identity cards: the logit-train fixture on 1 and 3 threads"
"$SB" fixture run logit-train --threads 1 --out "$WORK/logit-1.card"
"$SB" fixture run logit-train --threads 3 --out "$WORK/logit-3.card"
"$SB" card diff "$WORK/logit-1.card" "$WORK/logit-3.card"

echo
echo "== 3. gradient boosting on Fashion-MNIST"
if [ ! -e "$DATA/train-images-idx3-ubyte.gz" ]; then
  echo "installing Debian's dataset-fashion-mnist (30 MB)"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq dataset-fashion-mnist >/dev/null || {
    echo "demo: cannot install dataset-fashion-mnist; run 'apt-get install dataset-fashion-mnist' as root" >&2
    exit 1
  }
fi
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  if [ ! -e "$WORK/$f" ]; then
    gzip -dc "$DATA/$f.gz" > "$WORK/$f.tmp"
    mv "$WORK/$f.tmp" "$WORK/$f"
  fi
done
PARAMS=$(cat fixtures/demo/fashion-mnist.params)
# shellcheck disable=SC2086
"$SB" train --model gbdt --data "$WORK/train-images-idx3-ubyte" --valid "$WORK/t10k-images-idx3-ubyte" \
  --objective multiclass $PARAMS --out "$WORK/fashion-mnist.sbm" | tee "$WORK/train.out"
"$SB" predict --model "$WORK/fashion-mnist.sbm" --data "$WORK/t10k-images-idx3-ubyte" --out "$WORK/pred.csv"
gzip -dc "$DATA/t10k-labels-idx1-ubyte.gz" | tail -c +9 | od -An -v -tu1 -w1 | tr -d ' ' > "$WORK/truth.txt"
acc=$(paste -d, "$WORK/pred.csv" "$WORK/truth.txt" | awk -F, '{ n++; if ($1 + 0 == $2 + 0) ok++ } END { printf "%.4f", ok / n }')
digest=$(sed -n 's/^model digest: //p' "$WORK/train.out")
echo
echo "held-out accuracy (10,000 test images): $acc"
echo "model digest:     $digest"
while read -r leg ref; do
  case "$leg" in "#"*|"") continue ;; esac
  if [ "$ref" = "$digest" ]; then verdict="identical"; else verdict="DIFFERS"; status=1; fi
  echo "reference $leg: $ref  $verdict"
done < fixtures/demo/fashion-mnist.digests
exit $status
