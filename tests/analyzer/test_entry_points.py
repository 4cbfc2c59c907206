"""Functions a framework calls are analysed as it calls them (analyzer/models/entry_points.py): command
lines with their options' defaults, Lightning hooks with the module and batches on the Trainer's device,
pytest tests with their fixtures, process targets with the arguments they are spawned with. The
frameworks other than pytest are not installed here: these programs are analysed, not run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from devicelint.runner import check, check_source
from devicelint.settings import Settings


def findings(source: str, filename: str = "prog.py") -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), filename, Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


def messages(source: str, filename: str = "prog.py") -> list[str]:
    report = check_source(textwrap.dedent(source), filename, Settings(select=("MV2",)))
    return [d.message for d in report.diagnostics]


TRAIN = """\
    def train(device="cuda", epochs=2):
        model = nn.Linear(4, 2).to(device)
        x = torch.randn(8, 4)
        return model(x)
"""

TRAIN_OK = """\
    def train(device="cuda", epochs=2):
        model = nn.Linear(4, 2).to(device)
        x = torch.randn(8, 4, device=device)
        return model(x)
"""


def _fire(call: str, body: str = TRAIN) -> str:
    return "import fire\nimport torch\nfrom torch import nn\n\n\n" + textwrap.dedent(body) + f"\n\n{call}\n"


def test_fire_function_is_called_with_its_defaults() -> None:
    source = _fire('if __name__ == "__main__":\n    fire.Fire(train)')
    assert findings(source) == [(9, "MV202", "warning")]
    assert "in `train` (called by fire.Fire) when the command line gives no options" in messages(source)[0]


def test_fire_dict_and_bare_fire() -> None:
    assert findings(_fire('fire.Fire({"train": train})')) == [(9, "MV202", "warning")]
    assert findings(_fire("fire.Fire()")) == [(9, "MV202", "warning")]


def test_fire_correct_program_is_silent() -> None:
    assert findings(_fire("fire.Fire(train)", TRAIN_OK)) == []


def test_fire_class_methods_get_their_defaults() -> None:
    source = """\
        import fire
        import torch
        from torch import nn


        class Cli:
            def train(self, device="cuda"):
                model = nn.Linear(4, 2).to(device)
                return model(torch.randn(8, 4))


        fire.Fire(Cli)
    """
    assert findings(source) == [(9, "MV202", "warning")]


def test_without_the_framework_an_uncalled_function_stays_unknown() -> None:
    assert findings(_fire("print(train)").replace("import fire\n", "")) == []


def test_click_options_give_their_defaults() -> None:
    source = """\
        import click
        import torch
        from torch import nn


        @click.command()
        @click.option("--device", default="cuda", help="where to train")
        @click.option("--epochs", type=int, default=2)
        @click.option("--half", is_flag=True)
        def main(device, epochs, half):
            model = nn.Linear(4, 2).to(device)
            x = torch.randn(8, 4)
            return model(x)


        if __name__ == "__main__":
            main()
    """
    assert findings(source) == [(13, "MV202", "warning")]
    fixed = source.replace("torch.randn(8, 4)", "torch.randn(8, 4, device=device)")
    assert findings(fixed) == []


def test_click_default_naming_a_module_constant() -> None:
    source = """\
        import click
        import torch

        DEFAULT_DEVICE = "cuda"


        @click.command()
        @click.option("--device", default=DEFAULT_DEVICE)
        @click.option("--size", default=3, type=int)
        def main(device, size):
            return torch.ones(size, device=device) + torch.zeros(size)


        if __name__ == "__main__":
            main()
    """
    assert findings(source) == [(11, "MV201", "warning")]


def test_click_group_commands() -> None:
    source = """\
        import click
        import torch


        @click.group()
        def cli():
            pass


        @cli.command()
        @click.option("--dev", "device", default="cuda")
        def evaluate(device):
            scores = torch.ones(3, device=device)
            return scores + torch.zeros(3)
    """
    assert findings(source) == [(14, "MV201", "warning")]


def test_typer_commands_and_run() -> None:
    source = """\
        import torch
        import typer

        app = typer.Typer()


        @app.command()
        def train(device: str = typer.Option("cuda", help="device")):
            weights = torch.ones(3, device=device)
            return weights * torch.arange(3)


        def predict(device: str = "cuda"):
            return torch.ones(3, device=device) - torch.zeros(3)


        if __name__ == "__main__":
            typer.run(predict)
    """
    assert findings(source) == [(10, "MV201", "warning"), (14, "MV201", "warning")]


def test_hydra_main_gets_an_unknown_config() -> None:
    source = """\
        import hydra
        import torch


        @hydra.main(config_path="conf", config_name="config", version_base=None)
        def main(cfg):
            model = torch.nn.Linear(4, 2).to(cfg.device)
            return model(torch.randn(8, 4))


        if __name__ == "__main__":
            main()
    """
    assert findings(source) == []


HYDRA_DDP = Path(__file__).parents[1] / "data" / "entry_points" / "hydra_ddp_trainer.py"


def test_hydra_entry_module_moved_in_place_by_its_trainer_is_on_the_gpu() -> None:
    """A model built inside a hydra entry and moved in place by a trainer (``self.model = model.to(rank)``,
    then ``DDP(self.model, device_ids=[rank])``): every parameter is on the GPU when it is wrapped and called.
    The entry runs only through the sweep of uncalled functions, where the model's ``__init__`` comes first:
    it is not run again on the instances (or the moved copy) an earlier pass made."""
    source = HYDRA_DDP.read_text()
    assert findings(source) == []
    unmoved = source.replace("self.model = model.to(self.local_rank)", "self.model = model")
    wrap = next(i for i, line in enumerate(source.splitlines(), 1) if "DDP(self.model" in line)
    assert (wrap, "MV202") in {(row, code) for row, code, _severity in findings(unmoved)}


LIGHTNING = """\
    import pytorch_lightning as pl
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Classifier(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 2)

        def forward(self, x):
            return self.layer(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            noise = torch.randn(4)
            return F.cross_entropy(self(x + noise), y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            mask = torch.ones(4, device=self.device)
            return F.cross_entropy(self(x * mask), y)

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-3)


    if __name__ == "__main__":
        trainer = pl.Trainer(ACCELERATOR max_epochs=1)
        trainer.fit(Classifier())
"""


def test_lightning_hooks_run_on_the_trainers_gpu() -> None:
    assert findings(LIGHTNING.replace("ACCELERATOR", 'accelerator="gpu",')) == [(18, "MV201", "error")]
    assert findings(LIGHTNING.replace("ACCELERATOR", "gpus=1,")) == [(18, "MV201", "error")]


def test_lightning_hooks_on_a_cpu_trainer_are_silent() -> None:
    assert findings(LIGHTNING.replace("ACCELERATOR", 'accelerator="cpu",')) == []


def test_lightning_other_or_several_accelerators_leave_the_device_unknown() -> None:
    assert findings(LIGHTNING.replace("ACCELERATOR", 'accelerator="mps",')) == []
    several = LIGHTNING.replace("ACCELERATOR", 'accelerator="gpu",') + \
        '    pl.Trainer(accelerator="cpu").test(Classifier())\n'
    assert findings(several) == []


def test_lightning_auto_accelerator_fails_where_cuda_is_available() -> None:
    found = findings(LIGHTNING.replace("ACCELERATOR", ""))
    assert found == [(18, "MV201", "warning")]
    message = messages(LIGHTNING.replace("ACCELERATOR", ""))[0]
    assert "fails in `Classifier.training_step` (called by Lightning) when CUDA is available" \
        in message


def test_lightning_from_lightning_pytorch_and_no_instance() -> None:
    source = """\
        import torch
        from lightning.pytorch import LightningModule


        class Regressor(LightningModule):
            def training_step(self, batch, batch_idx):
                inputs, targets = batch["x"], batch["y"]
                bias = torch.zeros(1)
                return ((inputs.sum(1) + bias - targets) ** 2).mean()

            def test_step(self, batch, batch_idx):
                inputs = batch["x"]
                return inputs + torch.zeros(1, device=inputs.device)
    """
    assert findings(source.replace("LightningModule)", "LightningModule)")) == [(9, "MV201", "warning")]


def test_lightning_moves_parameters_and_buffers_not_plain_tensor_attributes() -> None:
    source = """\
import lightning.pytorch as L
import torch
from torch import nn


class Denoiser(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.scale = torch.linspace(0.1, 1.0, 8)
        self.register_buffer("shift", torch.zeros(8))

    def training_step(self, batch, batch_idx):
        clean = batch
        noisy = clean * self.scale
        return ((self.net(noisy + self.shift) - clean) ** 2).mean()


trainer = L.Trainer(accelerator="gpu")
trainer.fit(Denoiser())
"""
    assert findings(source) == [(15, "MV201", "error")]
    assert findings(source.replace("self.scale = torch.linspace(0.1, 1.0, 8)",
                                   'self.register_buffer("scale", torch.linspace(0.1, 1.0, 8))')) == []


def test_pytest_tests_get_their_fixtures(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""\
        import pytest
        import torch


        @pytest.fixture
        def device():
            return torch.device("cuda")


        @pytest.fixture
        def weights(device):
            tensor = torch.ones(3, device=device)
            yield tensor
            del tensor
    """))
    (tmp_path / "test_model.py").write_text(textwrap.dedent("""\
        import torch


        def test_add(device):
            weights = torch.ones(3, device=device)
            assert (weights + torch.ones(3)).sum() == 6


        def test_add_same_device(device):
            weights = torch.ones(3, device=device)
            assert (weights + torch.ones(3, device=device)).sum() == 6


        def test_yielded(weights):
            assert (weights * torch.arange(3)).sum() == 3
    """))
    report = check([str(tmp_path)], Settings(select=("MV2",)))
    assert sorted((Path(d.file).name, d.row, d.code) for d in report.diagnostics) == [
        ("test_model.py", 6, "MV201"), ("test_model.py", 15, "MV201")]


