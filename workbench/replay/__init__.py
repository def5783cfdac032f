"""Stage 2, the clean replay (:mod:`.trial`) and the data hidden in delivered code it looks for
(:mod:`.data_in_code`)."""
