"""Options shared by the whole test suite."""
from __future__ import annotations


def pytest_addoption(parser) -> None:
    # Golden tests (tests/data/*.test): rewrite each case's [out] section with the actual output.
    parser.addoption("--update-data", action="store_true", default=False,
                     help="rewrite the expected outputs of the golden tests in tests/data/ from the actual ones")
