"""The observer's stand-ins for Hugging Face transformers, accelerate and datasets, tqdm and matplotlib.pyplot
(runtime_shim/torch_observer/stand_ins.py): found only where nothing else finds the library, and doing with
devices what the library does (placing the model and the batches, yielding the batches, converting plotted
data with numpy.asarray)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from runtime_shim.torch_observer import stand_ins


def test_the_finder_answers_for_the_stood_in_libraries_only() -> None:
    finder = stand_ins.StandInFinder()
    spec = finder.find_spec("transformers")
    assert spec is not None and Path(str(spec.origin)).name == "stand_in_transformers.py"
    assert Path(str(finder.find_spec("accelerate").origin)).name == "stand_in_accelerate.py"  # type: ignore[union-attr]
    assert finder.find_spec("numpy") is None and finder.find_spec("transformers.trainer") is None
    assert Path(str(finder.find_spec("tqdm.auto").origin)).name == "stand_in_tqdm.py"  # type: ignore[union-attr]
    assert Path(str(finder.find_spec("matplotlib.pyplot").origin)).name == "stand_in_pyplot.py"  # type: ignore[union-attr]
    assert finder.find_spec("matplotlib.axes") is None and finder.find_spec("tqdm.contrib") is None
    assert Path(str(finder.find_spec("datasets").origin)).name == "stand_in_datasets.py"  # type: ignore[union-attr]


def test_install_puts_the_finder_last_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    stand_ins.install()
    stand_ins.install()
    assert isinstance(sys.meta_path[-1], stand_ins.StandInFinder)
    assert sum(isinstance(f, stand_ins.StandInFinder) for f in sys.meta_path) == 1


def _load(name: str) -> ModuleType:
    spec = stand_ins.StandInFinder().find_spec(name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRAINER = """
import importlib.util, torch
from runtime_shim.torch_observer import stand_ins
spec = stand_ins.StandInFinder().find_spec("transformers")
transformers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(transformers)
seen = []

