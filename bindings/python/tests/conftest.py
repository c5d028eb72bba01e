import os

import pytest

import rocm_backend as rb

# RB_TEST_DEVICE picks the device every test runs on (default: the CPU); RB_TEST_EXEC_MODE
# (O0..O3) runs every op call through a recorded graph and an executor at that level.
DEVICE = os.environ.get("RB_TEST_DEVICE", "cpu")


def pytest_report_header(config):
    mode = os.environ.get("RB_TEST_EXEC_MODE", "eager")
    return [
        f"rocm_backend {rb.__version__} from {rb.__file__}",
        f"library: {rb.library_path}",
        f"device: {DEVICE}, execution mode: {mode}",
    ]


@pytest.fixture(autouse=True)
def test_device():
    rb.set_device(DEVICE)
    yield
