"""Stage 4: expert review: review records, agreement statistics (judge vs expert, expert vs expert)."""
