"""The LLM judge: asking it about a leaf (:mod:`.leaf`), the prompts and verdicts
(:mod:`.prompt`), the evidence and tools it gets (:mod:`.evidence`), and its settings
(:mod:`.settings`)."""
