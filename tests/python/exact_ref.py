"""Float32 by hand, for the linear-algebra tests' exact references: the bits of
a float32, the float32 a Python float rounds to, and the float32 a rational
value rounds to (nearest-even, gradual underflow, overflow to infinity, an
exact zero as +0). Written from IEEE 754's definitions with Python's integers
and fractions, by another road than the C kernels they check."""
import struct
from fractions import Fraction

QNAN = 0x7FC00000
PINF = 0x7F800000
NINF = 0xFF800000


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def round_f32_bits(v):
    """Float32 bits of the rational v, nearest-even, gradual underflow, overflow to inf; 0 is +0."""
    if v == 0:
        return 0
    sign = 0x80000000 if v < 0 else 0
    v = abs(v)
    e = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** e > v:
        e -= 1
    ee = max(e, -126)
    q = round(v * Fraction(2) ** (23 - ee))  # Fraction rounds half to even
    if q == 1 << 24:
        q, ee = 1 << 23, ee + 1
    if ee > 127:
        return sign | PINF
    if q < (1 << 23):
        return sign | q
    return sign | ((ee + 127) << 23) | (q - (1 << 23))
