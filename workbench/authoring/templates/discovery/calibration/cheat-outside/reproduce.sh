# CHEAT (a loose tolerance): the best construction pushed 1e-6 outside the square, which an evaluator with a
# tolerance of 1e-6 would accept with a larger distance. Caught: the stated tolerance is 1e-9.
mkdir -p results
python3 -c "import json; e = 1e-6; json.dump({'points': [[-e, -e], [1 + e, -e], [-e, 1 + e], [1 + e, 1 + e], [0.5, 0.5]]}, open('results/construction.json', 'w'))"
