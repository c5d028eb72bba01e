import pytest

import rocm_backend as rb


def pytest_report_header(config):
    return [f"rocm_backend {rb.__version__} from {rb.__file__}", f"library: {rb.library_path}"]


@pytest.fixture(autouse=True)
def cpu_device():
    rb.set_device("cpu")
    yield
