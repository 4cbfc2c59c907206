"""Hugging Face ``transformers`` models, tokenizers, encodings and outputs used directly
(analyzer/models/hf_models.py). transformers is not installed here: these programs are analysed, not run (the
fixtures ``fixtures/torch/hf_*.py`` run under the observer's stand-in)."""

from __future__ import annotations

import textwrap

import pytest
from devicelint.runner import check_source
from devicelint.settings import Settings

HEAD = """\
import torch
from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer
from devicelint import reveal_device
tok = AutoTokenizer.from_pretrained("m")
"""


def report(source: str) -> tuple[list[tuple[int, str, str]], dict[int, str]]:
    """The findings (row, code, severity) and the reveals by row of ``HEAD`` + ``source`` (rows from 5)."""
    result = check_source(HEAD + textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    findings = sorted((d.row, d.code, d.severity.value) for d in result.diagnostics if d.code)
    reveals = {d.row: d.message.removeprefix("reveal_device: ") for d in result.diagnostics if not d.code}
    return findings, reveals


@pytest.mark.parametrize(("device_map", "shown"), [
    ("", "torch.device('cpu')"),
    (', device_map="cuda"', "torch.device('cuda:0')"),
    (', device_map="cuda:1"', "torch.device('cuda:1')"),
    (", device_map=1", "torch.device('cuda:1')"),
    (', device_map={"": 0}', "torch.device('cuda:0')"),
    (', device_map=torch.device("cpu")', "torch.device('cpu')"),
    (', device_map="cpu", torch_dtype=torch.float16', "torch.device('cpu')"),
    (', device_map="auto"', "Unknown"),
    (', device_map={"embed": 0, "lm_head": 1}', "Unknown"),
    (", device_map=placement", "Unknown"),
    (", load_in_8bit=True", "Unknown"),
    (", quantization_config=placement", "Unknown"),
    (', quantization_config=placement, device_map="cuda:1"', "torch.device('cuda:1')"),
    (", load_in_8bit=False", "torch.device('cpu')"),
])
def test_from_pretrained_places_the_weights_where_the_device_map_says(device_map: str, shown: str) -> None:
    _findings, reveals = report(f"""\
        placement = input()
        model = AutoModelForCausalLM.from_pretrained("m"{device_map})
        reveal_device(model.device)
    """)
    assert reveals[7] == shown


def test_the_default_device_places_weights_and_tokenizer_output() -> None:
    findings, reveals = report("""\
        with torch.device("cuda"):
            model = AutoModel.from_pretrained("m")
            inside = tok("a", return_tensors="pt")
        reveal_device(model.device)
        reveal_device(inside["input_ids"])
        model(**inside)
        model(**tok("a", return_tensors="pt"))
    """)
    assert reveals[8] == "torch.device('cuda:0')" and reveals[9] == "cuda:0 tensor"
    assert findings == [(11, "MV202", "error")]


def test_tokenizer_outputs_are_cpu_tensors_only_with_return_tensors_pt() -> None:
    _findings, reveals = report("""\
        reveal_device(tok("a", return_tensors="pt")["input_ids"])
        reveal_device(tok("a", return_tensors="pt").attention_mask)
        reveal_device(tok("a", return_tensors="np")["input_ids"])
        reveal_device(tok("a")["input_ids"])
        reveal_device(tok.encode("a", return_tensors="pt"))
        reveal_device(tok.encode("a"))
        reveal_device(tok.apply_chat_template([], return_tensors="pt")["input_ids"])
        reveal_device(tok.apply_chat_template([], return_tensors="pt", return_dict=False))
        reveal_device(tok.apply_chat_template([], tokenize=False))
        reveal_device(tok.batch_encode_plus(["a"], return_tensors="pt")["input_ids"])
        reveal_device(tok.pad([{"input_ids": [1]}], return_tensors="pt")["input_ids"])
    """)
    cpu, unknown = "cpu tensor", "Unknown"
    assert [reveals[row] for row in range(5, 16)] == [cpu, cpu, unknown, unknown, cpu, unknown, cpu, cpu, unknown,
                                                      cpu, cpu]


def test_batch_encoding_to_moves_every_tensor_in_place() -> None:
    findings, reveals = report("""\
        model = AutoModelForCausalLM.from_pretrained("m").to("cuda")
        inputs = tok(["a", "b"], return_tensors="pt", padding=True)
        inputs.to(model.device)
        reveal_device(inputs["attention_mask"])
        model(**inputs)
        moved = tok("a", return_tensors="pt").to("cuda:1")
        reveal_device(moved.input_ids)
        pairs = {k: v.to("cuda") for k, v in tok("a", return_tensors="pt").items()}
        model(**pairs)
    """)
    assert reveals[8] == "cuda:0 tensor" and reveals[11] == "cuda:1 tensor"
    assert findings == []


def test_a_model_call_checks_ids_against_the_weights_and_the_mask_against_the_states() -> None:
    findings, _reveals = report("""\
        model = AutoModelForCausalLM.from_pretrained("m", device_map="cuda")
        enc = tok("a", return_tensors="pt")
        model(**enc)
        model(enc["input_ids"])
        model(input_ids=enc["input_ids"].cuda(), attention_mask=enc["attention_mask"])
        model(input_ids=enc["input_ids"].cuda(), attention_mask=enc["attention_mask"].cuda(), labels=enc["input_ids"])
        model.forward(enc.input_ids)
    """)
    # (labels: the causal LM loss moves them to the logits' device; the checkpoint decides for other heads)
    assert findings == [(7, "MV202", "error"), (8, "MV202", "error"), (9, "MV201", "error"), (11, "MV202", "error")]


def test_outputs_are_on_the_models_device() -> None:
    findings, reveals = report("""\
        from transformers import BertForSequenceClassification
        model = BertForSequenceClassification.from_pretrained("m").cuda()
        model.eval()
        enc = tok("a", return_tensors="pt").to("cuda")
        with torch.no_grad():
            out = model(**enc, labels=torch.tensor([1]).cuda())
        reveal_device(out.logits)
        reveal_device(out[0])
        reveal_device(out[1])
        reveal_device(out["logits"])
        base = AutoModel.from_pretrained("m").cuda()(**enc)
        reveal_device(base.last_hidden_state)
        reveal_device(base.pooler_output)
        out.logits.numpy()
        loss, logits = out[:2]
        reveal_device(logits)
    """)
    assert reveals[11] == "cuda:0 tensor" and reveals[12] == "cuda:0 tensor, 0-dim"
    assert reveals[13] == reveals[14] == "cuda:0 tensor"
    assert reveals[16] == reveals[17] == "cuda:0 tensor, requires grad (non-leaf)"  # (outside no_grad)
    assert findings == [(18, "MV203", "error")]
    assert reveals[20] == "cuda:0 tensor | cuda:0 tensor, 0-dim"  # (loss or logits: the bounds are not read)


def test_generate_moves_inputs_itself_and_returns_sequences_on_their_device() -> None:
    findings, reveals = report("""\
        model = AutoModelForCausalLM.from_pretrained("m", device_map=0)
        enc = tok("a", return_tensors="pt")
        out = model.generate(**enc, max_new_tokens=4)
        reveal_device(out)
        reveal_device(model.generate(enc["input_ids"].to(model.device)))
    """)
    assert findings == []
    assert reveals[8] == "cpu tensor" and reveals[9] == "cuda:0 tensor"


def test_a_model_moved_by_the_program_or_unknown_stays_followed_or_silent() -> None:
    findings, _reveals = report("""\
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = AutoModel.from_pretrained("m")
        model.to(device)
        enc = tok("a", return_tensors="pt")
        model(**enc)
        sharded = AutoModel.from_pretrained("m", device_map="auto")
        sharded(**enc).last_hidden_state.numpy()
        unknown = AutoModel.from_pretrained("m", **options)
        unknown(**enc)
    """)
    assert findings == [(9, "MV202", "warning")]


def test_a_project_module_wrapping_a_pretrained_encoder() -> None:
    findings, _reveals = report("""\
        from torch import nn
        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = AutoModel.from_pretrained("m")
                self.head = nn.Linear(768, 2)
            def forward(self, input_ids, attention_mask):
                return self.head(self.encoder(input_ids=input_ids, attention_mask=attention_mask).pooler_output)
        model = Classifier().to("cuda")
        enc = tok("a", return_tensors="pt")
        model(enc["input_ids"], enc["attention_mask"])
        model(enc["input_ids"].cuda(), enc["attention_mask"].cuda())
    """)
    assert findings == [(15, "MV202", "error")]


def test_collators_batch_on_the_cpu_and_pipelines_stay_silent() -> None:
    findings, reveals = report("""\
        from torch.utils.data import DataLoader
        from transformers import DataCollatorWithPadding, pipeline
        model = AutoModel.from_pretrained("m").cuda()
        features = [{"input_ids": [1, 2], "label": 0}]
        for batch in DataLoader(features, batch_size=1, collate_fn=DataCollatorWithPadding(tok)):
            reveal_device(batch["labels"])
            model(**batch)
        pipe = pipeline("text-classification", model="m", device=0)
        pipe(["a"])
    """)
    assert reveals[10] == "cpu tensor"
    assert findings == [(11, "MV202", "error")]


def test_a_script_that_only_imports_transformers_is_analysed() -> None:
    source = textwrap.dedent("""\
        from transformers import AutoModelForCausalLM, AutoTokenizer
        tok = AutoTokenizer.from_pretrained("gpt2")
        model = AutoModelForCausalLM.from_pretrained("gpt2").to("cuda")
        out = model(**tok("hello", return_tensors="pt"))
    """)
    result = check_source(source, "prog.py", Settings(select=("MV2",)))
    assert [(d.row, d.code) for d in result.diagnostics] == [(4, "MV202")]


def test_a_model_given_to_a_trainer_is_moved_where_the_analysis_cannot_follow() -> None:
    findings, _reveals = report("""\
        from transformers import Trainer, TrainingArguments
        model = AutoModelForCausalLM.from_pretrained("m")
        trainer = Trainer(model=model, args=TrainingArguments("out"))
        trainer.train()
        model(**tok("a", return_tensors="pt").to("cuda"))
    """)
    assert findings == []


def test_a_processors_fields_are_the_checkpoints() -> None:
    findings, reveals = report("""\
        from transformers import AutoImageProcessor, AutoModelForImageClassification
        processor = AutoImageProcessor.from_pretrained("vit")
        model = AutoModelForImageClassification.from_pretrained("vit", device_map="cuda")
        inputs = processor(images=[0], return_tensors="pt")
        reveal_device(inputs["pixel_values"])
        model(**inputs)
        model(pixel_values=inputs["pixel_values"])
    """)
    assert reveals[9] == "cpu tensor"
    assert findings == [(11, "MV202", "error")]  # (``**inputs``: keys not known, silent)


def test_labels_meet_the_logits_where_a_head_does_not_move_them() -> None:
    findings, _reveals = report("""\
        from transformers import BertForSequenceClassification, RobertaForSequenceClassification
        bert = BertForSequenceClassification.from_pretrained("b", device_map="cuda")
        roberta = RobertaForSequenceClassification.from_pretrained("r", device_map="cuda")
        enc = tok("a", return_tensors="pt").to("cuda")
        labels = torch.tensor([1])
        bert(**enc, labels=labels)
        roberta(**enc, labels=labels)
        bert(**enc, labels=labels.cuda())
    """)
    assert findings == [(10, "MV201", "error")]
