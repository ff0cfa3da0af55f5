/* float_eval.h: compile-time guard of the profile's float evaluation (rule 2). */
#ifndef SB_CORE_FLOAT_EVAL_H
#define SB_CORE_FLOAT_EVAL_H
/* Float expressions must be evaluated in float. gcc for s390x in ISO C mode with
 * -fexcess-precision=standard evaluates them in double (FLT_EVAL_METHOD 1),
 * which rounds a*b+c once, like a contraction: refuse to compile instead. */
#if (!defined(__FLT_EVAL_METHOD__) || __FLT_EVAL_METHOD__ != 0) && !defined(SB_SABOTAGE_EXCESS_PRECISION)
#error "samebits: FLT_EVAL_METHOD must be 0 (on s390x build with -fexcess-precision=fast; see docs/numeric-profile.md)"
#endif

#endif
