"""One BLAS thread in the server even when numpy was loaded before the package set it.

The child process imports numpy first with OpenBLAS told to use two threads, then sets the
environment the way `reference_server/__init__.py` would have, and makes the query embedder
(what `Runtime.warm_up` does first): OpenBLAS must run one thread afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import os
    import numpy  # loaded before the package: OpenBLAS reads OPENBLAS_NUM_THREADS=2 now
    from reference_server.blas_threads import blas_threads
    before = blas_threads()
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    from reference_server.config import Settings
    from reference_server.embedding import make_embedder
    make_embedder(Settings.from_env(), for_queries=True)
    print(before, blas_threads())
    """
)


def test_query_embedder_sets_one_blas_thread_after_numpy_loaded_first() -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "PYTHONPATH": os.getcwd()}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    before, after = out.stdout.strip().rsplit(" [", 1)
    assert before == "[2]"  # the test's premise: numpy's OpenBLAS started with two threads
    assert "[" + after == "[1]"
