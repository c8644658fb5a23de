"""f16 and bf16 on the device: every operator, method and conversion of the half types gives, bit for bit,
what rustc's build of the support crate gives (tests/half/kernels/*.rs), over operands chosen where rounding is
delicate (zeros, subnormals and the edge of the normal range, ties, the largest values, infinities, NaNs
of several payloads, both signs) and random ones. rustc's results are checked in turn against references
of their own: the exact result rounded once (which is what one rounding of the f32 result gives, as the
support crate argues), numpy's float16 and ml_dtypes' bfloat16 arithmetic, and Rust's `as` semantics."""
from __future__ import annotations

import math
import operator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tests.support.devices import rustc_build

ml_dtypes = pytest.importorskip("ml_dtypes")

KERNELS = Path(__file__).parent / "kernels"
OPS = KERNELS / "operators.rs"
METHODS_RS = KERNELS / "methods.rs"
FORMATS = {"f16": (5, 10, np.float16), "bf16": (8, 7, ml_dtypes.bfloat16)}
NAN = 0x7FFF  # the NaN every half operation produces


def edge_bits(name: str) -> np.ndarray:
    """Operands where rounding is delicate, of both signs: zeros, the least and largest subnormals, the
    least normals, 1 and its neighbours, values whose products and quotients fall on ties, the largest
    values, infinity, and NaNs of several payloads (quiet, signalling, the canonical one)."""
    exp_bits, man_bits, _ = FORMATS[name]
    one = ((1 << (exp_bits - 1)) - 1) << man_bits
    inf = ((1 << exp_bits) - 1) << man_bits
    positive = [0, 1, 2, 3, (1 << man_bits) - 1, 1 << man_bits, (1 << man_bits) + 1, one - 1, one, one + 1,
                one + (1 << (man_bits - 1)), one + (1 << man_bits), one + 3 * (1 << man_bits) // 2 + 1,
                (one >> 1) + 7, inf - 2, inf - 1, inf, inf + 1, inf | (1 << (man_bits - 1)), NAN]
    return np.array(positive + [b | 0x8000 for b in positive], dtype=np.uint16)


