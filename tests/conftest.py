"""Options and fixtures shared by the whole test suite."""
from __future__ import annotations

import pytest

from tests.support.code_objects import CodeObjects
from tests.support.devices import DEVICES, CudaDevice, EmulatedDevice


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Under `--dist loadgroup` (the README's command) the tests of one module run in one worker, so that its
    # module- and session-scoped builds happen once; modules that share builds name one `xdist_group`.
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def pytest_addoption(parser) -> None:
    # Golden tests (tests/data/*.test): rewrite each case's [out] section with the actual output.
    parser.addoption("--update-data", action="store_true", default=False,
                     help="rewrite the expected outputs of the golden tests in tests/data/ from the actual ones")


@pytest.fixture(scope="session")
def emulated_device(tmp_path_factory: pytest.TempPathFactory) -> EmulatedDevice:
    """The emulated device, shared by the session: each kernel file is translated and each kernel compiled
    once, whichever tests use it."""
    return EmulatedDevice(tmp_path_factory.mktemp("emulated-device"))


@pytest.fixture(scope="session", params=DEVICES)
def device(request):
    """The device the test's kernels run on: the emulated one, and the GPU where `-m gpu` selects it."""
    return request.getfixturevalue("emulated_device") if request.param == "emulated" else CudaDevice()


@pytest.fixture(scope="session")
def code_objects(tmp_path_factory: pytest.TempPathFactory) -> CodeObjects:
    """HIP code objects, each compiled once per session whichever test asks for it first."""
    return CodeObjects(tmp_path_factory.mktemp("hip-code-objects"))
