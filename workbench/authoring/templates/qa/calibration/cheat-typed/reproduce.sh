# CHEAT (typed-in answers): the right format, the right answers for the published inputs, no computation.
# Caught by G1: the file was written by the shell, not by Python.
mkdir -p results
printf '{"method": "monte-carlo", "seed": 1, "n": 300000, "estimate": 3.1393333333333335}\n' > results/estimate.json
printf '{"mcq1": ["B"], "oeq1": "235450 points fell inside."}\n' > results/answers.json
