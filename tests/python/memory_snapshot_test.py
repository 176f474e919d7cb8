"""Memory history and snapshots in torch.cuda.memory's format: PyTorch's own
viewer code (torch.cuda._memory_viz) reads them, segments and blocks agree with
memory_stats, stacks name the Python function that allocated, max_entries
bounds the trace, private graph pools show their id, and bad arguments raise
errors that say what to pass."""

import pickle

import pytest
import torch
from torch.cuda import _memory_viz

from openreg_testing import run_python

memory = torch.openreg.memory


def _lines(lines):
    # _memory_viz's flame-graph formatter would download flamegraph.pl; the
    # folded lines it would draw are what we check.
    return lines


@pytest.fixture
def recording():
    torch.openreg.synchronize()
    memory._record_memory_history(enabled=None)
    yield
    torch.openreg.synchronize()
    memory._record_memory_history(enabled=None)


def _blocks_by_address(snapshot):
    return {b["address"]: b for s in snapshot["segments"] for b in s["blocks"]}


def test_snapshot_has_cudas_format_and_memory_viz_reads_it(recording, tmp_path):
    memory._record_memory_history()
    x = torch.randn(1000, device="openreg")
    y = torch.empty(3 * 2**20, dtype=torch.uint8, device="openreg")
    del x
    torch.openreg.synchronize()
    snapshot = memory._snapshot()
    assert set(snapshot) == {"segments", "device_traces", "allocator_settings"}
    assert snapshot["allocator_settings"]["expandable_segments"] is False
    segment_keys = {"device", "address", "total_size", "allocated_size", "active_size",
                    "requested_size", "stream", "segment_type", "segment_pool_id",
                    "is_expandable", "frames", "blocks"}
    for segment in snapshot["segments"]:
        assert set(segment) == segment_keys
        assert segment["segment_type"] in ("small", "large")
        assert segment["segment_pool_id"] == (0, 0)
        for block in segment["blocks"]:
            assert set(block) == {"address", "size", "requested_size", "state", "frames"}
            assert block["state"] in ("active_allocated", "active_pending_free", "inactive")
    trace = snapshot["device_traces"][0]
    assert {"alloc", "free_requested", "free_completed", "snapshot"} <= {e["action"] for e in trace}
    for entry in trace:
        assert {"action", "addr", "size", "stream", "time_us", "frames"} <= set(entry)
    assert [e["time_us"] for e in trace] == sorted(e["time_us"] for e in trace)

    # PyTorch's viewer code, as for a CUDA snapshot.
    assert f"seg_{snapshot['segments'][0]['address']}" in "".join(
        _memory_viz.segments(snapshot, format_flamegraph=_lines))
    assert "active_allocated" in "".join(_memory_viz.memory(snapshot, format_flamegraph=_lines))
    assert "segments: " in _memory_viz.segsum(snapshot)
    text = _memory_viz.trace(snapshot)
    assert "Device 0" in text and "TOTAL MEM" in text
    assert "del " in text and "free completed" in text
    _memory_viz.compare(snapshot["segments"], snapshot["segments"], format_flamegraph=_lines)
    for html in (_memory_viz.trace_plot(snapshot), _memory_viz.segment_plot(snapshot),
                 _memory_viz.trace_plot(snapshot, plot_segments=True)):
        assert "MemoryViz.js" in html

    path = tmp_path / "snapshot.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        dumped = pickle.load(f)
    assert _blocks_by_address(dumped)[y.data_ptr()]["state"] == "active_allocated"


def test_memory_viz_command_line_reads_a_dump(tmp_path):
    path = tmp_path / "dump.pickle"
    result = run_python(
        f"""
        import torch
        torch.openreg.memory._record_memory_history()
        x = torch.ones(4096, device="openreg") * 2
        torch.openreg.memory._dump_snapshot({str(path)!r})
        import runpy, sys
        sys.argv = ["_memory_viz", "stats", {str(path)!r}]
        runpy.run_module("torch.cuda._memory_viz", run_name="__main__")
        sys.argv = ["_memory_viz", "trace", {str(path)!r}]
        runpy.run_module("torch.cuda._memory_viz", run_name="__main__")
        sys.argv = ["_memory_viz", "trace_plot", {str(path)!r}, "-o", {str(tmp_path / "plot.html")!r}]
        runpy.run_module("torch.cuda._memory_viz", run_name="__main__")
        """)
    assert result.returncode == 0, result.stderr
    assert "segments: " in result.stdout
    assert "Device 0" in result.stdout
    assert "MemoryViz.js" in (tmp_path / "plot.html").read_text()


