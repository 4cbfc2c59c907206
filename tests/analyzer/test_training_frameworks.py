"""Frameworks that place the model and the batches themselves: Hugging Face's ``Trainer``
(analyzer/models/hf_trainer.py), ``accelerate`` (analyzer/models/accelerate_model.py) and
``DistributedDataParallel`` (analyzer/models/torch_parallel.py). transformers and accelerate are not
installed here: these programs are analysed, not run (the fixtures run under the observer's stand-ins)."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source
from devicelint.settings import Settings


def findings(source: str, target: str = "auto") -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",), target_device=target))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


def messages(source: str) -> list[str]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return [d.message for d in report.diagnostics]


# --- transformers.Trainer ----------------------------------------------------------------------------------

TRAINER = """\
    import torch
    from torch import nn
    from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


    class WeightedTrainer(Trainer):
        def __init__(self, class_weights, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.class_weights = class_weights

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            logits = outputs.logits
            loss = nn.CrossEntropyLoss(weight=WEIGHTS)(logits, labels)
            return (loss, outputs) if return_outputs else loss


    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    args = TrainingArguments(output_dir="out"ARGS)
    trainer = WeightedTrainer(torch.tensor([1.0, 3.0]), model=model, args=args)
    trainer.train()
"""


def _trainer(weights: str = "self.class_weights", args: str = "") -> str:
    return TRAINER.replace("WEIGHTS", weights).replace("ARGS", args)


def test_trainer_compute_loss_gets_inputs_on_the_trainers_device() -> None:
    assert findings(_trainer()) == [(15, "MV202", "warning")]
    message = messages(_trainer())[0]
    assert "fails in `WeightedTrainer.compute_loss` (called by the Trainer) when CUDA is available" in message
    assert "batch the Trainer moved to cuda:0" in message
    assert findings(_trainer(), target="cuda") == [(15, "MV202", "error")]


def test_trainer_weights_moved_to_the_logits_or_the_args_device_are_silent() -> None:
    assert findings(_trainer("self.class_weights.to(logits.device)")) == []
    assert findings(_trainer("self.class_weights.to(labels.device)")) == []
    assert findings(_trainer("self.class_weights.to(self.args.device)")) == []


def test_trainer_on_the_cpu_is_silent_and_an_unknown_placement_is_unknown() -> None:
    assert findings(_trainer(args=", use_cpu=True")) == []
    assert findings(_trainer(args=", no_cuda=True")) == []
    assert findings(_trainer(args=", use_cpu=cli.cpu")) == []  # not a constant: unknown
    assert findings(_trainer(args=", use_cpu=False")) == [(15, "MV202", "warning")]


def test_trainer_without_its_subclass_or_import_is_not_modelled() -> None:
    plain = _trainer().replace("from transformers import", "from my_lib import")
    assert findings(plain) == []


def test_trainer_through_an_aliased_import() -> None:
    imports = "from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments"
    aliased = _trainer().replace(imports, "import transformers as tf").replace("(Trainer)", "(tf.Trainer)") \
        .replace("AutoModelForSequenceClassification.", "tf.AutoModelForSequenceClassification.") \
        .replace("TrainingArguments(", "tf.TrainingArguments(")
    assert "tf.Trainer" in aliased and "tf.TrainingArguments(" in aliased
    on_cpu = aliased.replace('output_dir="out"', 'output_dir="out", use_cpu=True')
    assert findings(aliased) == [(15, "MV202", "warning")]
    assert findings(on_cpu) == []
    kept = on_cpu.replace("args = tf.TrainingArguments", "Arguments = tf.TrainingArguments\n    args = Arguments")
    assert findings(kept) == []  # the class kept in a variable


def test_trainer_arguments_built_in_a_helper_or_from_options() -> None:
    built = 'args = TrainingArguments(output_dir="out")'
    helper = 'def make_args(cpu):\n        return TrainingArguments("out", use_cpu=cpu)\n    args = make_args(CPU)'
    assert findings(_trainer().replace(built, helper.replace("CPU", "True"))) == []
    assert findings(_trainer().replace(built, helper.replace("CPU", "False"))) == [(15, "MV202", "warning")]
    options = _trainer().replace(built, 'args = TrainingArguments(**{"output_dir": "out", **OPTIONS})')
    assert findings(options) == []  # what the options hold is not known


TRAINER_MODULE = """\
    import torch
    from torch import nn
    import transformers


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(8, 2)

        def forward(self, features, labels=None):
            return {"logits": self.head(features)}


    class MarginTrainer(transformers.Seq2SeqTrainer):
        def training_step(self, model, inputs, num_items_in_batch=None):
            inputs = self._prepare_inputs(inputs)
            outputs = model(inputs["features"])
            margin = torch.ones(2)
            return (outputs["logits"] * MARGIN).sum()

        def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
            logits = self.model(inputs["features"])["logits"]
            return None, logits - torch.zeros(2, device=self.args.device), None


    MarginTrainer(model=Net(), args=transformers.Seq2SeqTrainingArguments("out")).train()
"""


def test_trainer_model_is_the_constructors_moved_and_hooks_of_seq2seq_trainers() -> None:
    assert findings(TRAINER_MODULE.replace("MARGIN", "margin")) == [(20, "MV201", "warning")]
    assert findings(TRAINER_MODULE.replace("MARGIN", "margin.to(self.args.device)")) == []


# --- accelerate ----------------------------------------------------------------------------------------------

ACCELERATE = """\
    import torch
    from accelerate import Accelerator
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset


    def main():
        accelerator = Accelerator(OPTIONS)
        model = nn.Linear(8, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(TensorDataset(torch.randn(32, 8), torch.randint(0, 2, (32,))), batch_size=8)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for x, y in loader:
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y) + logits.mean() * WEIGHT
            accelerator.backward(loss)
            optimizer.step()


    if __name__ == "__main__":
        main()
"""


def _accelerate(options: str = "", weight: str = "0.5") -> str:
    return ACCELERATE.replace("OPTIONS", options).replace("WEIGHT", weight)


def test_accelerate_prepare_places_the_model_and_the_batches() -> None:
    assert findings(_accelerate()) == []  # model and batches together
    # a CUDA scalar with a CPU vector fails (only CPU scalars join other devices)
    assert findings(_accelerate(weight="torch.ones(2)")) == [(15, "MV201", "warning")]
    assert findings(_accelerate(weight="torch.ones(2, device=accelerator.device)")) == []


def test_accelerate_cpu_and_no_placement() -> None:
    assert findings(_accelerate("cpu=True", "torch.ones(2)")) == []
    # nothing placed: the model and the batches stay on the CPU, as the tensors the loop makes
    assert findings(_accelerate("device_placement=False", "torch.ones(2)")) == []
    assert findings(_accelerate("cpu=args.cpu", "torch.ones(2)")) == []  # unknown


def test_accelerate_unprepared_model_meets_prepared_batches() -> None:
    source = _accelerate().replace("model, optimizer, loader = accelerator.prepare(model, optimizer, loader)",
                                   "optimizer, loader = accelerator.prepare(optimizer, loader)")
    assert findings(source) == [(14, "MV202", "warning")]


def test_accelerate_batches_of_a_library_collator_move_in_place_and_are_dicts() -> None:
    source = """\
        import torch
        from accelerate import Accelerator
        from torch.utils.data import DataLoader
        from transformers import DataCollatorWithPadding


        def train(dataset, collator, model):
            accelerator = Accelerator()
            loader = DataLoader(dataset, batch_size=8, collate_fn=collator)
            model, loader = accelerator.prepare(model, loader)
            for batch in loader:
                batch.to(accelerator.device)
                labels = batch.pop("labels")
                counts = torch.zeros(4)
                counts[labels] += 1
                outputs = model(**batch)


        train(None, DataCollatorWithPadding(None), None)
    """
    assert findings(source) == [(15, "MV207", "warning"), (15, "MV207", "warning")]  # the read and the write


def test_accelerate_prepare_with_a_device_placement_list_and_gather() -> None:
    source = _accelerate().replace(
        "model, optimizer, loader = accelerator.prepare(model, optimizer, loader)",
        "model, optimizer, loader = accelerator.prepare(model, optimizer, loader, "
        "device_placement=[False, None, True])")
    assert findings(source) == [(14, "MV202", "warning")]  # the model stayed on the CPU
    gathered = _accelerate(weight="accelerator.gather(torch.ones(2).to(accelerator.device))")
    assert findings(gathered) == []


def test_partial_state_device() -> None:
    source = """\
        import torch
        from accelerate import PartialState

        state = PartialState()
        x = torch.ones(3, device=state.device)
        y = x + torch.ones(3)
    """
    assert findings(source) == [(6, "MV201", "warning")]  # where CUDA is available
    assert findings(source, target="cuda") == [(6, "MV201", "error")]
    assert findings(source.replace("PartialState()", "PartialState(cpu=True)")) == []


# --- DistributedDataParallel ------------------------------------------------------------------------------

DDP = """\
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP


    def worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        model = nn.Linear(4, 2)MOVE
        ddp = DDP(model, device_ids=IDS)
        out = ddp(torch.randn(8, 4))
        return out + torch.ones(2)


    if __name__ == "__main__":
        mp.spawn(worker, args=(NPROCS,), nprocs=NPROCS)
"""


def _ddp(move: str = "", ids: str = "[rank]", nprocs: str = "2") -> str:
    return DDP.replace("MOVE", move).replace("IDS", ids).replace("NPROCS", nprocs)


def test_ddp_of_a_cpu_module_given_device_ids_fails_in_its_constructor() -> None:
    assert findings(_ddp()) == [(11, "MV202", "error")]
    message = messages(_ddp())[0]
    assert message.startswith("DistributedDataParallel device_ids and output_device arguments only work with "
                              "single-device/multiple-device GPU modules or CPU modules, but got device_ids [0], "
                              "output_device None, and module parameters {device(type='cpu')}.")
    assert "move the module to the process's GPU before wrapping it" in message
    # whatever the rank: the module is on the CPU
    assert findings(_ddp(nprocs="int(input())")) == [(11, "MV202", "error")]


def test_ddp_moves_its_inputs_to_device_ids_0() -> None:
    # inputs on the CPU are moved to the rank's GPU: the output is there, the CPU tensor added to it is not
    assert findings(_ddp(move=".to(rank)")) == [(13, "MV201", "error")]
    assert findings(_ddp(move=".to(rank)").replace("torch.ones(2)", "torch.ones(2, device=rank)")) == []


def test_ddp_without_device_ids_leaves_the_inputs_where_they_are() -> None:
    assert findings(_ddp(ids="None")) == []  # a CPU module with CPU inputs (gloo)
    assert findings(_ddp(move=".to(rank)", ids="None"))[0] == (12, "MV202", "error")


def test_ddp_of_an_unknown_rank_is_silent_where_the_module_was_moved() -> None:
    assert findings(_ddp(move=".to(rank)", nprocs="int(input())")) == []


def test_ddp_module_on_another_gpu_than_device_ids_fails_in_its_layers() -> None:
    source = """\
        import torch
        import torch.multiprocessing as mp
        from torch import nn
        from torch.nn.parallel import DistributedDataParallel as DDP


        def worker(local_rank, node_rank):
            rank = node_rank * 2 + local_rank
            model = nn.Linear(4, 2).to(rank)  # the global rank: another GPU than the process's on node 1
            ddp = DDP(model, device_ids=[local_rank])
            return ddp(torch.randn(8, 4))


        if __name__ == "__main__":
            mp.spawn(worker, args=(1,), nprocs=2)
    """
    assert findings(source) == [(11, "MV202", "error")]
    assert "input: cuda:0 tensor (moved by DistributedDataParallel" in messages(source)[0]
    assert findings(source.replace("args=(1,)", "args=(0,)")) == []
