# CHEAT (answers shipped as data): the answers computed elsewhere, shipped as src/answers.json and copied by
# Python. Caught before the replay: JSON is data, not a source, unless the task declares it.
mkdir -p results
python3 -c "import shutil; shutil.copy('src/estimate.json', 'results/estimate.json'); shutil.copy('src/answers.json', 'results/answers.json')"
