"""Secret inputs of inverted-pendulum-lqr (PRIVATE): the cart-pendulum's parameters, the second LQR
design's weights, the regulation's initial angle and the step of the second replay. Ranges as
instruction.md publishes them; continuous values with 3-4 decimals, so no cache can hold the answers.
The secret replay costs what the public one does (~2 s)."""


def draw(rng):
    return {
        "cart_mass": round(rng.uniform(0.3, 1.0), 3),
        "pendulum_mass": round(rng.uniform(0.1, 0.4), 3),
        "friction": round(rng.uniform(0.05, 0.2), 3),
        "com_length": round(rng.uniform(0.2, 0.4), 3),
        "inertia": round(rng.uniform(0.003, 0.012), 4),
        "Q_diag": [round(rng.uniform(1000.0, 8000.0), 1), 0.0, round(rng.uniform(50.0, 300.0), 1), 0.0],
        "phi0": round(rng.uniform(0.05, 0.15), 3),
        "step": round(rng.uniform(0.1, 0.3), 3),
    }
