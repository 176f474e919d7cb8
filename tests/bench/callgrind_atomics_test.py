"""bench/callgrind_atomics.py: which instructions are atomic, and how often a profile executed them."""

import struct

import pytest

from callgrind_atomics import count_atomics, executed_instructions, instruction_kind

LOCK_CMPXCHG = bytes.fromhex("f0480fb111")  # lock cmpxchg [rcx], rdx
ADD = bytes.fromhex("4801c3")  # add rbx, rax
XCHG_MEMORY = bytes.fromhex("488707")  # xchg [rdi], rax: implicitly locked


@pytest.mark.parametrize("code, kind", [
    (LOCK_CMPXCHG, "lock"),
    (bytes.fromhex("66f00fb111"), "lock"),  # an operand-size prefix before lock
    (bytes.fromhex("f0ff07"), "lock"),  # lock inc dword [rdi]
    (XCHG_MEMORY, "xchg"),
    (bytes.fromhex("4887c3"), None),  # xchg rbx, rax: registers only, no lock
    (bytes.fromhex("0faef0"), "fence"),  # mfence
    (ADD, None),
    (bytes.fromhex("f3c3"), None),  # rep ret
])
def test_instruction_kind(code, kind):
    assert instruction_kind(code + bytes(8)) == kind


def write_elf(path, code_offset, code, load_address=0x400000):
    """A 64-bit ELF file with one loadable segment mapping the whole file at `load_address`."""
    size = code_offset + len(code)
    header = bytearray(64)
    header[:5] = b"\x7fELF\x02"
    struct.pack_into("<Q", header, 0x20, 64)  # program headers right after this header
    struct.pack_into("<HH", header, 0x36, 56, 1)
    program_header = struct.pack("<IIQQQQQQ", 1, 5, 0, load_address, load_address, size, size, 0x1000)
    image = bytearray(size)
    image[:64] = header
    image[64:64 + len(program_header)] = program_header
    image[code_offset:] = code
    with open(path, "wb") as out:
        out.write(image)


def test_atomics_are_counted_per_object_and_function_and_calls_are_not(tmp_path):
    library = tmp_path / "libdemo.so"
    write_elf(library, 0x100, LOCK_CMPXCHG + ADD + XCHG_MEMORY)
    profile = tmp_path / "callgrind.out"
    profile.write_text(f"""positions: instr line
events: Ir
ob=(1) {library}
fl=(1) ???
fn=(1) caller
0x400100 0 3
+5 0 7
+3 0 2
cob=(1)
cfn=(2) callee
calls=1 0x400100
* 0 500
fn=(2)
0x400100 0 4
""")
    assert count_atomics(profile) == {("libdemo.so",): 3 + 2 + 4}
    assert count_atomics(profile, by_function=True) == {("libdemo.so", "caller"): 5, ("libdemo.so", "callee"): 4}


def test_relative_addresses_follow_the_last_one():
    counts = executed_instructions(["ob=(1) /x.so\n", "fn=(1) f\n", "0x10 0 1\n", "+4 0 2\n", "-2 0 3\n"])
    assert counts == {("/x.so", 0x10, "f"): 1, ("/x.so", 0x14, "f"): 2, ("/x.so", 0x12, "f"): 3}


def test_objects_that_cannot_be_read_are_skipped(tmp_path):
    profile = tmp_path / "callgrind.out"
    profile.write_text(f"ob=(1) {tmp_path / 'gone.so'}\nfn=(1) f\n0x10 0 5\n")
    assert count_atomics(profile) == {}
