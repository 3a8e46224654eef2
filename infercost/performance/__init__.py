"""Where self-host throughput comes from: one home for every step from a measurement to an operating point.

- ``profiles``: throughput profiles from stored runs and bundled tables (``data/measured``, ``data/published``);
  the one module here that reads files or the store.
- ``architectures``, ``roofline``: model shapes and the hardware bounds that give priors and
  estimates for setups nobody measured.
- ``perfmodel``: the performance model fitted to points, to carry them to another token shape.
- ``operating_points``: a self-host setup's points at the workload's shape, with the basis every figure states.

Everything but ``profiles`` (and the loaders in ``operating_points`` that call it) is pure: plain numbers in, plain
numbers out.
"""
