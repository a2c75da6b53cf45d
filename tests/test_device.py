import pytest
import torch

from clipkit.device import default_device


def test_override_wins(monkeypatch):
    monkeypatch.setenv("CLIPKIT_DEVICE", "cpu")
    assert default_device() == torch.device("cpu")


def test_bad_override_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("CLIPKIT_DEVICE", "toaster")
    with pytest.raises(ValueError, match="CLIPKIT_DEVICE='toaster'"):
        default_device()


def test_order_is_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv("CLIPKIT_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_device().type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert default_device().type == "mps"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert default_device().type == "cpu"


def test_one_thread_restores_the_count_even_after_an_error():
    from clipkit.device import one_thread

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with one_thread():
            assert torch.get_num_threads() == 1
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before
