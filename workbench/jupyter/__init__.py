"""Jupyter machinery: the stage kernels (launched, warm, pooled), the papermill engine that runs
notebooks on them, and the Jupyter servers (Voila, JupyterLab) started for a user."""
