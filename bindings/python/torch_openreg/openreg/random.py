"""Random number generation state of openreg devices, as torch.cuda.random.

Each device has a default generator; seeding it makes openreg random ops
reproducible, and the same seed gives the same numbers as on the CPU.
"""

from typing import Union

import torch

from torch_openreg import _C


def _generator(device: Union[int, str, torch.device, None] = None) -> torch.Generator:
    from torch_openreg.openreg import _device_index

    return _C._default_generator(_device_index(device))


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every device's generator."""
    for index in range(_C._device_count()):
        _generator(index).manual_seed(int(seed))


def seed() -> None:
    """Seeds the current device's generator with a non-deterministic number."""
    _generator().seed()


def seed_all() -> None:
    """Seeds every device's generator with one non-deterministic number."""
    random_seed = _generator(0).seed()
    for index in range(1, _C._device_count()):
        _generator(index).manual_seed(random_seed)


def initial_seed() -> int:
    """The current device's generator's seed."""
    return _generator().initial_seed()


def get_rng_state(device: Union[int, str, torch.device, None] = None) -> torch.Tensor:
    """The generator state of `device` as a CPU ByteTensor."""
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: Union[int, str, torch.device, None] = None) -> None:
    """Restores a state from get_rng_state."""
    _generator(device).set_state(new_state)
