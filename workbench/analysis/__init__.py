"""Analysis over many outcomes: tidy frames from results indexes, the paper's metrics, figures, reports."""