def test_pytest_parametrize_calls_once_per_value() -> None:
    source = """\
        import pytest
        import torch


        @pytest.mark.parametrize("device", ["cpu", "cuda"])
        def test_sum(device):
            values = torch.arange(4, device=device)
            return values + torch.ones(4)


        @pytest.mark.parametrize("device,size", [("cuda", 3), pytest.param("cuda", 4)])
        def test_sizes(device, size):
            return torch.ones(size, device=device) * torch.ones(size)
    """
    assert findings(source, "test_sums.py") == [(8, "MV201", "warning"), (13, "MV201", "error")]


def test_spawn_passes_rank_and_args() -> None:
    source = """\
        import torch
        import torch.multiprocessing as mp
        from torch import nn


        def worker(rank, model, steps):
            inputs = torch.randn(8, 4, device="cuda")
            return model(inputs)


        def worker_moves(rank, model, steps):
            model = model.to(f"cuda:{rank}")
            return model(torch.randn(8, 4, device=f"cuda:{rank}"))


        if __name__ == "__main__":
            net = nn.Linear(4, 2)
            mp.spawn(WORKER, args=(net, 10), nprocs=2)
    """
    assert findings(source.replace("WORKER", "worker")) == [(8, "MV202", "error")]
    assert findings(source.replace("WORKER", "worker_moves")) == []


