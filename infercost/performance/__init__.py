"""Where self-host throughput comes from: one home for every step from a measurement to an operating point.

Read in this order:

- ``engine``: a discrete-event simulation of a continuous-batching engine whose step times are linear in roofline
  features (pure).
- ``calibrate``: the step costs fitted to measured or published points, and predictions at any token shape and load
  (pure).
- ``validation``: how far predictions can be trusted, by predicting bundled tables the fit never saw (pure);
  ``bench.prediction_accuracy`` runs it and stores ``data/expected_error.json`` and ``data/calibrations.json``.
- ``profiles``: throughput profiles from stored runs and bundled tables (``data/measured``, ``data/published``), and a
  profile's engine setup (its model shape, GPUs and engine preset); the one module here that reads files or the store.
- ``predict``: predicted points from a profile, or for hardware nobody measured (``roofline:MODEL@NxGPU:DTYPE``), each
  with its basis and the expected error of its kind of transfer.
- ``operating_points``: a self-host setup's points at the workload's shape, with the basis every figure states.
- ``architectures``, ``roofline``: model shapes and the hardware bounds the features are made of (pure);
  ``perfmodel``: the simple fitted model for setups the engine model cannot simulate (a CPU run, an unknown GPU).
"""
