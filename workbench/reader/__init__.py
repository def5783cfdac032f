"""The confined reader: everything that parses a submission's evidence runs in a sandbox
(:mod:`.client` asks, ``python -m workbench.reader`` answers inside, on :mod:`.runtime`)."""
