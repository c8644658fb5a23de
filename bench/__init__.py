"""Benchmarks: RAJAPerf kernels as rs2gpu kernels against hand-written CUDA (`python3 bench/run.py`)."""
