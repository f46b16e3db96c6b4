"""The ratings' linear algebra in one thread.

The fits' matrices are small (bots x bots), and a second BLAS thread only busy-waits for a
core that a game or a page needs: on a loaded 2-core machine a 100 x 100 solve took 40 ms with
two threads, well under 1 ms with one, and a 200-bot league's closing standings ran for more
than 10 minutes. NumPy's BLAS reads its thread count when numpy is first imported: call
`one_blas_thread()` before anything imports numpy (the command line does, first thing).
"""

from __future__ import annotations

import os

__all__ = ["ONE_THREAD", "one_blas_thread"]

ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def one_blas_thread() -> None:
    """BLAS in one thread in this process and its children, unless the user chose a count."""
    for key, value in ONE_THREAD.items():
        os.environ.setdefault(key, value)
