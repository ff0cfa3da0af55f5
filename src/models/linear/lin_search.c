/*
 * lin_search.c: the Moré-Thuente line search (lin_search.h; the paper's
 * Algorithm and its safeguarded step of section 4, with the modified function
 * psi(stp) = f(stp) - f(0) - ftol stp f'(0) in the first stage). Written from
 * the paper.
 */
#include "lin_search.h"
#include <math.h>

#define MT_XTRAPL 1.1 /* the extrapolation bounds before a bracket: [stp + 1.1 (stp - stx), stp + 4 (stp - stx)] */
#define MT_XTRAPU 4.0
#define MT_P66 0.66   /* a bracket not shrunk to 0.66 of its width in two steps is bisected */

static double dmax3(double a, double b, double c) {
    double m = a > b ? a : b;
    return m > c ? m : c;
}

/* gamma of the cubic interpolating two points (slopes da, db; theta from
 * their values), scaled by the largest magnitude against overflow; sgn picks
 * the root each case needs; clamp0 (case 3) takes 0 when the cubic has no
 * real minimizer. */
static double cubic_gamma(double theta, double da, double db, double sgn, int clamp0) {
    const double s = dmax3(fabs(theta), fabs(da), fabs(db));
    double q = (theta / s) * (theta / s) - (da / s) * (db / s);
    if (clamp0 && q < 0.0) q = 0.0;
    double gam = s * sqrt(q);
    return sgn < 0.0 ? -gam : gam;
}

/* The safeguarded step (the paper's section 4): a new trial step from the
 * interval [stx, sty] with values and slopes, and stp with fp, dp; updates
 * the interval. */
static void mt_step(double *stx, double *fx, double *dx, double *sty, double *fy, double *dy, double *stp, double fp,
                    double dp, int32_t *brackt, double stpmin, double stpmax) {
    const double sgnd = dp * (*dx / fabs(*dx));
    double stpf;
    if (fp > *fx) {
        /* case 1: a higher value; the minimum is bracketed */
        const double theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        const double gam = cubic_gamma(theta, *dx, dp, *stp < *stx ? -1.0 : 1.0, 0);
        const double p = (gam - *dx) + theta, q = ((gam - *dx) + gam) + dp, r = p / q;
        const double stpc = *stx + r * (*stp - *stx);
        const double stpq = *stx + ((*dx / ((*fx - fp) / (*stp - *stx) + *dx)) / 2.0) * (*stp - *stx);
        stpf = fabs(stpc - *stx) < fabs(stpq - *stx) ? stpc : stpc + (stpq - stpc) / 2.0;
        *brackt = 1;
    } else if (sgnd < 0.0) {
        /* case 2: lower, slopes of opposite sign; bracketed */
        const double theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        const double gam = cubic_gamma(theta, *dx, dp, *stp > *stx ? -1.0 : 1.0, 0);
        const double p = (gam - dp) + theta, q = ((gam - dp) + gam) + *dx, r = p / q;
        const double stpc = *stp + r * (*stx - *stp);
        const double stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
        *brackt = 1;
    } else if (fabs(dp) < fabs(*dx)) {
        /* case 3: lower, same sign, the slope's magnitude decreasing */
        const double theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        const double gam = cubic_gamma(theta, *dx, dp, *stp > *stx ? -1.0 : 1.0, 1);
        const double p = (gam - dp) + theta, q = (gam + (*dx - dp)) + gam, r = p / q;
        double stpc;
        if (r < 0.0 && gam != 0.0) stpc = *stp + r * (*stx - *stp);
        else stpc = *stp > *stx ? stpmax : stpmin;
        const double stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        if (*brackt) {
            stpf = fabs(stpc - *stp) < fabs(stpq - *stp) ? stpc : stpq;
            const double lim = *stp + MT_P66 * (*sty - *stp);
            if (*stp > *stx) stpf = stpf < lim ? stpf : lim;
            else stpf = stpf > lim ? stpf : lim;
        } else {
            stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
            stpf = stpf < stpmax ? stpf : stpmax;
            stpf = stpf > stpmin ? stpf : stpmin;
        }
    } else {
        /* case 4: lower, same sign, the slope not decreasing */
        if (*brackt) {
            const double theta = 3.0 * (fp - *fy) / (*sty - *stp) + *dy + dp;
            const double gam = cubic_gamma(theta, *dy, dp, *stp > *sty ? -1.0 : 1.0, 0);
            const double p = (gam - dp) + theta, q = ((gam - dp) + gam) + *dy, r = p / q;
            stpf = *stp + r * (*sty - *stp);
        } else {
            stpf = *stp > *stx ? stpmax : stpmin;
        }
    }
    /* the interval that holds a minimizer */
    if (fp > *fx) {
        *sty = *stp;
        *fy = fp;
        *dy = dp;
    } else {
        if (sgnd < 0.0) {
            *sty = *stx;
            *fy = *fx;
            *dy = *dx;
        }
        *stx = *stp;
        *fx = fp;
        *dx = dp;
    }
    *stp = stpf;
}