class Recording(transformers.Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        seen.append(str(inputs["x"].device))
        loss = model(inputs["x"]).sum()
        return (loss, {"logits": loss}) if return_outputs else loss

args = transformers.TrainingArguments("out", use_cpu=True, per_device_train_batch_size=2)
Recording(model=torch.nn.Linear(2, 1), args=args, train_dataset=[{"x": torch.ones(2)}] * 4).train()
print(args.device, seen)
"""


def test_the_trainer_moves_the_model_and_each_batch_to_args_device(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    # in a process of its own: training builds an optimizer, whose first step imports torch._dynamo, which the
    # state other tests leave in this process (fake modes, patched ops) can break
    done = subprocess.run([sys.executable, "-c", TRAINER], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "cpu ['cpu', 'cpu']"


def test_the_accelerator_prepares_modules_and_loaders() -> None:
    torch = pytest.importorskip("torch")
    accelerate = _load("accelerate")
    accelerator = accelerate.Accelerator(cpu=True)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(4, 2)), batch_size=2)
    model, optimizer, prepared = accelerator.prepare(torch.nn.Linear(2, 1), "optimizer", loader)
    assert optimizer == "optimizer" and len(prepared) == 2
    assert [batch[0].device.type for batch in prepared] == ["cpu", "cpu"]
    assert accelerator.prepare(model) is model
    with pytest.raises(ValueError, match="should be a list with 2 elements"):
        accelerator.prepare(model, loader, device_placement=[True])


def test_the_transformers_stand_in_places_models_as_from_pretrained_does() -> None:
    torch = pytest.importorskip("torch")
    transformers = _load("transformers")
    models = sys.modules["transformers.stand_in_hf_models"]
    assert models._device(None) is None
    assert models._device("cuda") == torch.device("cuda:0")
    assert models._device("cuda:1") == models._device(1) == models._device({"": 1}) == torch.device("cuda:1")
    assert models._device("auto") == torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="negative int"):
        models._device(-1)
    model = transformers.BertForSequenceClassification.from_pretrained("m", device_map="meta", num_labels=3)
    assert model.device == torch.device("meta") and not model.training
    assert transformers.AutoModelForCausalLM.from_pretrained("m").device == torch.device("cpu")
    assert transformers.DataCollatorWithPadding is models.DataCollatorWithPadding
    with pytest.raises(AttributeError, match="has no attribute 'not_a_name'"):
        transformers.not_a_name  # noqa: B018


def test_the_transformers_stand_in_tokenizes_on_the_default_device_and_moves_encodings_in_place() -> None:
    torch = pytest.importorskip("torch")
    transformers = _load("transformers")
    tok = transformers.AutoTokenizer.from_pretrained("m")
    enc = tok(["a b c", "d"], padding=True, return_tensors="pt")
    assert enc["input_ids"].dtype == torch.int64 and enc.input_ids.device.type == "cpu"
    assert enc["attention_mask"].tolist()[1] == [1, 1, 0, 0]
    assert isinstance(tok("a b")["input_ids"], list) and tok.encode("a", return_tensors="pt").shape == (1, 2)
    assert enc.to("meta") is enc and enc["attention_mask"].device.type == "meta"
    chat = tok.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True,
                                   return_tensors="pt")
    assert set(chat) == {"input_ids", "attention_mask"}
    model = transformers.AutoModelForCausalLM.from_pretrained("m")
    prompt = tok("a b", return_tensors="pt")
    out = model.generate(**prompt, max_new_tokens=3)
    assert out.shape == (1, 6) and out.device.type == "cpu"
    assert model(**prompt, labels=prompt["input_ids"]).loss.dim() == 0
    features = [{"input_ids": [1, 5], "label": 1}, {"input_ids": [1], "label": 0}]
    batch = transformers.DataCollatorWithPadding(tok)(features)
    assert batch["labels"].tolist() == [1, 0] and batch["input_ids"].shape == (2, 2)
    classify = transformers.pipeline("text-classification", model="m", device="cpu")
    assert classify("a b")["label"].startswith("LABEL_")


def test_a_bar_yields_what_it_wraps_and_formats_its_postfix() -> None:
    tqdm = _load("tqdm")
    with tqdm.tqdm([1, 2, 3], desc="train") as bar:
        seen = list(bar)
        bar.set_postfix(loss=0.5, note="x")
    assert seen == [1, 2, 3] and bar.n == 3 and bar.postfix == "loss=0.5, note=x" and len(bar) == 3
    assert list(tqdm.trange(2)) == [0, 1]
    with pytest.raises(TypeError):
        list(tqdm.tqdm(total=3))  # a bar made without an iterable cannot be iterated


def test_plotting_converts_the_data_with_numpy_asarray() -> None:
    pyplot = _load("matplotlib.pyplot")

    class Refused:
        def __array__(self, dtype: object = None, copy: object = None) -> object:
            raise TypeError("refused")

    fig, axes = pyplot.subplots(2, 2)
    assert axes.shape == (2, 2) and pyplot.subplots(1, 3)[1].shape == (3,)
    assert isinstance(pyplot.subplots()[1], pyplot.Axes) and pyplot.subplots(squeeze=False)[1].shape == (1, 1)
    axes[0, 1].plot([1.0, 2.0], "r-")
    axes[0, 1].set_title("fine")
    with pytest.raises(TypeError, match="refused"):
        axes[1, 0].scatter([1.0], Refused())
    with pytest.raises(TypeError, match="refused"):
        pyplot.imshow(Refused())
    with pytest.raises(TypeError, match="refused"):
        fig.add_subplot(1, 1, 1).bar([1.0], height=Refused())


def test_the_datasets_stand_in_gives_cpu_tensors_once_formatted_for_torch() -> None:
    torch = pytest.importorskip("torch")
    datasets = _load("datasets")
    ds = datasets.Dataset.from_dict({"text": ["a b", "c"], "ids": [[1, 2], [3, 4]], "label": [0, 1]})
    assert ds[0] == {"text": "a b", "ids": [1, 2], "label": 0}  # Python rows until formatted
    ds = ds.map(lambda row: {"score": float(row["label"])})
    formatted = ds.with_format("torch", columns=["ids", "label", "score"])
    assert ds[0]["label"] == 0 and set(formatted[0]) == {"ids", "label", "score"}
    row = formatted[1]
    assert row["ids"].device.type == "cpu" and row["ids"].dtype == torch.int64 and row["label"].dim() == 0
    assert formatted["ids"].shape == (2, 2) and formatted[0:2]["score"].dtype == torch.float32
    splits = datasets.load_dataset("imdb")
    splits.set_format("torch", columns=["label"])
    batch = next(iter(torch.utils.data.DataLoader(splits["train"], batch_size=4)))
    assert batch["label"].shape == (4,) and batch["label"].device.type == "cpu"
    assert len(datasets.load_dataset("imdb", split="test[:50%]")) == 16
