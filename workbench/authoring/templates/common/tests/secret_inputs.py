"""The second replay's inputs (PRIVATE): drawn per scoring from the ranges instruction.md publishes."""


def draw(rng) -> dict:
    # TODO(author): your task's inputs; the example's are a seed and a sample count
    return {"seed": rng.randint(1, 10**9), "n": rng.randint(200_000, 400_000)}
