# CHEAT (a claimed score): prints and writes a record-breaking score next to a weak construction. Caught: the
# evaluator computes the metric itself (two points coincide: 0).
mkdir -p results
echo "min_distance: 0.75"
python3 -c "import json; json.dump({'min_distance': 0.75, 'valid': True, 'points': [[0, 0], [0, 0], [1, 0], [0, 1], [1, 1]]}, open('results/construction.json', 'w'))"
