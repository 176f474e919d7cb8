"""Who may depend on the core's packages: the one list their BUILD files share.

The core is linked into the Python module (//bindings) and tested from //tests;
nothing else may reach into it, so a new dependent is a decision made here,
once, not in each package.
"""

CORE_VISIBILITY = [
    "//bindings:__subpackages__",
    "//core:__subpackages__",
    "//tests:__subpackages__",
]
