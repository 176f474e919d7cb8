#!/bin/sh
echo "bazel coverage is not available: its tools would be downloaded and this build is offline." >&2
exit 1
