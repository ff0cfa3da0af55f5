#!/usr/bin/env bash
# device-timing.sh: where the time of a GPU fit goes, on a lent GPU machine in one call
# from the repository root (needs .devdata carried: flights, the LETOR sample). Prints, per
# model, SAMEBITS_FOREST_TIMING=1 and SAMEBITS_CUDA_TIMING=1 phase times of a random forest
# and an Extra Trees fit (32 trees, min_samples_leaf 5, flights-late), then a cProfile of a
# second fit, then the per-operation times of 10 lambdarank trees on the GPU.
#   ROWS=N         forest rows (default 10000000)
#   TWICE=1        time a second fit in the same process (no CUDA context to create)
#   NO_PROFILE=1   skip the cProfile fit;  FOREST_ONLY=1   skip the ranking part
export PATH=$PATH:/usr/local/cuda/bin
make -j16 CC=gcc CUDA=1 all >/dev/null 2>&1 || exit 2
make -j16 CC=gcc all >/dev/null 2>&1 || exit 2
for M in RandomForest ExtraTrees; do
SAMEBITS_FOREST_TIMING=1 SAMEBITS_CUDA_TIMING=1 SAMEBITS_LIB=$PWD/build-cuda/libsamebits.so PYTHONPATH=$PWD/python:$PWD/bench timeout 200 python3 -c "
import time, numpy as np, samebits, forest_gpu_bench as fb
t0 = time.perf_counter(); X, y, Xt, yt = fb.load('.devdata', ${ROWS:-10000000}); print('load %.2f' % (time.perf_counter() - t0))
samebits.set_num_threads(16)
e = samebits.${M}Classifier(n_estimators=32, min_samples_leaf=5, random_state=0, device='cuda')
t0 = time.perf_counter(); e.fit(X, y); print('$M fit s %.2f' % (time.perf_counter() - t0), flush=True)
import os
if os.environ.get('TWICE') == '1':  # a second fit in the same process: no CUDA context to create
    e = samebits.${M}Classifier(n_estimators=32, min_samples_leaf=5, random_state=0, device='cuda')
    t0 = time.perf_counter(); e.fit(X, y); print('$M second fit s %.2f' % (time.perf_counter() - t0), flush=True)
if os.environ.get('NO_PROFILE') != '1':
    import cProfile, pstats
    e = samebits.${M}Classifier(n_estimators=32, min_samples_leaf=5, random_state=0, device='cuda')
    pr = cProfile.Profile(); pr.enable(); e.fit(X, y); pr.disable(); pstats.Stats(pr).sort_stats('tottime').print_stats(6)
" 2>&1 | grep -v "^$" | grep -v "^ *ncalls\|Ordered\|List reduced" | head -80
done
[ "${FOREST_ONLY:-0}" = 1 ] && exit 0
python3 bench/rank_bench.py --help >/dev/null
PYTHONPATH=$PWD/bench timeout 100 python3 -c "
import sys; sys.argv=['x']; import rank_bench as rb; rb.DATA='.devdata/lightgbm-examples/lambdarank_rank'; print(rb.make_set(1050000, '/tmp'))"
SAMEBITS_CUDA_TIMING=1 timeout 120 build-cuda/samebits train --model gbdt --data /tmp/rank-1050000.svm --objective lambdarank --threads 16 --out /tmp/r.sbm n_estimators=10 num_leaves=63 learning_rate=0.1 max_bin=255 min_samples_leaf=20 min_child_weight=0.001 reg_lambda=0 lambdarank_truncation_level=30 eval_period=0 device=cuda 2>&1 | tail -14
