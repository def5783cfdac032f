"""Stage 1, the agent session: running it (:mod:`.run`), what it records beside its submission
(:mod:`.ledger`) and the hidden scoring service a session may call (:mod:`.scoring_service`)."""
