"""dualad's asv benchmarks; the problems themselves live in :mod:`dualad.bench`."""
