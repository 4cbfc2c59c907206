"""Libraries that convert their arguments to numpy arrays: metrics, estimators, plots, data frames.

``sklearn.metrics.accuracy_score(labels, preds)``, ``TSNE().fit_transform(features)``, ``plt.plot(losses)`` and
``pd.DataFrame(t)`` read their array arguments with ``numpy.asarray``, which converts a tensor through
``Tensor.__array__`` (``.numpy()``): a CUDA tensor raises "can't convert cuda:0 device type tensor to numpy", a
tensor that requires grad "Can't call numpy() on Tensor that requires grad", and a list of such tensors fails
on its first element. These are among the
most reported PyTorch mistakes (metrics computed on GPU predictions, loss curves plotted from a list of
``loss`` tensors). The model declares which callables convert which arguments; the torch model judges each
conversion as it judges ``numpy.asarray(t)`` (MV203, MV204).

scikit-learn's estimators (the scalers, PCA, t-SNE, k-means, linear models ... below) read the ``X`` of
``fit``, ``transform``, ``fit_transform``, ``predict`` and the like through ``validate_data`` ->
``check_array`` -> ``_asarray_with_order`` -> ``numpy.asarray``; ``fit`` returns the estimator. Only ``X`` is
declared (what ``y`` goes through depends on the estimator). ``train_test_split`` converts nothing (it indexes
what it is given: tensors stay tensors), and neither do TensorBoard's ``SummaryWriter.add_*`` and
torchvision's ``save_image``, which copy to the CPU themselves.

The libraries are not analysed: this model gives their imports :class:`.library_refs.LibraryRef` values, so
``import matplotlib.pyplot as plt``, ``from sklearn.metrics import f1_score``, ``from sklearn import metrics``, a
name re-exported by a project module or kept in a variable all name the same function. Only calls of the
names below are followed (the figures and axes of ``matplotlib``: :mod:`.plots`); anything else these
libraries return is unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..domain import TOP, Atom, BoundShim, V, Value
from ..engine.flow_state import Frame, State
from .base import UNHANDLED, LibraryModel, Unhandled
from .library_refs import LibraryRef, library_ref

#: sklearn.metrics functions: every array argument (positional, and the keywords below) goes through
#: ``check_array``/``column_or_1d`` (``numpy.asarray``)
_SKLEARN_METRICS = frozenset({
    "accuracy_score", "auc", "average_precision_score", "balanced_accuracy_score", "classification_report",
    "cohen_kappa_score", "confusion_matrix", "explained_variance_score", "f1_score", "fbeta_score",
    "hamming_loss", "jaccard_score", "log_loss", "matthews_corrcoef", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_log_error", "median_absolute_error",
    "precision_recall_curve", "precision_recall_fscore_support", "precision_score", "r2_score", "recall_score",
    "roc_auc_score", "roc_curve", "top_k_accuracy_score", "adjusted_rand_score", "normalized_mutual_info_score",
    "adjusted_mutual_info_score", "silhouette_score", "pairwise_distances", "brier_score_loss", "zero_one_loss",
    "multilabel_confusion_matrix", "ndcg_score", "dcg_score", "det_curve", "hinge_loss", "d2_absolute_error_score",
})
_SKLEARN_KEYWORDS = frozenset({"y_true", "y_pred", "y_score", "y_prob", "y_proba", "probas_pred", "sample_weight",
                               "labels_true", "labels_pred", "X", "Y", "x", "y", "pred_decision"})
#: matplotlib.pyplot plotting functions: their data arguments go through ``numpy.asarray``
_PYPLOT = frozenset({
    "plot", "scatter", "imshow", "hist", "hist2d", "bar", "barh", "fill_between", "errorbar", "step", "semilogx",
    "semilogy", "loglog", "stem", "matshow", "contour", "contourf", "pcolormesh", "pcolor", "boxplot",
    "violinplot", "stackplot", "hexbin", "quiver", "stairs", "ecdf",
})
_PYPLOT_KEYWORDS = frozenset({"x", "y", "X", "Y", "Z", "c", "s", "height", "width", "y1", "y2", "xerr", "yerr",
                              "weights", "values", "edges"})
#: pandas constructors: their ``data``
_PANDAS = frozenset({"DataFrame", "Series"})
_PANDAS_KEYWORDS = frozenset({"data"})
#: scipy.stats tests of two samples
_SCIPY_STATS = frozenset({"pearsonr", "spearmanr", "kendalltau", "ttest_ind", "ttest_rel", "wilcoxon",
                          "mannwhitneyu", "ks_2samp", "entropy", "describe", "zscore"})
_SCIPY_KEYWORDS = frozenset({"x", "y", "a", "b", "pk", "qk"})
#: seaborn's axes- and figure-level plots: the vectors given as ``x=``, ``y=``, ``hue=`` ... go into
#: ``pd.DataFrame(plot_data)`` (``VectorPlotter`` / ``PlotData._assign_variables``); their positional ``data``
#: (a frame, or wide-form data) is not declared
_SEABORN = frozenset({"lineplot", "scatterplot", "histplot", "kdeplot", "ecdfplot", "rugplot", "barplot",
                      "boxplot", "violinplot", "boxenplot", "stripplot", "swarmplot", "pointplot", "countplot",
                      "regplot", "residplot", "displot", "relplot", "catplot", "jointplot"})
_SEABORN_KEYWORDS = frozenset({"x", "y", "hue", "size", "style", "weights", "units"})
#: modules whose callables convert only the keywords declared, not their positional arguments
KEYWORDS_ONLY = frozenset({"seaborn"})

#: module path -> (the callables there that convert, the keywords they convert besides positional arguments)
CONSUMERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "sklearn.metrics": (_SKLEARN_METRICS, _SKLEARN_KEYWORDS),
    "sklearn.metrics.pairwise": (frozenset({"cosine_similarity", "euclidean_distances", "pairwise_distances"}),
                                 _SKLEARN_KEYWORDS),
    "matplotlib.pyplot": (_PYPLOT, _PYPLOT_KEYWORDS),
    "pandas": (_PANDAS, _PANDAS_KEYWORDS),
    "scipy.stats": (_SCIPY_STATS, _SCIPY_KEYWORDS),
    "seaborn": (_SEABORN, _SEABORN_KEYWORDS),
}


#: scikit-learn estimators whose methods below validate ``X`` with ``check_array`` (``numpy.asarray``)
ESTIMATORS: dict[str, frozenset[str]] = {
    "sklearn.preprocessing": frozenset({"StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler",
                                        "Normalizer", "PowerTransformer", "QuantileTransformer",
                                        "PolynomialFeatures", "OneHotEncoder", "OrdinalEncoder"}),
    "sklearn.decomposition": frozenset({"PCA", "IncrementalPCA", "KernelPCA", "TruncatedSVD", "NMF", "FastICA"}),
    "sklearn.manifold": frozenset({"TSNE", "Isomap", "MDS", "SpectralEmbedding", "LocallyLinearEmbedding"}),
    "sklearn.cluster": frozenset({"KMeans", "MiniBatchKMeans", "DBSCAN", "AgglomerativeClustering",
                                  "SpectralClustering", "MeanShift", "Birch"}),
    "sklearn.linear_model": frozenset({"LogisticRegression", "LinearRegression", "Ridge", "Lasso", "ElasticNet",
                                       "SGDClassifier", "SGDRegressor"}),
    "sklearn.svm": frozenset({"SVC", "SVR", "LinearSVC", "LinearSVR"}),
    "sklearn.neighbors": frozenset({"KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors"}),
    "sklearn.ensemble": frozenset({"RandomForestClassifier", "RandomForestRegressor",
                                   "GradientBoostingClassifier", "GradientBoostingRegressor"}),
    "sklearn.mixture": frozenset({"GaussianMixture"}),
}
#: their methods that validate ``X`` (the first argument)
_VALIDATING = frozenset({"fit", "transform", "fit_transform", "predict", "predict_proba", "predict_log_proba",
                         "decision_function", "score", "partial_fit", "fit_predict", "inverse_transform",
                         "kneighbors", "score_samples"})
_FITS = frozenset({"fit", "partial_fit"})  # return the estimator


@dataclass(frozen=True, slots=True)
class EstimatorAtom(Atom):
    """A scikit-learn estimator of class ``path``."""

    path: str


#: the libraries this model (and :mod:`.plots`) names
ROOTS = frozenset({"sklearn", "matplotlib", "pandas", "scipy", "seaborn"})


def converted(model: LibraryModel, api: str, values: list[Value], node: ast.AST | None, st: State,
              fr: Frame) -> Value | None:
    """A call of ``api`` that converts ``values`` with ``numpy.asarray``, judged by the torch model (None: no
    tensor among them)."""
    torch = model.model_named("torch")
    if torch is None or node is None:
        return None
    result = torch.numpy_conversion(api, values, node, st, fr)
    return None if result is None else (result if st.dead else TOP)


class ArrayConsumers(LibraryModel):
    """Calls of library functions that convert tensors with ``numpy.asarray``."""

    name = "array-consumers"

    def import_ref(self, path: str) -> Value | None:
        return library_ref(path, ROOTS)

    def call_value(self, atom: Atom, args: list[Value], kwargs: dict[str, Value], node: ast.AST | None, st: State,
                   fr: Frame, star_unknown: bool) -> Value | Unhandled:
        if not isinstance(atom, LibraryRef):
            return UNHANDLED
        module, _dot, name = atom.path.rpartition(".")
        if name in ESTIMATORS.get(module, ()):
            return V(EstimatorAtom(atom.path))
        declared = CONSUMERS.get(module)
        if declared is None or name not in declared[0]:
            return UNHANDLED
        if star_unknown:
            return TOP
        positional = [] if module in KEYWORDS_ONLY else args
        result = converted(self, atom.path, [*positional, *(v for key, v in kwargs.items() if key in declared[1])],
                           node, st, fr)
        return TOP if result is None else result

    def read_attribute(self, atom: Atom, attr: str, node: ast.expr | None, st: State,
                       fr: Frame) -> Value | None | Unhandled:
        if not isinstance(atom, EstimatorAtom):
            return UNHANDLED
        return V(BoundShim(atom, attr)) if attr in _VALIDATING else None

    def method_call(self, kind: str, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, st: State, fr: Frame) -> Value | Unhandled:
        if kind != "EstimatorAtom":
            return UNHANDLED
        x = args[0] if args else kwargs.get("X")
        classes = sorted(a.path for a in receiver.atoms if isinstance(a, EstimatorAtom))
        result = converted(self, f"{classes[0]}.{name}", [x], node, st, fr) if x is not None and classes else None
        if result is not None and result.is_bottom:
            return result
        return receiver if name in _FITS else TOP
