"""Evaluation: the benchmark suites and their episode loop (``suites``, ``runner``), the
single-model baselines (``baselines``), metrics and reports (``metrics``, ``report``,
``plots``), and the ``robomemory bench NAME`` commands (``bench/``)."""
