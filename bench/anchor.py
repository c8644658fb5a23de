"""RAJAPerf's own figures for its Base_CUDA and RAJA_CUDA variants on one NVIDIA H200.

RAJAPerf develop 9af20b3 built for sm_90 with CUDA 13.0, driver 580.159.04, block size 256, default problem
sizes and reps, 3 passes with the minimum pass kept, CUDA_MODULE_LOADING=EAGER. Each figure is per rep:
RAJAPerf times the whole rep loop of back-to-back asynchronous launches with a host clock between two device
synchronizations, divided here by the reps. Compare them with the benchmark's back-to-back column, which is
timed the same way, not with the single-launch event times.

At 1e6 doubles the arrays of most kernels fit in the H200's 60 MB L2, so back-to-back reps run from L2 and
some of these figures exceed the DRAM copy rate. Base_CUDA's reductions (DOT, PI_REDUCE, REDUCE3_INT,
REDUCE_STRUCT, TRAP_INT, FIRST_MIN, MULTI_REDUCE) take 600-1000 µs per rep because their accumulator lives in
managed, host-accessed memory that the host reads back every rep; RAJA_CUDA's reductions (about 16 µs) are
the realistic reference for those.
"""
from __future__ import annotations

from typing import NamedTuple


class Anchor(NamedTuple):
    size: int
    reps: int
    base_us: float | None      # Base_CUDA, best tuning, µs per rep
    base_tuning: str
    raja_us: float | None      # RAJA_CUDA, best tuning, µs per rep
    bytes_per_rep: int


