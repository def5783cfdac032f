# CHEAT (a result shipped as data): the estimate computed elsewhere, shipped as src/estimate.json and copied
# by Python. Caught before the replay: JSON is data, not a source, unless the task declares it.
mkdir -p results
python3 -c "import shutil; shutil.copy('src/estimate.json', 'results/estimate.json')"
echo "The standard error is 1.64/sqrt(n) = 0.003." > results/notes.md
