"""Initial construction: 26 equal circles of radius 1/12 on a 6 x 5 grid of cells (30 cells, the first 26
used). Valid but weak: sum of radii = 26/12 = 2.1667. Replace it with something better."""
import json
import os

N = 26
COLS, ROWS = 6, 5
R = 1.0 / 12.0  # half the cell width 1/6; the cell height 1/5 leaves vertical slack

circles = []
for k in range(N):
    col, row = k % COLS, k // COLS
    x = (col + 0.5) / COLS
    y = (row + 0.5) / ROWS
    circles.append([x, y, R])

os.makedirs("results", exist_ok=True)
with open(os.path.join("results", "construction.json"), "w") as fh:
    json.dump({"circles": circles}, fh, indent=1)
print("sum_of_radii (own count, the evaluator recomputes it):", sum(c[2] for c in circles))
