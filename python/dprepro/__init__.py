"""dprepro: Python front end of the dprepro harness.

dprepro.worker  serve a method through the harness's worker protocol
dprepro.results load a finished run (rows, summary, claims, ledger)

The package imports neither submodule itself: a worker loads
dprepro.worker alone (and numpy only when a call needs it).
"""

__version__ = "0.1.0"
PROTOCOL = 1