def test_segments_and_blocks_agree_with_memory_stats(recording):
    memory._record_memory_history()
    kept = [torch.empty(n, dtype=torch.uint8, device="openreg")
            for n in (100, 5000, 2**20 + 7, 3 * 2**20, 12 * 2**20)]
    del kept[1]
    torch.openreg.synchronize()
    snapshot = memory._snapshot()
    stats = memory.memory_stats()
    segments = snapshot["segments"]
    assert sum(s["total_size"] for s in segments) == stats["reserved_bytes.all.current"]
    assert sum(s["allocated_size"] for s in segments) == stats["allocated_bytes.all.current"]
    assert sum(s["requested_size"] for s in segments) == stats["requested_bytes.all.current"]
    assert sum(s["active_size"] for s in segments) == stats["active_bytes.all.current"]
    assert len(segments) == stats["segment.all.current"]
    allocated = [b for s in segments for b in s["blocks"] if b["state"] == "active_allocated"]
    assert len(allocated) == stats["allocation.all.current"]
    for pool in ("small", "large"):
        assert (sum(s["total_size"] for s in segments if s["segment_type"] == pool)
                == stats[f"reserved_bytes.{pool}_pool.current"])
    for segment in segments:
        address = segment["address"]
        for block in segment["blocks"]:
            assert block["address"] == address
            address += block["size"]
        assert address == segment["address"] + segment["total_size"]
    blocks = _blocks_by_address(snapshot)
    for tensor in kept:
        block = blocks[tensor.data_ptr()]
        assert block["requested_size"] == tensor.numel()
        assert block["size"] >= tensor.numel()


def allocate_in_a_named_function():
    return torch.empty(777, dtype=torch.uint8, device="openreg")


def test_frames_name_the_python_function_that_allocated(recording):
    memory._record_memory_history(stacks="python")
    tensor = allocate_in_a_named_function()
    snapshot = memory._snapshot()
    frames = _blocks_by_address(snapshot)[tensor.data_ptr()]["frames"]
    names = [f["name"] for f in frames]
    assert "allocate_in_a_named_function" in names
    assert "test_frames_name_the_python_function_that_allocated" in names
    frame = frames[names.index("allocate_in_a_named_function")]
    assert frame["filename"].endswith("memory_snapshot_test.py")
    assert frame["line"] > 0
    alloc = [e for e in snapshot["device_traces"][0]
             if e["action"] == "alloc" and e["addr"] == tensor.data_ptr()]
    assert "allocate_in_a_named_function" in [f["name"] for f in alloc[-1]["frames"]]
    # Python only: no frame comes from a C++ file.
    assert all(f["filename"].endswith(".py") for f in frames)


def test_stacks_all_adds_cpp_frames(recording):
    memory._record_memory_history(stacks="all")
    tensor = allocate_in_a_named_function()
    frames = _blocks_by_address(memory._snapshot())[tensor.data_ptr()]["frames"]
    names = [f["name"] for f in frames]
    assert "allocate_in_a_named_function" in names
    # The allocator's own C++ frame is among them.
    assert any("openreg::" in name for name in names), names


def test_entries_carry_the_current_stream(recording):
    memory._record_memory_history()
    on_default = torch.empty(4096, device="openreg")
    side = torch.openreg.Stream()
    with torch.openreg.stream(side):
        on_side = torch.empty(4096, device="openreg")
    trace = memory._snapshot()["device_traces"][0]
    stream_of = {e["addr"]: e["stream"] for e in trace if e["action"] == "alloc"}
    assert stream_of[on_default.data_ptr()] != stream_of[on_side.data_ptr()]
    del on_default, on_side


def test_max_entries_bounds_the_trace(recording):
    memory._record_memory_history(max_entries=10)
    for n in range(50):
        torch.empty(512 * (n + 1), dtype=torch.uint8, device="openreg")
    torch.openreg.synchronize()
    trace = memory._snapshot()["device_traces"][0]
    assert len(trace) == 10
    # The newest entries: the last tensor's, then the snapshot.
    assert trace[-1]["action"] == "snapshot"
    assert [e["size"] for e in trace if e["action"] == "alloc"][-1] == 512 * 50


