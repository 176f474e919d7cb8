"""Atomic instructions executed (read-modify-writes and fences), counted from a callgrind profile.

Callgrind counts a `lock`-prefixed instruction (an atomic increment, compare-exchange, a mutex's lock) or an
`xchg` with memory (what a sequentially consistent atomic store compiles to) as one instruction, like an add.
On this machine one costs about 2 ns in a tight loop, against 0.3-0.5 ns for a plain increment, and it also
orders the memory accesses around it. So two per-op paths with the same instruction count can differ in time by
their atomics (docs/performance.md, "Atomic instructions: time the instruction count does not show").

The profile must come from `valgrind --tool=callgrind --dump-instr=yes`: its cost lines then carry the address of
each executed instruction, in the virtual addresses of the object it belongs to. This module reads the bytes at
those addresses from the object files and classifies each instruction; it needs no disassembler.
"""

import collections
import re
import struct

# Legacy prefixes that may precede `lock` (0xF0) or come between it and the opcode.
_PREFIXES = frozenset({0x66, 0x67, 0xF2, 0xF3, 0x2E, 0x3E, 0x26, 0x64, 0x65, 0x36})
_LOCK = 0xF0
_PT_LOAD = 1


def instruction_kind(code: bytes):
    """"lock" for a lock-prefixed instruction, "xchg" for an exchange with memory (implicitly locked), "fence"
    for mfence, None otherwise. `code` starts at the instruction's first byte (8 bytes are enough)."""
    i, locked = 0, False
    while i < len(code) and (code[i] in _PREFIXES or code[i] == _LOCK):
        locked |= code[i] == _LOCK
        i += 1
    if locked:
        return "lock"
    if i < len(code) and 0x40 <= code[i] <= 0x4F:  # REX
        i += 1
    if i + 1 < len(code) and code[i] in (0x86, 0x87) and code[i + 1] >> 6 != 0b11:  # ModRM names memory
        return "xchg"
    if code[i:i + 3] == b"\x0f\xae\xf0":
        return "fence"
    return None


def executed_instructions(lines):
    """{(object path, address, function): times executed} from the lines of a --dump-instr=yes profile."""
    counts = collections.Counter()
    objects, functions = {}, {}
    current_object = current_function = None
    address = 0
    after_call = False
    for line in lines:
        # Names are compressed: "(id) name" the first time, "(id)" after; callee lines (cob=, cfn=) define too.
        named = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if named:
            callee, kind, number, name = named.groups()
            table = objects if kind == "ob" else functions
            if name:
                table[number] = name
            if not callee:
                if kind == "ob":
                    current_object = table[number]
                else:
                    current_function = table[number]
            continue
        if line.startswith("calls="):
            after_call = True  # the next cost line is the call's inclusive cost, not an instruction's own
            continue
        cost = re.match(r"(0x[0-9a-fA-F]+|[+-]\d+|\*)\s+\S+\s+(\d+)", line)
        if not cost:
            continue
        position = cost.group(1)
        if position.startswith("0x"):
            address = int(position, 16)
        elif position[0] in "+-":
            address += int(position)
        if after_call:
            after_call = False
            continue
        counts[(current_object, address, current_function)] += int(cost.group(2))
    return counts


def load_segments(elf):
    """[(first virtual address, end, file offset)] of an ELF64 file's loadable segments."""
    elf.seek(0)
    header = elf.read(64)
    if header[:4] != b"\x7fELF" or header[4] != 2:
        raise ValueError(f"{getattr(elf, 'name', 'the file')} is not a 64-bit ELF file")
    (program_headers,) = struct.unpack_from("<Q", header, 0x20)
    entry_size, entries = struct.unpack_from("<HH", header, 0x36)
    segments = []
    for index in range(entries):
        elf.seek(program_headers + index * entry_size)
        kind, _, offset, virtual, _, file_size = struct.unpack("<IIQQQQ", elf.read(40))
        if kind == _PT_LOAD:
            segments.append((virtual, virtual + file_size, offset))
    return segments


def count_atomics(profile_path, by_function=False):
    """{(object name[, function]): atomic instructions (any instruction_kind) executed} in one --dump-instr=yes
    profile."""
    with open(profile_path) as profile:
        executed = executed_instructions(profile)
    totals = collections.Counter()
    files = {}
    try:
        for (path, address, function), times in executed.items():
            if path is None or path.startswith("???"):
                continue
            if path not in files:
                try:
                    elf = open(path, "rb")
                    files[path] = (elf, load_segments(elf))
                except (OSError, ValueError):
                    files[path] = (None, [])
            elf, segments = files[path]
            for first, end, offset in segments:
                if first <= address < end:
                    elf.seek(address - first + offset)
                    if instruction_kind(elf.read(8)):
                        name = path.rsplit("/", 1)[-1]
                        totals[(name, function) if by_function else (name,)] += times
                    break
    finally:
        for elf, _ in files.values():
            if elf is not None:
                elf.close()
    return totals
