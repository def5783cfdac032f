"""Reading the index for a report: only what it shows, the same numbers as reading everything."""

import pandas as pd

from workbench.analysis import frames, metrics
from workbench.analysis.synthetic import synthesize


def test_time_allocation_reads_only_the_sampled_trajectories_and_draws_the_same_ones(tmp_path):
    synthesize(tmp_path / "runs" / "study", configs=3, tasks=4, attempts=10, leaves=6, fields=2, seed=5)
    index = frames.load_index(tmp_path / "runs")
    o = frames.outcomes(index["trials"])
    everything = metrics.time_allocation(o, index["activity_time"], per_config=7)
    sampled = frames.activity_sample(tmp_path / "runs", o, per_config=7)
    assert sampled.groupby("trial_id").ngroups == 3 * 7 < index["activity_time"].trial_id.nunique()
    pd.testing.assert_frame_equal(metrics.time_allocation(o, sampled, per_config=7), everything)
    other_draw = metrics.time_allocation(o, frames.activity_sample(tmp_path / "runs", o, per_config=7, seed=1))
    assert not other_draw.equals(everything)
