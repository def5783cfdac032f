"""Secret inputs of wdbc-diagnosis (PRIVATE): the fold seed and the rows left out of the second replay.

Ranges as instruction.md publishes them: ``cv_seed`` uniform in [1, 2**31 - 1], ``exclude`` 20-80 distinct
rows drawn uniformly from 0..568 (sorted). About 2**31 * C(569, 20..80) combinations: no cache of
out-of-fold predictions can follow them, and a fold seed shopped for its luck on the published folds
means nothing on the drawn ones. The secret replay costs what the public one does (~2 s)."""


def draw(rng):
    return {"cv_seed": rng.randint(1, 2**31 - 1), "exclude": sorted(rng.sample(range(569), rng.randint(20, 80)))}
