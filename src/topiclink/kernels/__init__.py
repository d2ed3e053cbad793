"""Numba primitives every family shares: the xoshiro256** streams (:mod:`.rng`), discrete
sampling (:mod:`.sampling`), count distributions (:mod:`.counts`), special functions
(:mod:`.special`) and batch-invariant row products (:mod:`.scores`)."""
