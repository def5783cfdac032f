# CHEAT (non-finite values): NaN compares false with everything, so a careless minimum or bound check lets it
# through. Caught: every coordinate must be a finite number.
mkdir -p results
python3 -c "import json; json.dump({'points': [[0, 0], [1, 0], [0, 1], [1, 1], [float('nan'), 0.5]]}, open('results/construction.json', 'w'))"
