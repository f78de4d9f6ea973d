"""Makes `grove` importable for the model generators (models/*/generate.py):
the installed package, or else the source tree's python/ (grove.ir and
grove.nn need no build, so a bare python3 runs the generators)."""
import os
import sys

try:
    import grove.nn  # noqa: F401
except ImportError:
    for name in [m for m in sys.modules if m.split(".")[0] == "grove"]:
        del sys.modules[name]
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "..", "python"))
