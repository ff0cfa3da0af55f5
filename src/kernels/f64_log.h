/*
 * f64_log.h: the profile's double natural logarithm, in native IEEE binary64,
 * for the host (sb_elem_host.h's float32 paths round it) and for the float64
 * kernels of a family that states float64 (exponential smoothing: its
 * information criteria, kernels/ets.h), compiled where the device has IEEE
 * doubles (OpenCL's cl_khr_fp64, CUDA). Only + - * and exact bit moves: each
 * result is the same double on every machine that rounds binary64 to nearest
 * without contraction. Method and error bounds: sb_elem_host.h's header (Tang,
 * ACM TOMS 16(4), 1990).
 */
#ifndef SB_KERNELS_F64_LOG_H
#define SB_KERNELS_F64_LOG_H
#include "compat.h"
#define SB__HX_LN2_HI 0x1.62e42fefa3800p-1
#define SB__HX_LN2_LO 0x1.ef35793c76730p-45
/* 1 / F_j, F_j = 1 + j/128, rounded to nearest double. */
SB_TABLE double sb__hx_invf[128] = {
    0x1.0000000000000p+0, 0x1.fc07f01fc07f0p-1, 0x1.f81f81f81f820p-1, 0x1.f44659e4a4271p-1,
    0x1.f07c1f07c1f08p-1, 0x1.ecc07b301ecc0p-1, 0x1.e9131abf0b767p-1, 0x1.e573ac901e574p-1,
    0x1.e1e1e1e1e1e1ep-1, 0x1.de5d6e3f8868ap-1, 0x1.dae6076b981dbp-1, 0x1.d77b654b82c34p-1,
    0x1.d41d41d41d41dp-1, 0x1.d0cb58f6ec074p-1, 0x1.cd85689039b0bp-1, 0x1.ca4b3055ee191p-1,
    0x1.c71c71c71c71cp-1, 0x1.c3f8f01c3f8f0p-1, 0x1.c0e070381c0e0p-1, 0x1.bdd2b899406f7p-1,
    0x1.bacf914c1bad0p-1, 0x1.b7d6c3dda338bp-1, 0x1.b4e81b4e81b4fp-1, 0x1.b2036406c80d9p-1,
    0x1.af286bca1af28p-1, 0x1.ac5701ac5701bp-1, 0x1.a98ef606a63bep-1, 0x1.a6d01a6d01a6dp-1,
    0x1.a41a41a41a41ap-1, 0x1.a16d3f97a4b02p-1, 0x1.9ec8e951033d9p-1, 0x1.9c2d14ee4a102p-1,
    0x1.999999999999ap-1, 0x1.970e4f80cb872p-1, 0x1.948b0fcd6e9e0p-1, 0x1.920fb49d0e229p-1,
    0x1.8f9c18f9c18fap-1, 0x1.8d3018d3018d3p-1, 0x1.8acb90f6bf3aap-1, 0x1.886e5f0abb04ap-1,
    0x1.8618618618618p-1, 0x1.83c977ab2beddp-1, 0x1.8181818181818p-1, 0x1.7f405fd017f40p-1,
    0x1.7d05f417d05f4p-1, 0x1.7ad2208e0ecc3p-1, 0x1.78a4c8178a4c8p-1, 0x1.767dce434a9b1p-1,
    0x1.745d1745d1746p-1, 0x1.724287f46debcp-1, 0x1.702e05c0b8170p-1, 0x1.6e1f76b4337c7p-1,
    0x1.6c16c16c16c17p-1, 0x1.6a13cd1537290p-1, 0x1.6816816816817p-1, 0x1.661ec6a5122f9p-1,
    0x1.642c8590b2164p-1, 0x1.623fa77016240p-1, 0x1.6058160581606p-1, 0x1.5e75bb8d015e7p-1,
    0x1.5c9882b931057p-1, 0x1.5ac056b015ac0p-1, 0x1.58ed2308158edp-1, 0x1.571ed3c506b3ap-1,
    0x1.5555555555555p-1, 0x1.5390948f40febp-1, 0x1.51d07eae2f815p-1, 0x1.5015015015015p-1,
    0x1.4e5e0a72f0539p-1, 0x1.4cab88725af6ep-1, 0x1.4afd6a052bf5bp-1, 0x1.49539e3b2d067p-1,
    0x1.47ae147ae147bp-1, 0x1.460cbc7f5cf9ap-1, 0x1.446f86562d9fbp-1, 0x1.42d6625d51f87p-1,
    0x1.4141414141414p-1, 0x1.3fb013fb013fbp-1, 0x1.3e22cbce4a902p-1, 0x1.3c995a47babe7p-1,
    0x1.3b13b13b13b14p-1, 0x1.3991c2c187f63p-1, 0x1.3813813813814p-1, 0x1.3698df3de0748p-1,
    0x1.3521cfb2b78c1p-1, 0x1.33ae45b57bcb2p-1, 0x1.323e34a2b10bfp-1, 0x1.30d190130d190p-1,
    0x1.2f684bda12f68p-1, 0x1.2e025c04b8097p-1, 0x1.2c9fb4d812ca0p-1, 0x1.2b404ad012b40p-1,
    0x1.29e4129e4129ep-1, 0x1.288b01288b013p-1, 0x1.27350b8812735p-1, 0x1.25e22708092f1p-1,
    0x1.2492492492492p-1, 0x1.23456789abcdfp-1, 0x1.21fb78121fb78p-1, 0x1.20b470c67c0d9p-1,
    0x1.1f7047dc11f70p-1, 0x1.1e2ef3b3fb874p-1, 0x1.1cf06ada2811dp-1, 0x1.1bb4a4046ed29p-1,
    0x1.1a7b9611a7b96p-1, 0x1.19453808ca29cp-1, 0x1.1811811811812p-1, 0x1.16e0689427379p-1,
    0x1.15b1e5f75270dp-1, 0x1.1485f0e0acd3bp-1, 0x1.135c81135c811p-1, 0x1.12358e75d3033p-1,
    0x1.1111111111111p-1, 0x1.0fef010fef011p-1, 0x1.0ecf56be69c90p-1, 0x1.0db20a88f4696p-1,
    0x1.0c9714fbcda3bp-1, 0x1.0b7e6ec259dc8p-1, 0x1.0a6810a6810a7p-1, 0x1.0953f39010954p-1,
    0x1.0842108421084p-1, 0x1.073260a47f7c6p-1, 0x1.0624dd2f1a9fcp-1, 0x1.05197f7d73404p-1,
    0x1.0410410410410p-1, 0x1.03091b51f5e1ap-1, 0x1.0204081020408p-1, 0x1.0101010101010p-1,
};
/* log F_j rounded to a multiple of 2^-42. */
SB_TABLE double sb__hx_logf_hi[128] = {
    0x0.0p+0, 0x1.fe02a6b100000p-8, 0x1.fc0a8b0fc0000p-7, 0x1.7b91b07d60000p-6,
    0x1.f829b0e780000p-6, 0x1.39e87b9fe8000p-5, 0x1.77458f6330000p-5, 0x1.b42dd71198000p-5,
    0x1.f0a30c0118000p-5, 0x1.16536eea38000p-4, 0x1.341d7961bc000p-4, 0x1.51b073f060000p-4,
    0x1.6f0d28ae58000p-4, 0x1.8c345d6318000p-4, 0x1.a926d3a4ac000p-4, 0x1.c5e548f5bc000p-4,
    0x1.e27076e2b0000p-4, 0x1.fec9131dc0000p-4, 0x1.0d77e7cd08000p-3, 0x1.1b72ad52f6000p-3,
    0x1.29552f8200000p-3, 0x1.371fc201e8000p-3, 0x1.44d2b6ccb8000p-3, 0x1.526e5e3a1c000p-3,
    0x1.5ff3070a7a000p-3, 0x1.6d60fe719e000p-3, 0x1.7ab890210e000p-3, 0x1.87fa06520c000p-3,
    0x1.9525a9cf46000p-3, 0x1.a23bc1fe2c000p-3, 0x1.af3c94e80c000p-3, 0x1.bc286742d8000p-3,
    0x1.c8ff7c79aa000p-3, 0x1.d5c216b4fc000p-3, 0x1.e27076e2b0000p-3, 0x1.ef0adcbdc6000p-3,
    0x1.fb9186d5e4000p-3, 0x1.0402594b4d000p-2, 0x1.0a324e2739000p-2, 0x1.1058bf9ae5000p-2,
    0x1.1675cababa000p-2, 0x1.1c898c169a000p-2, 0x1.22941fbcf8000p-2, 0x1.2895a13de8000p-2,
    0x1.2e8e2bae12000p-2, 0x1.347dd9a988000p-2, 0x1.3a64c55694000p-2, 0x1.404308686a000p-2,
    0x1.4618bc21c6000p-2, 0x1.4be5f95778000p-2, 0x1.51aad872e0000p-2, 0x1.5767717456000p-2,
    0x1.5d1bdbf581000p-2, 0x1.62c82f2b9c000p-2, 0x1.686c81e9b1000p-2, 0x1.6e08eaa2ba000p-2,
    0x1.739d7f6bbd000p-2, 0x1.792a55fdd4000p-2, 0x1.7eaf83b82b000p-2, 0x1.842d1da1e9000p-2,
    0x1.89a3386c14000p-2, 0x1.8f11e87366000p-2, 0x1.947941c211000p-2, 0x1.99d958117e000p-2,
    0x1.9f323ecbfa000p-2, 0x1.a484090e5c000p-2, 0x1.a9cec9a9a1000p-2, 0x1.af12932478000p-2,
    0x1.b44f77bcc9000p-2, 0x1.b985896931000p-2, 0x1.beb4d9da72000p-2, 0x1.c3dd7a7cdb000p-2,
    0x1.c8ff7c79aa000p-2, 0x1.ce1af0b85f000p-2, 0x1.d32fe7e00f000p-2, 0x1.d83e7258a3000p-2,
    0x1.dd46a04c1c000p-2, 0x1.e24881a7c7000p-2, 0x1.e744261d68000p-2, 0x1.ec399d2469000p-2,
    0x1.f128f5faf0000p-2, 0x1.f6123fa703000p-2, 0x1.faf588f78f000p-2, 0x1.ffd2e0857f000p-2,
    0x1.02552a5a5d000p-1, 0x1.04bdf9da92800p-1, 0x1.0723e5c1ce000p-1, 0x1.0986f4f573800p-1,
    0x1.0be72e4252800p-1, 0x1.0e44985d1d000p-1, 0x1.109f39e2d5000p-1, 0x1.12f719593f000p-1,
    0x1.154c3d2f4d800p-1, 0x1.179eabbd89800p-1, 0x1.19ee6b467c800p-1, 0x1.1c3b81f714000p-1,
    0x1.1e85f5e704000p-1, 0x1.20cdcd192a800p-1, 0x1.23130d7bec000p-1, 0x1.2555bce98f800p-1,
    0x1.2795e1289b000p-1, 0x1.29d37fec2b000p-1, 0x1.2c0e9ed449000p-1, 0x1.2e47436e40000p-1,
    0x1.307d7334f1000p-1, 0x1.32b1339122000p-1, 0x1.34e289d9ce000p-1, 0x1.37117b5474800p-1,
    0x1.393e0d3562800p-1, 0x1.3b6844a000000p-1, 0x1.3d9026a715800p-1, 0x1.3fb5b84d17000p-1,
    0x1.41d8fe8467000p-1, 0x1.43f9fe2f9d000p-1, 0x1.4618bc21c6000p-1, 0x1.48353d1ea8800p-1,
    0x1.4a4f85db04000p-1, 0x1.4c679afccf000p-1, 0x1.4e7d811b75800p-1, 0x1.50913cc016800p-1,
    0x1.52a2d265bc800p-1, 0x1.54b2467999800p-1, 0x1.56bf9d5b3f000p-1, 0x1.58cadb5cd7800p-1,
    0x1.5ad404c35a000p-1, 0x1.5cdb1dc6c1800p-1, 0x1.5ee02a9241800p-1, 0x1.60e32f4478800p-1,
};
/* log F_j minus its high part, rounded to nearest double. */
SB_TABLE double sb__hx_logf_lo[128] = {
    0x0.0p+0, 0x1.9e23f0dda40e4p-46, 0x1.f1e7cf6d3a69cp-50, -0x1.3b955b602ace4p-44,
    0x1.980267c7e09e4p-45, 0x1.eafd480ad9015p-44, -0x1.181dce586af09p-44, -0x1.c827ae5d6704cp-46,
    -0x1.d599e83368e91p-45, -0x1.47c5e768fa309p-46, 0x1.1d09299837610p-44, 0x1.83f69278e686ap-44,
    -0x1.4b4641b664613p-44, 0x1.b20f5acb42a66p-44, 0x1.563650bd22a9cp-44, 0x1.d0c57585fbe06p-46,
    -0x1.a342c2af0003cp-45, -0x1.54555d1ae6607p-44, 0x1.cb2cd2ee2f482p-44, 0x1.e80a41811a396p-45,
    -0x1.5b967f4471dfcp-44, 0x1.ee8779b2d8abcp-44, -0x1.70cc16135783cp-46, -0x1.790ba37fc5238p-44,
    -0x1.8586f183bebf2p-44, -0x1.bc6e557134767p-44, -0x1.bdb9072534a58p-45, 0x1.22120401202fcp-44,
    -0x1.297137d9f158fp-44, -0x1.539cd91dc9f0bp-44, -0x1.a4e633fcd9066p-52, 0x1.9ac53f39d121cp-44,
    -0x1.7794f689f8434p-45, -0x1.1ba91bbca681bp-45, -0x1.a342c2af0003cp-44, -0x1.b26b79c86af24p-45,
    -0x1.d572aab993c87p-47, 0x1.036b89ef42d7fp-48, 0x1.c6bee7ef4030ep-47, -0x1.4ab9d817d52cdp-44,
    0x1.8380e731f55c4p-44, -0x1.81410e5c62affp-44, -0x1.a6976f5eb0963p-44, 0x1.a8d7ad24c13f0p-44,
    -0x1.67b1e99b72bd8p-45, -0x1.5594dd4c58092p-45, 0x1.7a71cbcd735d0p-44, 0x1.f8ef43049f7d3p-44,
    -0x1.3d82f484c84ccp-46, -0x1.d7c92cd9ad824p-44, -0x1.f4bd8db0a7cc1p-44, -0x1.64ead9524d7cap-44,
    -0x1.8d6bdc9c7c238p-44, 0x1.e54bdbd7c8a98p-44, 0x1.2bb110af84054p-44, 0x1.e38c139318d71p-46,
    0x1.a7389314feb50p-52, 0x1.e89f057691feap-44, -0x1.e4da62d0c25adp-49, -0x1.3a2db13ae687cp-44,
    0x1.2d5ad38c40882p-45, 0x1.63bf0bb4eab4cp-45, 0x1.beae9337451f4p-44, 0x1.1597525dd88f0p-47,
    -0x1.ed03525ca2643p-44, -0x1.3d7500d6523c5p-44, -0x1.ed9cadec02b43p-44, -0x1.e53bb31eed7a9p-44,
    -0x1.3ae68224aa2cep-47, 0x1.f6b31f629f11ep-47, -0x1.21021e78b2151p-44, -0x1.5946261f5a42bp-45,
    -0x1.7794f689f8434p-44, 0x1.f5bdbe95e5568p-45, -0x1.0aa7884dcd050p-44, -0x1.835f5d48ba26dp-47,
    0x1.282fb989a9274p-44, -0x1.ecf1a1385d356p-45, 0x1.e1f8df68dbcf3p-44, -0x1.9ff45188d6065p-45,
    0x1.bb2cd720ec44cp-44, -0x1.d4e7aea4f0d25p-44, 0x1.8f6cd7d9f2754p-45, 0x1.261565f40d932p-44,
    0x1.fd8d38d2bafddp-46, -0x1.2d9a033eff74ep-45, -0x1.7f6350d38edddp-46, -0x1.6fa37012b5806p-44,
    0x1.415b4c4bdd99fp-44, -0x1.ba048a8d10b4bp-44, -0x1.b4810e09b27a4p-44, -0x1.0eb3fb7398e0cp-47,
    -0x1.0b2b38662e34dp-44, 0x1.a0bfc60e6fa08p-45, 0x1.6ecc5cbdd7782p-45, -0x1.eda1b58389902p-44,
    0x1.a07bd8b34be7cp-46, 0x1.b6c9a81e87baep-44, -0x1.7afa4392f1ba7p-46, -0x1.a61fde292977ep-48,
    0x1.1aeb783f3db97p-45, 0x1.1590b9ad974bap-46, -0x1.74468563ce45dp-45, 0x1.34202a10c3491p-44,
    0x1.7c3f6b2143eadp-46, -0x1.4766fd54a4c27p-44, 0x1.d316eb92d885dp-45, -0x1.28e88bf6deec9p-47,
    0x1.0cd4e221301b7p-44, -0x1.eea838909f3d3p-44, -0x1.055bfbd9c2f53p-45, -0x1.7b4962c55f46bp-46,
    0x1.5732325e617a3p-44, -0x1.98858d84649f1p-45, -0x1.3d82f484c84ccp-45, 0x1.bee7abd176604p-46,
    -0x1.44fdd840b8591p-45, -0x1.c64e971322ce8p-45, 0x1.d84e584c2b22cp-44, 0x1.ad2f2ce96c2d6p-47,
    -0x1.2a88c41ba8752p-44, -0x1.b42b755eba5e1p-44, 0x1.cca08e310b9b2p-44, 0x1.893092f25d931p-45,
    -0x1.a609acaab41fcp-46, -0x1.36e612387451fp-46, -0x1.8a8f29f6a02dcp-45, 0x1.b194f912b416ap-46,
};