H200 = {
    "ARRAY_OF_PTRS": Anchor(1_000_000, 50, 54.22, "block_256", 127.36, 216_000_000),
    "COPY8": Anchor(1_000_000, 50, 35.84, "block_256", 36.84, 128_000_000),
    "DAXPY": Anchor(1_000_000, 500, 4.78, "block_256", 4.78, 24_000_000),
    "DAXPY_ATOMIC": Anchor(1_000_000, 500, 4.91, "block_256", 4.91, 24_000_000),
    "IF_QUAD": Anchor(1_000_000, 180, 11.79, "block_256", 12.11, 40_000_000),
    "INDEXLIST": Anchor(1_000_000, 100, 22.32, "block_256", None, 10_000_016),
    "INDEXLIST_3LOOP": Anchor(1_000_000, 100, 30.16, "block_256", 30.67, 42_000_042),
    "INIT3": Anchor(1_000_000, 500, 9.82, "block_256", 9.92, 40_000_000),
    "INIT_VIEW1D": Anchor(1_000_000, 2500, 4.16, "block_256", 4.27, 8_000_000),
    "INIT_VIEW1D_OFFSET": Anchor(1_000_000, 2500, 4.18, "block_256", 4.28, 8_000_000),
    "MAT_MAT_SHARED": Anchor(1_000_000, 5, 508.2, "block_256", 527.6, 24_000_000),
    "MULADDSUB": Anchor(1_000_000, 350, 9.85, "block_256", 9.94, 40_000_000),
    "NESTED_INIT": Anchor(1_000_000, 1000, 5.16, "block_256", 5.21, 8_000_000),
    "PI_ATOMIC": Anchor(1_000_000, 50, 1935.8, "block_256", 1933.64, 16),
    "PI_REDUCE": Anchor(1_000_000, 50, 658.5, "blkatm_direct_256", 15.84, 16),
    "REDUCE3_INT": Anchor(1_000_000, 50, 675.22, "blkatm_direct_256", 21.84, 4_000_024),
    "REDUCE_STRUCT": Anchor(1_000_000, 50, 682.48, "blkatm_direct_256", 31.66, 16_000_096),
    "TRAP_INT": Anchor(1_000_000, 50, 608.26, "blkatm_occgs_256", 15.24, 16),
    "MULTI_REDUCE": Anchor(1_000_000, 50, 663.56, "atomic_direct_256", 684.46, 16_000_160),
    "DIFF_PREDICT": Anchor(1_000_000, 200, 159.9, "block_256", 160.03, 160_000_000),
    "EOS": Anchor(1_000_000, 500, 5.53, "block_256", 5.5, 32_000_056),
    "FIRST_DIFF": Anchor(1_000_000, 2000, 4.35, "block_256", 4.53, 16_000_008),
    "FIRST_MIN": Anchor(1_000_000, 100, 741.97, "blkhst_direct_256", 15.58, 8_000_032),
    "FIRST_SUM": Anchor(1_000_000, 2000, 4.34, "block_256", 4.77, 15_999_992),
    "GEN_LIN_RECUR": Anchor(1_000_000, 500, 14.92, "block_256", 14.47, 80_000_000),
    "HYDRO_1D": Anchor(1_000_000, 1000, 4.6, "block_256", 4.54, 24_000_008),
    "HYDRO_2D": Anchor(1_000_000, 100, 52.21, "block_256", 50.46, 143_680_320),
    "INT_PREDICT": Anchor(1_000_000, 400, 23.43, "block_256", 23.43, 88_000_000),
    "PLANCKIAN": Anchor(1_000_000, 50, 10.04, "block_256", 10.02, 40_000_000),
    "TRIDIAG_ELIM": Anchor(1_000_000, 1000, 5.28, "block_256", 5.63, 32_000_000),
    "ADD": Anchor(1_000_000, 1000, 4.62, "block_256", 4.62, 24_000_000),
    "COPY": Anchor(1_000_000, 1800, 4.54, "block_256", 4.55, 16_000_000),
    "DOT": Anchor(1_000_000, 2000, 1068.72, "blkatm_direct_256", 16.69, 16_000_016),
    "MUL": Anchor(1_000_000, 1800, 4.53, "block_256", 4.83, 16_000_000),
    "TRIAD": Anchor(1_000_000, 1000, 4.64, "block_256", 4.72, 24_000_000),
    "CONVECTION3DPA": Anchor(1_000_000, 50, 25.98, "block_64", 24.34, 31_172_171),
    "DEL_DOT_VEC_2D": Anchor(1_000_000, 100, 17.59, "block_256", 17.5, 48_064_032),
    "DIFFUSION3DPA": Anchor(1_000_000, 50, 39.96, "block_64", 35.24, 58_125_192),
    "EDGE3D": Anchor(1_000_000, 10, 8468.6, "block_256", 8498.2, 35_558_808),
    "ENERGY": Anchor(1_000_000, 130, 62.12, "block_256", 61.95, 216_000_000),
    "FIR": Anchor(1_000_000, 160, 8.16, "block_256", 8.17, 16_000_248),
    "LTIMES": Anchor(999_424, 50, 109.54, "block_256", 126.12, 14_254_592),
    "LTIMES_NOVIEW": Anchor(999_424, 50, 109.42, "block_256", 125.56, 14_254_592),
    "MASS3DEA": Anchor(999_424, 1, 130.0, "block_64", 100.0, 8_239_552),
    "MASS3DPA": Anchor(1_000_000, 50, 15.46, "block_25", 15.02, 20_288_320),
    "MATVEC_3D_STENCIL": Anchor(1_000_000, 100, 47.54, "block_256", 46.15, 138_635_296),
    "NODAL_ACCUMULATION_3D": Anchor(1_000_000, 100, 29.39, "block_256", 29.57, 32_484_816),
    "PRESSURE": Anchor(1_000_000, 700, 14.31, "block_256", 15.05, 48_000_000),
    "VOL3D": Anchor(1_000_000, 100, 15.38, "block_256", 14.71, 35_558_808),
    "ZONAL_ACCUMULATION_3D": Anchor(1_000_000, 100, 6.67, "block_256", 6.63, 24_242_408),
}