def test_spawn_calls_each_rank_of_a_small_constant_count() -> None:
    source = """\
import torch
import torch.multiprocessing as mp
from torch import nn


def run(rank, world_size):
    model = nn.Linear(4, 2).to(rank)
    inputs = torch.randn(8, 4, device="cuda")
    return model(inputs)


def run_ok(rank, world_size):
    device = torch.device("cuda", rank)
    model = nn.Linear(4, 2).to(device)
    return model(torch.randn(8, 4, device=device))


if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2, join=True)
    mp.spawn(run_ok, args=(2,), nprocs=2, join=True)
"""
    found = findings(source)
    assert found == [(9, "MV202", "warning")]
    assert "cuda:0 and cuda:1" in messages(source)[0]
    assert findings(source.replace("nprocs=2", "nprocs=1")) == []


def test_process_target_gets_its_args() -> None:
    source = """\
        import torch
        import torch.multiprocessing as mp


        def consume(queue_size, weights):
            return weights + torch.ones(3)


        if __name__ == "__main__":
            process = mp.Process(target=consume, args=(4, torch.ones(3, device="cuda")))
            process.start()
            process.join()
            other = mp.Process(target=consume, args=(4,), kwargs={"weights": torch.ones(3)})
            other.start()
    """
    assert findings(source) == [(6, "MV201", "warning")]


def test_lightning_module_device_and_on_gpu_are_the_trainers() -> None:
    # an agent that moves its state with ``.cuda(device)`` only when the module says it is on a GPU
    source = """\
import pytorch_lightning as pl
import torch
from torch import nn


class Agent(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def act(self, device):
        state = torch.zeros(1, 4)
        if device not in ["cpu"]:
            state = state.cuda(device)
        return self.net(state)

    def training_step(self, batch, batch_idx):
        device = batch[0].device.index if self.on_gpu else "cpu"
        here = torch.ones(2, device=self.device)
        return self.act(device).sum() + here.sum() + batch.sum()


pl.Trainer(ACCELERATOR).fit(Agent())
"""
    assert findings(source.replace("ACCELERATOR", 'accelerator="cpu"')) == []
    assert findings(source.replace("ACCELERATOR", 'accelerator="gpu"')) == []
