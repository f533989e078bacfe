"""setuptools' build (the metadata is in pyproject.toml), with the op kernels built at
installation: after the C extensions, ``python -m plaidarray.prebuild`` compiles the
baseline tier's kernels into the package's ``_kernels`` directory (``plaidarray/prebuild.py``),
so that a fresh install's first script runs without compiling. It runs with the package
just built (in place, for an editable install); if it cannot (no compiler stack in the
build environment), the install goes on and kernels are compiled on first use instead.
``PLAIDARRAY_BUILD_KERNELS=0`` skips it (a quicker install for development).
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext


class BuildExtensionsAndKernels(build_ext):
    """``build_ext``, then the op kernels."""

    def run(self) -> None:
        super().run()
        if os.environ.get("PLAIDARRAY_BUILD_KERNELS", "1") == "0":
            return
        root = Path.cwd() if self.inplace else Path(self.build_lib).resolve()
        paths = [str(root), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        try:
            code = subprocess.call([sys.executable, "-m", "plaidarray.prebuild", str(root / "plaidarray" / "_kernels")],
                                   env=env, cwd=root)
        except OSError as error:
            code = str(error)
        if code:
            print(f"plaidarray: the op kernels were not built ({code}); they are compiled on first use", file=sys.stderr)


setup(cmdclass={"build_ext": BuildExtensionsAndKernels})
