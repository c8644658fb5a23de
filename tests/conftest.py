"""Options and fixtures shared by the whole test suite."""
from __future__ import annotations

import pytest

import rs2gpu

from tests.support.code_objects import CodeObjects
from tests.support.devices import DEVICES, CudaDevice, EmulatedDevice, rustc_build
from tests.support.paths import RAJAPERF


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
def kernel_cache(tmp_path_factory: pytest.TempPathFactory):
    """The compiled-kernel cache (RS2GPU_CACHE_DIR) in a folder of the session, not the user's cache; the
    worker processes that tests start inherit it."""
    folder = tmp_path_factory.mktemp("kernel-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RS2GPU_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="session")
def rajaperf(kernel_cache):
    """rustc's build of examples/rajaperf, through the session's kernel cache."""
    return rs2gpu.load(RAJAPERF, backend="cpu")


@pytest.fixture(scope="session")
def code_objects(tmp_path_factory: pytest.TempPathFactory) -> CodeObjects:
    """HIP code objects, each compiled once per session whichever test asks for it first."""
    return CodeObjects(tmp_path_factory.mktemp("hip-code-objects"))


# A test module whose kernels come from one file names it `SOURCE`; these three fixtures load that file.
@pytest.fixture(scope="module")
def rust(request):
    """rustc's build of the module's `SOURCE` (the cpu backend): the values every device must give."""
    return rustc_build(request.module.SOURCE)


@pytest.fixture(scope="module")
def kernels(request, device):
    """The module's `SOURCE` loaded on `device`."""
    return device.load(request.module.SOURCE)


@pytest.fixture(scope="module")
def emulated(request, emulated_device):
    """The module's `SOURCE` loaded on the emulated device, for what only its launch log and memory show."""
    return emulated_device.load(request.module.SOURCE)
