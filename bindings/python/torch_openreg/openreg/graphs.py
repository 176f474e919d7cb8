"""torch.openreg.Graph, graph(), graph_pool_handle() and is_current_stream_capturing(), as torch.cuda's.

Graph is torch.accelerator.Graph (which reaches openreg's at::GraphImplInterface)
with torch.cuda.CUDAGraph's capture_begin signature; docs/graphs.md describes
capture and replay.
"""

import itertools
from typing import Optional, Tuple

import torch

from torch_openreg import _C

# User pool ids are (0, n); graphs name their own pools (n, 0), so the two
# never collide.
_pool_ids = itertools.count(1)


def graph_pool_handle() -> Tuple[int, int]:
    """A new memory pool id to share between graphs (torch.cuda.graph_pool_handle)."""
    return (0, next(_pool_ids))


def is_current_stream_capturing() -> bool:
    """Whether the current stream of the current device is capturing a graph."""
    return _C._is_current_stream_capturing()


class Graph(torch.accelerator.Graph):
    """A captured openreg graph (torch.cuda.CUDAGraph's counterpart).

    `Graph(keep_graph=False, pool=None)`: capture with capture_begin/capture_end
    (or the graph() context manager), then replay().
    """

    def capture_begin(self, pool: Optional[Tuple[int, int]] = None, capture_error_mode: str = "global") -> None:
        """Begins capturing the current stream's work; `pool` shares another graph's memory pool."""
        if pool is not None:
            self.graph_pool = pool
        self.capture_error_mode = capture_error_mode
        super().capture_begin()


class graph:
    """Captures the work of its body into `openreg_graph` (torch.cuda.graph).

    Capture runs on `stream` (a new side stream by default, as on CUDA); the
    body's work is recorded, not run. `pool` shares another graph's memory pool.
    """

    def __init__(
        self,
        openreg_graph: Graph,
        pool: Optional[Tuple[int, int]] = None,
        stream: Optional[torch.Stream] = None,
        capture_error_mode: str = "global",
    ):
        from torch_openreg.openreg.streams import Stream

        self.openreg_graph = openreg_graph
        self.pool = pool
        self.capture_stream = stream if stream is not None else Stream()
        self.capture_error_mode = capture_error_mode
        self.stream_context = None

    def __enter__(self) -> None:
        from torch_openreg.openreg import synchronize
        from torch_openreg.openreg.streams import stream as stream_context

        synchronize()
        self.stream_context = stream_context(self.capture_stream)
        self.stream_context.__enter__()
        try:
            self.openreg_graph.capture_begin(pool=self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_context.__exit__(None, None, None)
            raise

    def __exit__(self, *exc_info) -> None:
        try:
            self.openreg_graph.capture_end()
        finally:
            self.stream_context.__exit__(*exc_info)
