"""Out-of-fold predictions of the reference run (1 = benign), one bit per sample, as hex."""

RUNS = {
    'all-features': {
        'features': ['mean radius', 'mean texture', 'mean perimeter', 'mean area', 'mean smoothness', 'mean compactness', 'mean concavity', 'mean concave points', 'mean symmetry', 'mean fractal dimension', 'radius error', 'texture error', 'perimeter error', 'area error', 'smoothness error', 'compactness error', 'concavity error', 'concave points error', 'symmetry error', 'fractal dimension error', 'worst radius', 'worst texture', 'worst perimeter', 'worst area', 'worst smoothness', 'worst compactness', 'worst concavity', 'worst concave points', 'worst symmetry', 'worst fractal dimension'],
        'estimator': 'make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))',
        'cv': 'StratifiedKFold(n_splits=10, shuffle=True, random_state=0)',
        'predictions': '838000805f27a7a5391d9cf6ff13949b7ffef2ccf62bb2115a19df365efa2007eb69fff6bfff75e3d5dfc7ff227df767efefb7ffa5f6b5fe7effdfd6f95f6a77ff4ffffff81',
    },
    'three-features': {
        'features': ['worst area', 'worst smoothness', 'mean texture'],
        'estimator': 'make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))',
        'cv': 'StratifiedKFold(n_splits=10, shuffle=True, random_state=0)',
        'predictions': '838000905f27a7ad391d9cf6ff13949b7ffef2ccf62bb2115a19df365efa2007eb69fffebfff75e3d5dfc7ff227df767efefb7ffa5f6b5fe7effdfd6f95f6a77ff4f7ffff81',
    },
}
