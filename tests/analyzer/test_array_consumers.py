"""Libraries that read tensors with numpy.asarray (analyzer/models/array_consumers.py): metrics on GPU predictions,
loss curves plotted from a list of loss tensors, data frames of tensors. The libraries are not installed in the
test environment; what they do with their arguments is numpy.asarray's conversion, which the fixtures confirm at
run time (fixtures/torch/epoch_stats_numpy_of_gpu_lists.py, metrics_numpy_cuda.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from devicelint.runner import check, check_source
from devicelint.settings import Settings


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("ALL",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics if d.code)


def test_sklearn_metrics_of_gpu_predictions() -> None:
    assert findings("""
        import torch
        from sklearn.metrics import accuracy_score, f1_score
        from sklearn import metrics

        model = torch.nn.Linear(4, 3).cuda()
        x = torch.randn(16, 4, device="cuda")
        labels = torch.randint(0, 3, (16,))
        preds = model(x).argmax(1)
        print(accuracy_score(labels, preds))
        print(metrics.f1_score(y_true=labels, y_pred=preds, average="macro"))
        print(f1_score(labels.numpy(), preds.cpu().numpy(), average="macro"))
        print(accuracy_score(labels, preds.cpu()))
    """) == [(10, "MV203", "error"), (11, "MV203", "error")]


def test_a_loss_curve_plotted_from_loss_tensors() -> None:
    assert findings("""
        import matplotlib.pyplot as plt
        import torch

        model = torch.nn.Linear(4, 1)
        x = torch.randn(8, 4)
        losses, values = [], []
        for step in range(3):
            loss = model(x).pow(2).mean()
            losses.append(loss)
            values.append(loss.item())
        plt.plot(values)
        plt.plot(losses)
        plt.plot(torch.stack(losses).detach().numpy())
    """) == [(13, "MV204", "warning")]  # (the list may be empty: its length is not followed through the loop)


def test_frames_and_statistics_of_cuda_tensors() -> None:
    assert findings("""
        import pandas as pd
        import scipy.stats
        import torch

        scores = torch.rand(10, device="cuda")
        targets = torch.rand(10, device="cuda")
        frame = pd.DataFrame({"score": scores.cpu().numpy()})
        series = pd.Series(scores)
        print(scipy.stats.pearsonr(scores.cpu(), targets.cpu()))
        print(scipy.stats.spearmanr(scores, targets.cpu()))
    """) == [(9, "MV203", "error"), (11, "MV203", "error")]


def test_names_that_are_not_the_libraries_are_not_followed() -> None:
    # a project function of the same name, a name imported from elsewhere, and a method of a returned object
    assert findings("""
        import matplotlib.pyplot as plt
        import torch
        from mytools.metrics import accuracy_score

        def plot(values):
            return len(values)

        preds = torch.randn(8, device="cuda")
        accuracy_score(preds, preds)
        plot(preds)
        fig, ax = plt.subplots()
        ax.plot(preds.cpu())
    """) == []


def test_unknown_devices_stay_silent() -> None:
    assert findings("""
        import torch
        from sklearn.metrics import accuracy_score

        def evaluate(model, x, labels):
            return accuracy_score(labels, model(x).argmax(1))
    """) == []


def test_every_way_of_naming_a_plotting_function_is_the_same_function(tmp_path: Path) -> None:
    # the import's alias, a name re-exported by a project module, a reference kept in a variable or passed on
    (tmp_path / "plotting.py").write_text("import matplotlib.pyplot as plt\nfrom sklearn.metrics import f1_score\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from plotting import plt, f1_score
        import plotting

        def draw(fn, values):
            fn(values)

        preds = torch.randn(8, device="cuda")
        show = plt.hist
        show(preds)
        draw(plotting.plt.plot, preds)
        score = f1_score
        score(preds, preds)
        plt.savefig("out.png")
        plt.title(preds)
    """))
    report = check([str(tmp_path)], Settings(select=("ALL",)))
    found = sorted((Path(d.file).name, d.row, d.code) for d in report.diagnostics if d.code)
    # (``plt.title`` is no conversion the model declares: unknown, silent)
    assert found == [("train.py", 7, "MV203"), ("train.py", 11, "MV203"), ("train.py", 14, "MV203")]


def test_figures_and_axes_convert_what_they_plot() -> None:
    assert findings("""
        import matplotlib.pyplot as plt
        import torch

        preds = torch.randn(8, device="cuda")
        fig, ax = plt.subplots()
        ax.plot(preds)
        fig, axes = plt.subplots(2, 2)
        axes[0, 1].imshow(preds)
        axes[1].flatten()
        for row in axes:
            row[0].bar([1], preds)
        top, bottom = plt.subplots(2, 1)[1]
        bottom.errorbar(preds.cpu(), preds)
        fig.add_subplot(2, 2, 1).hist(preds.cpu())
        plt.gca().fill_between(range(8), preds.cpu(), preds)
        plt.figure().gca().stairs(preds)
        fig.savefig("x.png")
        ax.set_title(preds)
    """) == [(7, "MV203", "error"), (9, "MV203", "error"), (12, "MV203", "error"), (14, "MV203", "error"),
             (16, "MV203", "error"), (17, "MV203", "error")]


def test_an_axes_grid_of_unknown_shape_stays_quiet_where_an_element_is_not_one_axes() -> None:
    assert findings("""
        import matplotlib.pyplot as plt
        import torch

        def grid(n):
            fig, axes = plt.subplots(n, n)
            values = torch.randn(8, device="cuda")
            axes[0].plot(values)
            return axes

        grid(2)
    """) == []


def test_estimators_validate_what_they_fit_and_transform() -> None:
    assert findings("""
        import torch
        from sklearn.manifold import TSNE
        from sklearn import preprocessing
        from sklearn.decomposition import PCA
        from sklearn.model_selection import train_test_split

        features = torch.randn(100, 16, device="cuda")
        embedded = TSNE(n_components=2).fit_transform(features)
        scaler = preprocessing.StandardScaler().fit(features.cpu())
        scaler.transform(features)
        pca = PCA(2)
        pca.fit(X=features.cpu())
        pca.transform(features.cpu())
        train, test = train_test_split(features, test_size=0.2)
        weights = torch.randn(100, 16, requires_grad=True)
        PCA(2).fit_transform(weights * 2)
        print(pca.explained_variance_ratio_, pca.n_components)
    """) == [(9, "MV203", "error"), (11, "MV203", "error"), (17, "MV204", "error")]


def test_seaborn_vectors_given_by_keyword_are_converted() -> None:
    assert findings("""
        import seaborn as sns
        import torch

        scores = torch.rand(10, device="cuda")
        labels = torch.randint(0, 2, (10,))
        sns.histplot(x=scores)
        sns.scatterplot(x=labels, y=scores.cpu(), hue=labels)
        sns.lineplot(x=range(10), y=scores.cpu())
        sns.kdeplot(data=None, x=scores.cpu())
    """) == [(7, "MV203", "error")]
