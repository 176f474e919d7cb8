"""Random number generation state of openreg devices, as torch.cuda.random.

Each device has a default generator, independent of the CPU's; seeding it makes
openreg random ops reproducible, with the same numbers on every driver.
"""

from typing import List, Union

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


def get_rng_state_all() -> List[torch.Tensor]:
    """The generator state of every device, in device order."""
    return [get_rng_state(index) for index in range(_C._device_count())]


def set_rng_state_all(new_states: List[torch.Tensor]) -> None:
    """Restores the states from get_rng_state_all, one per device."""
    if len(new_states) != _C._device_count():
        raise ValueError(
            f"set_rng_state_all needs one state per openreg device: got {len(new_states)} states "
            f"for {_C._device_count()} devices; pass what get_rng_state_all() returned."
        )
    for index, state in enumerate(new_states):
        set_rng_state(state, index)