def operand_pairs(name: str, random: int = 3000, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge operands, then random bit patterns."""
    edges = edge_bits(name)
    a, b = np.meshgrid(edges, edges)
    rng = np.random.default_rng(seed)
    return (np.concatenate([a.ravel(), rng.integers(0, 1 << 16, random, dtype=np.uint16)]),
            np.concatenate([b.ravel(), rng.integers(0, 1 << 16, random, dtype=np.uint16)]))


def as_type(bits: np.ndarray, name: str) -> np.ndarray:
    return bits.view(FORMATS[name][2])


def bits_of(values: np.ndarray) -> np.ndarray:
    return values.view(np.uint16)


@pytest.fixture(scope="module")
def rust_ops():
    return rustc_build(OPS)


@pytest.fixture(scope="module")
def rust_methods():
    return rustc_build(METHODS_RS)


@pytest.fixture(scope="module")
def ops(device):
    return device.load(OPS)


@pytest.fixture(scope="module")
def kernels_methods(device):
    return device.load(METHODS_RS)


def zeros(n: int, dtype) -> np.ndarray:
    return np.zeros(n, dtype=dtype)


OPERATORS = ("sum", "difference", "product", "quotient", "remainder", "negation")


def operators(kernels, name: str, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """The outputs of the `operators` kernel on the operands given as bits: each operator's bits, and the
    comparison flags."""
    half = FORMATS[name][2]
    outputs = [zeros(len(a), half) for _ in OPERATORS] + [zeros(len(a), np.uint8)]
    kernels.operators(*outputs, as_type(a, name), as_type(b, name))
    return {**{op: bits_of(o) for op, o in zip(OPERATORS, outputs)}, "flags": outputs[-1]}


METHODS = {"sqrt": None, "abs": None, "lo": None, "hi": None, "classify": np.uint8, "bits": np.uint16,
           "wide": np.float32, "wider": np.float64, "to_i32": np.int32, "to_u8": np.uint8, "to_i64": np.int64,
           "to_u64": np.uint64}


def methods(kernels, name: str, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """The outputs of the `methods` kernel on operands given as bits, each as its bits."""
    outputs = {k: zeros(len(a), FORMATS[name][2] if dtype is None else dtype) for k, dtype in METHODS.items()}
    getattr(kernels, f"{name}_methods")(*outputs.values(), as_type(a, name), as_type(b, name))
    return {k: o.view(f"u{o.itemsize}") for k, o in outputs.items()}


def assert_same(device: dict, rust: dict) -> None:
    for key in rust:
        np.testing.assert_array_equal(device[key], rust[key], err_msg=key)


# ------------------------------------------------------------------ the device against rustc

@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_operators_give_rusts_bits(ops, rust_ops, name) -> None:
    a, b = operand_pairs(name)
    assert_same(operators(ops, name, a, b), operators(rust_ops, name, a, b))


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_methods_give_rusts_bits(kernels_methods, rust_methods, name) -> None:
    a, b = operand_pairs(name)
    assert_same(methods(kernels_methods, name, a, b), methods(rust_methods, name, a, b))


def conversion_sources(name: str) -> tuple[np.ndarray, np.ndarray]:
    """f32 and f64 values around every half value: the values themselves, the midpoints between
    neighbours (ties), and values just off them, past the largest value and below the least subnormal."""
    with np.errstate(invalid="ignore"):
        values = as_type(np.arange(1 << 16, dtype=np.uint16), name).astype(np.float64)
    values = np.unique(values[np.isfinite(values)])
    midpoints = (values[1:] + values[:-1]) / 2
    wide = np.concatenate([values, midpoints, np.nextafter(midpoints, np.inf), np.nextafter(midpoints, -np.inf),
                           [np.inf, -np.inf, np.nan, -np.nan, 1e300, -1e-300, 3e38, 7e4, 65520.0, -65519.99]])
    with np.errstate(over="ignore"):
        return wide.astype(np.float32), wide


def conversions(kernels, name: str) -> dict[str, np.ndarray]:
    x, y = conversion_sources(name)
    bits = np.resize(np.arange(1 << 16, dtype=np.uint16), len(x))
    outputs = {k: zeros(len(x), FORMATS[name][2]) for k in ("from_f32", "from_f64", "from_bits")}
    getattr(kernels, f"{name}_conversions")(*outputs.values(), x, y, bits)
    assert (bits_of(outputs["from_bits"]) == bits).all()
    return {k: bits_of(o) for k, o in outputs.items()}


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_conversions_from_f32_f64_and_bits_give_rusts_bits(kernels_methods, rust_methods, name) -> None:
    assert_same(conversions(kernels_methods, name), conversions(rust_methods, name))


def expressions(kernels, name: str, a: np.ndarray, s: float) -> dict[str, np.ndarray]:
    half, width = FORMATS[name][2], 37
    rows = np.random.default_rng(3).standard_normal(len(a) * width).astype(half)
    outputs = {k: zeros(len(a), half) for k in ("out", "sums", "constants")}
    getattr(kernels, f"{name}_expressions")(*outputs.values(), as_type(a, name), rows, s, width)
    return {k: bits_of(o) for k, o in outputs.items()}


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_scalars_compound_assignments_inner_sums_and_constants_give_rusts_bits(kernels_methods, rust_methods,
                                                                                name) -> None:
    a, _ = operand_pairs(name, random=200)
    for s in (0.1, -3.0, 1e-7, 60000.0):
        assert_same(expressions(kernels_methods, name, a, s), expressions(rust_methods, name, a, s))


# ------------------------------------------------------------------ rustc against references of its own

def rounded(exact: Fraction, name: str, sticky: bool = False) -> int:
    """The bits of the `name` value nearest to `exact` (ties to even); `sticky`: the exact value lies a
    little above `exact`, which is then no tie (square roots)."""
    exp_bits, man_bits, _ = FORMATS[name]
    sign = 0x8000 if exact < 0 else 0
    exact = abs(exact)
    if exact == 0:
        return sign
    bias = (1 << (exp_bits - 1)) - 1
    exponent = math.floor(math.log2(float(exact)))
    while Fraction(2) ** exponent > exact:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= exact:
        exponent += 1
    exponent = max(exponent, 1 - bias)  # the subnormals' last place is the least normals'
    step = Fraction(2) ** (exponent - man_bits)
    q, rest = divmod(exact, step)
    half = step / 2
    if rest > half or (rest == half and (sticky or q % 2 == 1)):
        q += 1
    value = q * step
    top = (2 - Fraction(2) ** -man_bits) * Fraction(2) ** bias
    if value > top:
        return sign | ((1 << exp_bits) - 1) << man_bits
    return sign | int(bits_of(np.array([float(value)], dtype=FORMATS[name][2]))[0])


def exact_value(bits: int, name: str) -> Fraction | float:
    """A finite nonzero value as a Fraction; zeros (whose signs a Fraction drops), infinities and NaNs as
    floats."""
    x = float(as_type(np.array([bits], np.uint16), name)[0])
    return x if not math.isfinite(x) or x == 0 else Fraction(x)


NUMPY = {"sum": np.add, "difference": np.subtract, "product": np.multiply, "quotient": np.divide,
         "remainder": np.fmod}
EXACT = {"sum": operator.add, "difference": operator.sub, "product": operator.mul, "quotient": operator.truediv}


def exact_binary(op: str, x, y) -> Fraction | float:
    """The exact result of IEEE's operation: a Fraction, or a float where an operand is a zero, an
    infinity or a NaN (f64 computes those exactly: their results are zeros, infinities, NaNs or the other
    operand)."""
    if isinstance(x, float) or isinstance(y, float):
        with np.errstate(all="ignore"):
            return float(NUMPY[op](np.float64(x), np.float64(y)))
    if op == "remainder":
        q = abs(x) // abs(y)
        return (abs(x) - q * abs(y)) * (1 if x >= 0 else -1)
    return EXACT[op](x, y)


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_one_rounding_of_the_f32_result_is_the_correctly_rounded_result(rust_ops, name) -> None:
    """The support crate computes in f32 and rounds once: that is IEEE's correctly rounded result, the
    exact result rounded once to the half type (signs of zero and infinities included)."""
    a, b = operand_pairs(name, random=1000)
    results = operators(rust_ops, name, a, b)
    for op, x, y, result in ((op, x, y, r) for op in NUMPY for x, y, r in zip(a.tolist(), b.tolist(),
                                                                              results[op].tolist())):
        left = exact_value(x, name)
        exact = exact_binary(op, left, exact_value(y, name))
        if isinstance(exact, float):
            want = NAN if math.isnan(exact) else int(bits_of(np.array([exact], FORMATS[name][2]))[0])
        elif exact == 0:  # x - x is +0.0 when rounding to nearest; a remainder has the dividend's sign
            want = 0x8000 if op == "remainder" and left < 0 else 0
        else:
            want = rounded(exact, name)
        assert result == want, f"{x:#06x} {op} {y:#06x}: {result:#06x}, not {want:#06x}"


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_rusts_arithmetic_agrees_with_numpys(rust_ops, name) -> None:
    """numpy's float16 and ml_dtypes' bfloat16 round their arithmetic correctly too: the same bits, but
    for NaN, which has one pattern in Rust's (and the GPU's) half arithmetic."""
    a, b = operand_pairs(name)
    results = operators(rust_ops, name, a, b)
    for op in ("sum", "difference", "product", "quotient"):
        with np.errstate(all="ignore"):
            want = bits_of(NUMPY[op](as_type(a, name), as_type(b, name)))
        nan = np.isnan(as_type(want.copy(), name))
        np.testing.assert_array_equal(results[op][~nan], want[~nan], err_msg=op)
        assert (results[op][nan] == NAN).all()


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_square_roots_are_correctly_rounded(rust_methods, name) -> None:
    # the subnormals, the edges, and every 16th pattern of the rest
    every = np.unique(np.concatenate([np.arange(0, 1 << 16, 16, dtype=np.uint16), np.arange(1 << 8, dtype=np.uint16),
                                      edge_bits(name)]))
    got = methods(rust_methods, name, every, every)["sqrt"]
    for x, result in zip(every.tolist(), got.tolist()):
        value = exact_value(x, name)
        if isinstance(value, float):
            want = x if value == 0 or value == math.inf else NAN  # sqrt(-0.0) is -0.0
        elif value < 0:
            want = NAN
        else:
            scale = 200  # sqrt(value) * 2^scale, to the integer below it, and whether that is exact
            scaled = value * Fraction(2) ** (2 * scale)
            root = math.isqrt(scaled.numerator // scaled.denominator)
            exact = root * root * scaled.denominator == scaled.numerator
            want = rounded(Fraction(root, 1 << scale), name, sticky=not exact)
        assert result == want, f"sqrt {x:#06x}: {result:#06x}, not {want:#06x}"


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_conversions_to_integers_are_rusts_as(rust_methods, name) -> None:
    """`x.to_f32() as i32` and the others saturate at the integer type's bounds and make NaN 0."""
    a = edge_bits(name)
    outs = methods(rust_methods, name, a, a)
    types = {"to_i32": np.int32, "to_u8": np.uint8, "to_i64": np.int64, "to_u64": np.uint64}
    for k, x in enumerate(a.tolist()):
        value = float(as_type(np.array([x], np.uint16), name)[0])
        for key, dtype in types.items():
            result = int(outs[key].view(dtype)[k])
            info = np.iinfo(dtype)
            want = 0 if math.isnan(value) else info.max if value >= info.max else info.min if value <= info.min \
                else math.trunc(value)
            assert result == want, f"{x:#06x} as {dtype.__name__}"


