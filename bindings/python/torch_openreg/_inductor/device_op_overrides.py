"""The snippets of Python Inductor's wrapper code uses for device operations
on openreg. Only the Python wrapper exists for openreg, so the C++-wrapper
snippets keep the base class's NotImplementedError."""

from textwrap import dedent

from torch._inductor.codegen.common import DeviceOpOverrides


class OpenRegDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return dedent(
            f"""
            from torch_openreg._inductor.device_interface import OpenRegInterface
            {name} = OpenRegInterface.get_raw_stream
            """
        )

    def set_device(self, device_idx: int) -> str:
        return f"torch.openreg.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.openreg.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.openreg.device({device_idx})"

    def current_stream(self) -> str:
        return "torch.openreg.current_stream()"
