"""One trial: the four stages as functions (:mod:`.stages`), run through an engine and recorded
in trial.json (:mod:`.pipeline`, :mod:`.record`), and what a stage notebook shows (:mod:`.displays`)."""