SB_FN sb_u64 sb__hx_bits(double d) { return sb_d2u(d); }
SB_FN double sb__hx_dbl(sb_u64 u) { return sb_u2d(u); }

/* log1p(u) for |u| < 2^-6, u exact: Taylor to degree 10, the leading u kept
 * apart (the rest is below 2^-7 of it, so its rounding is 2^-60 of u). */
SB_FN double sb__hx_log1p_small(double u) {
    const double p = -0.5 + u * (0x1.5555555555555p-2 + u * (-0.25 + u * (0x1.999999999999ap-3 +
                     u * (-0x1.5555555555555p-3 + u * (0x1.2492492492492p-3 + u * (-0.125 +
                     u * (0x1.c71c71c71c71cp-4 + u * -0x1.999999999999ap-4)))))));
    return u + u * (u * p);
}

/* log v for a positive normal double v at least 2^-6 from 1. E ln2 + log F_j
 * is exact (multiples of 2^-42 below 2^8); the rest, below 2^-7 + 2^-30,
 * carries the roundings: under 2^-51 of |log v| >= 2^-6.1. */
SB_FN double sb__hx_log(double v) {
    const sb_u64 b = sb__hx_bits(v);
    const int E = (int)(b >> 52) - 1023;
    const int j = (int)((b >> 45) & 127u);
    const double m = sb__hx_dbl((b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
    const double F = sb__hx_dbl(0x3FF0000000000000ull | ((sb_u64)j << 45));
    const double r = (m - F) * sb__hx_invf[j]; /* m - F exact */
    const double p = r * (r * (-0.5 + r * (0x1.5555555555555p-2 + r * (-0.25 + r * (0x1.999999999999ap-3 +
                     r * (-0x1.5555555555555p-3 + r * (0x1.2492492492492p-3 + r * -0.125)))))));
    const double hi = (double)E * SB__HX_LN2_HI + sb__hx_logf_hi[j];
    return hi + (((double)E * SB__HX_LN2_LO + sb__hx_logf_lo[j]) + (r + p));
}

#if !defined(SB_COMPAT_DEVICE) && defined(__GNUC__) && defined(SB_HOST_V4)
/* sb__hx_log on four doubles at once (GCC's vectors, where a host translation
 * unit is compiled for AVX2: models/timeseries/ets_avx2.c), for lanes that
 * sb__hx_log takes (positive normal doubles at least 2^-6 from 1): each lane
 * is sb__hx_log's operations in its order, the bit moves on the lane's own
 * bits, the table entries read one by one, so each lane's result is the same
 * double (tests/unit/test_ets_avx2.c checks it on many millions of inputs). */
typedef double sb__hx_v4d __attribute__((vector_size(32)));
typedef long long sb__hx_v4i __attribute__((vector_size(32)));
SB_FN sb__hx_v4d sb__hx_log_v4(sb__hx_v4d v) {
    sb__hx_v4i b;
    memcpy(&b, &v, sizeof b);
    const sb__hx_v4i E = (b >> 52) - 1023; /* the sign bit is 0: the shift is logical here */
    const sb__hx_v4i j = (b >> 45) & 127;
    const sb__hx_v4i mb = (b & 0x000FFFFFFFFFFFFFll) | 0x3FF0000000000000ll;
    const sb__hx_v4i fb = 0x3FF0000000000000ll | (j << 45);
    sb__hx_v4d m, F;
    memcpy(&m, &mb, sizeof m);
    memcpy(&F, &fb, sizeof F);
    const sb__hx_v4d inv = {sb__hx_invf[j[0]], sb__hx_invf[j[1]], sb__hx_invf[j[2]], sb__hx_invf[j[3]]};
    const sb__hx_v4d lhi = {sb__hx_logf_hi[j[0]], sb__hx_logf_hi[j[1]], sb__hx_logf_hi[j[2]], sb__hx_logf_hi[j[3]]};
    const sb__hx_v4d llo = {sb__hx_logf_lo[j[0]], sb__hx_logf_lo[j[1]], sb__hx_logf_lo[j[2]], sb__hx_logf_lo[j[3]]};
    const sb__hx_v4d r = (m - F) * inv; /* m - F exact */
    const sb__hx_v4d p = r * (r * (-0.5 + r * (0x1.5555555555555p-2 + r * (-0.25 + r * (0x1.999999999999ap-3 +
                         r * (-0x1.5555555555555p-3 + r * (0x1.2492492492492p-3 + r * -0.125)))))));
    const sb__hx_v4d Ed = {(double)E[0], (double)E[1], (double)E[2], (double)E[3]};
    const sb__hx_v4d hi = Ed * SB__HX_LN2_HI + lhi;
    return hi + ((Ed * SB__HX_LN2_LO + llo) + (r + p));
}
#endif

#endif