def test_enabling_state_and_disabling(recording):
    memory._record_memory_history(enabled="state")
    kept = allocate_in_a_named_function()
    snapshot = memory._snapshot()
    assert snapshot["device_traces"][0] == []
    assert _blocks_by_address(snapshot)[kept.data_ptr()]["frames"]
    memory._record_memory_history(enabled=None)
    later = allocate_in_a_named_function()
    snapshot = memory._snapshot()
    assert snapshot["device_traces"] == [[] for _ in snapshot["device_traces"]]
    assert _blocks_by_address(snapshot)[later.data_ptr()]["frames"] == []
    # context=None: a trace without stacks.
    memory._record_memory_history(context=None)
    third = allocate_in_a_named_function()
    trace = memory._snapshot()["device_traces"][0]
    assert [e["frames"] for e in trace if e["action"] == "alloc" and e["addr"] == third.data_ptr()] == [[]]
    # clear_history drops what was recorded.
    memory._record_memory_history(clear_history=True)
    assert [e["action"] for e in memory._snapshot()["device_traces"][0]] == ["snapshot"]
    memory._record_memory_history(skip_actions=["snapshot", "alloc"], clear_history=True)
    del third
    torch.openreg.synchronize()
    actions = {e["action"] for e in memory._snapshot()["device_traces"][0]}
    assert actions == {"free_requested", "free_completed"}


def test_out_of_memory_is_in_the_trace():
    result = run_python(
        """
        import torch
        torch.openreg.memory._record_memory_history()
        try:
            torch.empty(100 * 2**20, dtype=torch.uint8, device="openreg")
        except torch.OutOfMemoryError:
            pass
        [oom] = [e for e in torch.openreg.memory._snapshot()["device_traces"][0]
                 if e["action"] == "oom"]
        print("oom", oom["size"], oom["device_free"] > 0)
        from torch.cuda import _memory_viz
        print(_memory_viz.trace(torch.openreg.memory._snapshot()).count("OutOfMemoryError"))
        """,
        env={"OPENREG_DEVICE_MEMORY": "64MiB"},
    )
    assert result.returncode == 0, result.stderr
    assert f"oom {100 * 2**20} True" in result.stdout
    assert "\n1\n" in result.stdout


def test_graph_private_pool_segments_show_their_id(recording):
    memory._record_memory_history()
    pool = torch.openreg.graph_pool_handle()
    static_input = torch.ones(256, device="openreg")
    graph = torch.openreg.Graph()
    with torch.openreg.graph(graph, pool=pool):
        static_output = static_input * 3
    graph.replay()
    torch.openreg.synchronize()
    snapshot = memory._snapshot()
    owner = [s for s in snapshot["segments"]
             if any(b["address"] == static_output.data_ptr() for b in s["blocks"])]
    assert [s["segment_pool_id"] for s in owner] == [tuple(pool)]
    assert any(e.get("pool_id") == tuple(pool) for e in snapshot["device_traces"][0])
    del graph, static_output


@pytest.mark.parametrize("arguments, expected", [
    ({"enabled": "everything"}, "enabled must be one of None, 'state', 'all', got 'everything'"),
    ({"enabled": True}, "enabled must be one of None, 'state', 'all', got True"),
    ({"context": "some"}, "context must be one of None, 'state', 'alloc', 'all', got 'some'"),
    ({"stacks": "cpp"}, "stacks must be one of 'python', 'all', got 'cpp'"),
    ({"max_entries": 0}, "max_entries must be a positive int"),
    ({"max_entries": 2.5}, "max_entries must be a positive int"),
    ({"skip_actions": ["allocate"]}, "skip_actions names unknown action 'allocate'; the actions are alloc"),
])
def test_bad_arguments_say_what_to_pass(recording, arguments, expected):
    with pytest.raises(ValueError) as error:
        memory._record_memory_history(**arguments)
    assert expected in str(error.value)
    assert "e.g." in str(error.value) or "the actions are" in str(error.value)
    # Nothing changed, and recording still works.
    assert memory._snapshot()["device_traces"][0] == []
    memory._record_memory_history()
    x = torch.empty(10, device="openreg")
    assert any(e["action"] == "alloc" for e in memory._snapshot()["device_traces"][0])
    del x


@pytest.mark.parametrize("name", ["compile_context", "global_record_annotations"])
def test_cuda_only_options_are_refused(recording, name):
    with pytest.raises(NotImplementedError, match=f"{name}=True is not supported on openreg.*pass {name}=False"):
        memory._record_memory_history(**{name: True})


def test_binding_rejects_out_of_range_values(recording):
    from torch_openreg import _C

    with pytest.raises(ValueError, match="context must be 0 \\(never\\) to 3 \\(all\\), got 7"):
        _C._record_memory_history(True, True, 7, True, False, 10, [])
    with pytest.raises(ValueError, match="max_entries must be at least 1"):
        _C._record_memory_history(True, True, 3, True, False, 0, [])
    with pytest.raises(ValueError, match="unknown action in skip_actions: 'x'"):
        _C._record_memory_history(True, True, 3, True, False, 10, ["x"])
