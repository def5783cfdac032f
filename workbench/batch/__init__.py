"""Batches: a matrix (:mod:`.matrix`) run resumably, exactly once (:mod:`.run`), what a run
directory was started with (:mod:`.run_spec`), and where its trials execute (:mod:`.executors`)."""
