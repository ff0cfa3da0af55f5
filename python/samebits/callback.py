"""LightGBM's training callbacks, as far as a fit in C can honour them.

samebits trains in the C library, which runs no Python between iterations, so
only these three are taken, each mapped onto what the library does itself:

- ``early_stopping(stopping_rounds)``: early_stopping_rounds for this fit (the
  first metric decides, as LightGBM's first_metric_only=True);
- ``log_evaluation(period)``: the library's metric log every period iterations
  (on standard error);
- ``record_evaluation(eval_result)``: eval_result filled with the fit's
  evals_result_ when the fit ends.

Any other callable is refused by name before training.
"""
from .errors import InvalidArgumentError

__all__ = ["early_stopping", "log_evaluation", "record_evaluation"]


class _EarlyStopping:
    def __init__(self, stopping_rounds, first_metric_only, verbose, min_delta):
        if isinstance(stopping_rounds, bool) or not isinstance(stopping_rounds, int) or stopping_rounds < 1:
            raise InvalidArgumentError("early_stopping: stopping_rounds must be a positive integer, got %r"
                                       % (stopping_rounds,))
        if min_delta != 0.0:
            raise InvalidArgumentError("early_stopping: min_delta=%r is not built (an iteration counts as better "
                                       "when its metric is strictly better)" % (min_delta,))
        self.stopping_rounds = stopping_rounds
        self.first_metric_only = bool(first_metric_only)
        self.verbose = bool(verbose)

    def __repr__(self):
        return "samebits.early_stopping(%d)" % self.stopping_rounds


class _LogEvaluation:
    def __init__(self, period):
        if isinstance(period, bool) or not isinstance(period, int) or period < 0:
            raise InvalidArgumentError("log_evaluation: period must be an integer >= 0, got %r" % (period,))
        self.period = period

    def __repr__(self):
        return "samebits.log_evaluation(%d)" % self.period


class _RecordEvaluation:
    def __init__(self, eval_result):
        if not isinstance(eval_result, dict):
            raise InvalidArgumentError("record_evaluation: eval_result must be a dict, got %s"
                                       % type(eval_result).__name__)
        self.eval_result = eval_result

    def __repr__(self):
        return "samebits.record_evaluation(...)"


def early_stopping(stopping_rounds, first_metric_only=False, verbose=True, min_delta=0.0):
    """Stop when the first validation metric has not improved for
    stopping_rounds iterations and keep the trees of the best one (LightGBM's
    callback of that name). Several metrics with first_metric_only=False
    (LightGBM: stop on any) are refused at fit: the library decides on the
    first only. verbose prints LightGBM's two lines about it."""
    return _EarlyStopping(stopping_rounds, first_metric_only, verbose, min_delta)


def log_evaluation(period=1, show_stdv=True):
    """Log the validation metrics every period iterations (0: never), on
    standard error, from the library. show_stdv applies to LightGBM's cv only
    and has no effect here."""
    del show_stdv  # cross-validation's standard deviations: no cv here
    return _LogEvaluation(period)


def record_evaluation(eval_result):
    """Fill the dict eval_result with the fit's evals_result_ when it ends
    ({"valid_0": {metric: [value per iteration]}})."""
    return _RecordEvaluation(eval_result)


def resolve(callbacks, early_stopping_rounds, eval_period, nmetrics):
    """The fit's (early_stopping_rounds, eval_period, records, stopper) from
    the constructor's values and callbacks (None or a list of this module's
    objects); refuses anything else by name, before any training."""
    records, stopper = [], None
    if callbacks is None:
        return early_stopping_rounds, eval_period, records, stopper
    if not isinstance(callbacks, (list, tuple)):
        raise InvalidArgumentError("callbacks must be a list, got %s" % type(callbacks).__name__)
    for cb in callbacks:
        if isinstance(cb, _EarlyStopping):
            if not cb.first_metric_only and nmetrics > 1:
                raise InvalidArgumentError(
                    "early_stopping(first_metric_only=False) with %d metrics: samebits stops on the first metric "
                    "only; pass first_metric_only=True" % nmetrics)
            early_stopping_rounds, stopper = cb.stopping_rounds, cb
        elif isinstance(cb, _LogEvaluation):
            eval_period = cb.period
        elif isinstance(cb, _RecordEvaluation):
            records.append(cb.eval_result)
        else:
            raise InvalidArgumentError(
                "callbacks: %r is not one samebits runs (it trains in C and runs no Python between iterations); "
                "it takes samebits.early_stopping, samebits.log_evaluation and samebits.record_evaluation" % (cb,))
    return early_stopping_rounds, eval_period, records, stopper