void sb_mt_start(sb_mt *s, double stp0, double f0, double g0) {
    s->ftol = 1e-3;
    s->gtol = 0.9;
    s->xtol = 0.1;
    s->stpmin = 0.0;
    s->stpmax = 1e10;
    s->stp = stp0 < s->stpmax ? stp0 : s->stpmax;
    s->brackt = 0;
    s->stage = 1;
    s->finit = f0;
    s->ginit = g0;
    s->gtest = s->ftol * g0;
    s->width = s->stpmax - s->stpmin;
    s->width1 = 2.0 * s->width;
    s->stx = 0.0;
    s->fx = f0;
    s->gx = g0;
    s->sty = 0.0;
    s->fy = f0;
    s->gy = g0;
    s->stmin = 0.0;
    s->stmax = s->stp + MT_XTRAPU * s->stp;
}

sb_mt_task sb_mt_next(sb_mt *s, double f, double g) {
    const double ftest = s->finit + s->stp * s->gtest;
    if (s->stage == 1 && f <= ftest && g >= 0.0) s->stage = 2;
    /* the ends of the search: rounding, the interval's width, the bounds */
    int warn = 0;
    if (s->brackt && (s->stp <= s->stmin || s->stp >= s->stmax)) warn = 1;
    if (s->brackt && s->stmax - s->stmin <= s->xtol * s->stmax) warn = 1;
    if (s->stp == s->stpmax && f <= ftest && g <= s->gtest) warn = 1;
    if (s->stp == s->stpmin && (f > ftest || g >= s->gtest)) warn = 1;
    if (f <= ftest && fabs(g) <= s->gtol * (-s->ginit)) return SB_MT_CONVERGED;
    if (warn) return SB_MT_WARNING;
    /* the first stage works on psi (the modified function) while psi is not
     * yet below zero but f has not risen above the best value */
    if (s->stage == 1 && f <= s->fx && f > ftest) {
        double fm = f - s->stp * s->gtest, fxm = s->fx - s->stx * s->gtest, fym = s->fy - s->sty * s->gtest;
        double gm = g - s->gtest, gxm = s->gx - s->gtest, gym = s->gy - s->gtest;
        mt_step(&s->stx, &fxm, &gxm, &s->sty, &fym, &gym, &s->stp, fm, gm, &s->brackt, s->stmin, s->stmax);
        s->fx = fxm + s->stx * s->gtest;
        s->fy = fym + s->sty * s->gtest;
        s->gx = gxm + s->gtest;
        s->gy = gym + s->gtest;
    } else {
        mt_step(&s->stx, &s->fx, &s->gx, &s->sty, &s->fy, &s->gy, &s->stp, f, g, &s->brackt, s->stmin, s->stmax);
    }
    if (s->brackt) {
        if (fabs(s->sty - s->stx) >= MT_P66 * s->width1) s->stp = s->stx + 0.5 * (s->sty - s->stx);
        s->width1 = s->width;
        s->width = fabs(s->sty - s->stx);
        s->stmin = s->stx < s->sty ? s->stx : s->sty;
        s->stmax = s->stx > s->sty ? s->stx : s->sty;
    } else {
        s->stmin = s->stp + MT_XTRAPL * (s->stp - s->stx);
        s->stmax = s->stp + MT_XTRAPU * (s->stp - s->stx);
    }
    if (s->stp < s->stpmin) s->stp = s->stpmin;
    if (s->stp > s->stpmax) s->stp = s->stpmax;
    /* no better step can be found: the best so far */
    if ((s->brackt && (s->stp <= s->stmin || s->stp >= s->stmax)) ||
        (s->brackt && s->stmax - s->stmin <= s->xtol * s->stmax))
        s->stp = s->stx;
    return SB_MT_AGAIN;
}
