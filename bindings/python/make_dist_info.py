"""Writes a dist-info (METADATA, entry_points.txt) from pyproject.toml.

Bazel's test layout needs the same metadata `pip install .` produces, so that
`import torch` alone finds the backend through its entry point; generating it
from pyproject.toml keeps one source for name, version and entry points.

    make_dist_info.py PYPROJECT METADATA_OUT ENTRY_POINTS_OUT
"""

import sys
import tomllib


def main() -> None:
    pyproject_path, metadata_path, entry_points_path = sys.argv[1:4]
    with open(pyproject_path, "rb") as file:
        project = tomllib.load(file)["project"]
    with open(metadata_path, "w") as file:
        file.write(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    with open(entry_points_path, "w") as file:
        for group, entries in project.get("entry-points", {}).items():
            file.write(f"[{group}]\n")
            for name, value in entries.items():
                file.write(f"{name} = {value}\n")


if __name__ == "__main__":
    main()
