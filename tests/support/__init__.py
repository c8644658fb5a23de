"""What several test folders share: the emulated device, generated code taken apart, the fuzzers'
property and strategies, the crates the Cargo tests build, a CPU stand-in for cupy, and the paths of the
source tree. Tests import it as `tests.support` (pyproject.toml puts the source tree on the import path)."""
