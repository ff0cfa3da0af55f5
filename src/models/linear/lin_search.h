/*
 * lin_search.h: the line search of the linear family's quasi-Newton fits, the
 * method of Moré and Thuente ("Line search algorithms with guaranteed
 * sufficient decrease", ACM TOMS 20(3), 1994), which scipy's L-BFGS-B (and so
 * scikit-learn's solver="lbfgs") uses with ftol 1e-3, gtol 0.9, xtol 0.1.
 *
 * Reverse communication: the caller evaluates f and its slope along the
 * direction at the step the search asks for, and hands them back. The search
 * state is host double arithmetic in one fixed order (sqrt and the four basic
 * operations are correctly rounded on every certified host, no contraction
 * under the profile's flags), so the sequence of steps is a function of the
 * values handed in alone.
 */
#ifndef SB_MODELS_LINEAR_LIN_SEARCH_H
#define SB_MODELS_LINEAR_LIN_SEARCH_H
#include <stdint.h>

typedef enum sb_mt_task {
    SB_MT_AGAIN = 0,     /* evaluate f and its slope at stp, call sb_mt_next */
    SB_MT_CONVERGED = 1, /* stp satisfies the strong Wolfe conditions */
    SB_MT_WARNING = 2    /* no further progress (interval or rounding limits): stp is the best found */
} sb_mt_task;

typedef struct sb_mt {
    double stp;                                  /* the step to evaluate next (or the result) */
    double ftol, gtol, xtol, stpmin, stpmax;     /* the method's constants */
    double finit, ginit, gtest, width, width1;   /* at the start of the search */
    double stx, fx, gx, sty, fy, gy;             /* the interval's ends: step, value, slope */
    double stmin, stmax;                         /* the current step bounds */
    int32_t brackt, stage;
} sb_mt;

/* Starts a search from f0 (the value at step 0) and g0 (the slope there,
 * negative) with first trial stp0 > 0 and scikit-learn's constants. */
void sb_mt_start(sb_mt *s, double stp0, double f0, double g0);

/* f and g at s->stp; returns what to do next (s->stp updated when AGAIN). */
sb_mt_task sb_mt_next(sb_mt *s, double f, double g);

#endif
