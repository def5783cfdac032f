"""Building tasks: the construction checks of a package and its validation, which run the whole pipeline."""
