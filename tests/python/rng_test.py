"""Random number generation: per-device generators, seeding and exact state round trips."""

import pytest
import torch


def draw(device="openreg", generator=None):
    return torch.rand(16, device=device, generator=generator).cpu()


def test_each_device_has_its_own_default_generator():
    torch.openreg.manual_seed_all(5)
    first_on_0 = draw("openreg:0")
    first_on_1 = draw("openreg:1")
    assert torch.equal(first_on_0, first_on_1)  # same seed, separate generators
    draw("openreg:0")
    torch.openreg.manual_seed_all(5)
    draw("openreg:0")
    draw("openreg:0")
    assert torch.equal(draw("openreg:1"), first_on_1)  # device 0's draws did not advance device 1


def test_generator_on_a_given_device():
    generator = torch.Generator(device="openreg:1")
    assert generator.device == torch.device("openreg:1")
    generator.manual_seed(11)
    a = torch.rand(16, device="openreg:1", generator=generator).cpu()
    generator.manual_seed(11)
    b = torch.rand(16, device="openreg:1", generator=generator).cpu()
    assert torch.equal(a, b)
    assert generator.initial_seed() == 11


def test_manual_seed_seed_and_initial_seed():
    torch.openreg.manual_seed(123)
    assert torch.openreg.initial_seed() == 123
    torch.openreg.seed()
    first = torch.openreg.initial_seed()
    torch.openreg.seed()
    assert torch.openreg.initial_seed() != first
    torch.openreg.seed_all()
    seeds = set()
    for device in range(torch.openreg.device_count()):
        with torch.openreg.device(device):
            seeds.add(torch.openreg.initial_seed())
    assert len(seeds) == 1


def test_get_and_set_rng_state_round_trip_exactly():
    torch.openreg.manual_seed(3)
    draw()
    state = torch.openreg.get_rng_state()
    assert state.device == torch.device("cpu") and state.dtype == torch.uint8
    expected = [draw() for _ in range(3)]
    torch.openreg.set_rng_state(state)
    assert all(torch.equal(draw(), e) for e in expected)
    assert torch.equal(torch.openreg.get_rng_state(), torch.openreg.get_rng_state())


def test_rng_state_all_round_trips_every_device():
    states = torch.openreg.get_rng_state_all()
    assert len(states) == torch.openreg.device_count()
    expected = [draw("openreg:0"), draw("openreg:1")]
    torch.openreg.set_rng_state_all(states)
    assert torch.equal(draw("openreg:0"), expected[0])
    assert torch.equal(draw("openreg:1"), expected[1])


def test_set_rng_state_rejects_a_bad_state():
    with pytest.raises(RuntimeError, match="size 5056 but found .* 3"):
        torch.openreg.set_rng_state(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        torch.openreg.set_rng_state(torch.zeros(5056, dtype=torch.float32))


def test_set_rng_state_all_needs_one_state_per_device():
    with pytest.raises(ValueError, match="got 1 states for 2 devices"):
        torch.openreg.set_rng_state_all([torch.openreg.get_rng_state()])


def test_fork_rng_restores_openreg_state():
    torch.openreg.manual_seed_all(9)
    expected = draw()
    torch.openreg.manual_seed_all(9)
    with pytest.warns(UserWarning, match="initialize \\*every\\* OPENREG device"):  # torch's warning for devices=None
        with torch.random.fork_rng(device_type="openreg"):
            draw()
            draw()
    assert torch.equal(draw(), expected)
    torch.openreg.manual_seed_all(9)
    draw()
    expected_on_1 = draw("openreg:1")
    torch.openreg.manual_seed_all(9)
    draw()
    with torch.random.fork_rng(devices=[1], device_type="openreg"):
        draw("openreg:1")
    assert torch.equal(draw("openreg:1"), expected_on_1)


def test_openreg_generator_is_independent_of_the_cpu_generator():
    torch.openreg.manual_seed_all(1)
    torch.random.default_generator.manual_seed(1)
    openreg_numbers = draw()
    torch.openreg.manual_seed_all(1)
    torch.rand(1000)  # CPU draws do not move the openreg generator
    torch.random.default_generator.manual_seed(999)
    assert torch.equal(draw(), openreg_numbers)
    torch.openreg.manual_seed_all(1)
    torch.random.default_generator.manual_seed(1)
    cpu_before = torch.random.get_rng_state()
    draw()
    assert torch.equal(torch.random.get_rng_state(), cpu_before)  # and openreg draws do not move the CPU's


def test_torch_manual_seed_seeds_openreg_too():
    torch.manual_seed(77)
    assert torch.openreg.initial_seed() == 77
