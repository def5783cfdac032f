"""The docker sandbox: per-command containers (:mod:`.sandbox`), one container per session
(:mod:`.session`), their options (:mod:`.options`) and images (:mod:`.image`)."""