def test_conversions_from_f64_round_once(rust_methods) -> None:
    """A value that rounds to an f32 tie, then to even, rounds once from f64: up, to the nearer value."""
    y = np.array([1.0 + 2.0 ** -11 + 2.0 ** -40, 1.0 + 2.0 ** -8 + 2.0 ** -40])
    x, bits = y.astype(np.float32), np.zeros(2, np.uint16)
    f16 = [np.zeros(2, np.float16) for _ in range(3)]
    bf16 = [np.zeros(2, ml_dtypes.bfloat16) for _ in range(3)]
    rust_methods.f16_conversions(*f16, x, y, bits)
    rust_methods.bf16_conversions(*bf16, x, y, bits)
    assert bits_of(f16[1])[0] == 0x3C01 and bits_of(bf16[1])[1] == 0x3F81
    assert bits_of(f16[0])[0] == 0x3C00 and bits_of(bf16[0])[1] == 0x3F80  # through f32: twice, down


def test_half_fields_of_structs_give_rusts_results(kernels_methods, rust_methods) -> None:
    """A #[repr(C)] struct with f16 and bf16 fields (2-byte aligned) crosses as its bytes: as a structured
    array's elements and, by value, as a dict whose numbers are rounded once to the fields' types."""
    sample = np.dtype({"names": ["weight", "id", "bias", "value"],
                       "formats": [np.float16, np.uint8, ml_dtypes.bfloat16, np.float32],
                       "offsets": [0, 2, 4, 8], "itemsize": 12})
    rng = np.random.default_rng(9)
    samples = np.zeros(500, sample)
    samples["weight"] = rng.standard_normal(500).astype(np.float16)
    samples["id"] = rng.integers(0, 256, 500)
    samples["bias"] = rng.standard_normal(500).astype(ml_dtypes.bfloat16)
    samples["value"] = rng.standard_normal(500).astype(np.float32)
    scale = {"weight": 0.1, "id": 7, "bias": -2.5, "value": 1.0}
    device, rust = np.zeros(500, np.float32), np.zeros(500, np.float32)
    kernels_methods.weigh(device, samples, scale)
    rust_methods.weigh(rust, samples, scale)
    np.testing.assert_array_equal(device.view(np.uint32), rust.view(np.uint32))
