"""The reference MCP server for the Ontario clinical tools.

BLAS is limited to one thread per process before numpy loads (unless the environment says
otherwise): the server answers many calls at once, and OpenBLAS's threads spinning on each small
matrix product doubled odb.get's CPU per call (8.1 -> 4.3 ms measured with one thread).
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
