"""Applies the planted bugs to the fixed twins: all at once (the buggy project) or one at a time."""
import shutil
import sys
from pathlib import Path

BUGS = {
    "textproj": [
        ("a1", "textcls/model.py", "torch.arange(seq_len, device=input_ids.device)", "torch.arange(seq_len)",
         "learned positions from torch.arange without a device"),
        ("a2", "textcls/model.py",
         "torch.ones(bsz, seq_len, dtype=torch.bool, device=input_ids.device)",
         "torch.ones(bsz, seq_len, dtype=torch.bool)",
         "default attention mask built with torch.ones on the CPU inside forward"),
        ("a3", "textcls/engine.py", "torch.softmax(logits.detach().float(), dim=-1).cpu().numpy()",
         "torch.softmax(logits.float(), dim=-1).cpu().numpy()",
         ".numpy() of probabilities that require grad (running accuracy)"),
        ("a4", "textcls/train.py", "nn.CrossEntropyLoss(weight=class_weights.to(device),",
         "nn.CrossEntropyLoss(weight=class_weights,", "class-weighted loss whose weight stays on the CPU"),
        ("a5", "textcls/engine.py", "all_preds.append(logits.argmax(dim=-1).cpu())",
         "all_preds.append(logits.argmax(dim=-1))", "CUDA predictions concatenated then .numpy() for metrics"),
        ("a6", "textcls/train.py", "    best_model.to(device)\n", "",
         "model rebuilt from a map_location='cpu' checkpoint never moved"),
        ("a7", "textcls/model.py",
         '        self.register_buffer("causal_mask", torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), diagonal=1),\n'
         '                             persistent=False)\n',
         '        self.causal_mask = torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), diagonal=1)\n',
         "causal mask a plain attribute (register_buffer forgotten), left on the CPU by .to(device)"),
    ],
    "rlproj": [
        ("b1", "dqn/train.py", "agent.act(to_state(obs, device), epsilon=0.0)",
         "agent.act(torch.as_tensor(obs, dtype=torch.float32), epsilon=0.0)",
         "environment observation never moved to the device (greedy evaluation)"),
        ("b2", "dqn/train.py", "buffer.push(obs, action, reward, next_obs, float(done))",
         "buffer.push(state, action, reward, next_obs, float(done))",
         "CUDA state tensor stored in the replay buffer, then np.stack-ed when sampling"),
        ("b3", "dqn/agent.py", "self.target_net = QNetwork(obs_dim, n_actions).to(device)",
         "self.target_net = QNetwork(obs_dim, n_actions)", "target network filled by load_state_dict but never moved"),
        ("b4", "dqn/returns.py", "torch.as_tensor(discounted_returns(rewards, gamma), device=device)",
         "torch.as_tensor(discounted_returns(rewards, gamma))", "Monte-Carlo returns on the CPU minus CUDA values"),
        ("b5", "dqn/buffer.py", "torch.as_tensor(np.array(actions), dtype=torch.long, device=device)",
         "torch.as_tensor(np.array(actions), dtype=torch.long)", "sampled action indexes on the CPU for gather"),
        ("b6", "dqn/agent.py", "torch.randint(self.n_actions, (1,), generator=self.gen)",
         "torch.randint(self.n_actions, (1,), generator=self.gen, device=self.device)",
         "CPU torch.Generator used for a random action on the CUDA device"),
        ("b7", "dqn/agent.py", '"mean_q": q_values.detach().mean().cpu().numpy()',
         '"mean_q": q_values.mean().cpu().numpy()', ".numpy() of Q-values that require grad (logging)"),
    ],
}


def plant(src: Path, dst: Path, bugs) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("runs", "__pycache__"))
    for bug_id, rel, old, new, _ in bugs:
        path = dst / rel
        text = path.read_text()
        if text.count(old) != 1:
            sys.exit(f"{bug_id}: expected one {old!r} in {rel}, found {text.count(old)}")
        path.write_text(text.replace(old, new))


def main() -> None:
    root = Path(sys.argv[1])
    out = Path(sys.argv[2])
    for project, bugs in BUGS.items():
        plant(root / f"{project}_ok", out / project, bugs)
        for bug in bugs:
            plant(root / f"{project}_ok", out / "single" / project / bug[0], [bug])


if __name__ == "__main__":
    main()
