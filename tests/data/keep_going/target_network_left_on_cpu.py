"""Double DQN: the online network is moved to the GPU, the target network is filled with `load_state_dict` but
never moved. Its first layer refuses the GPU batch; what it returns is unknown, so its Q-values meeting the GPU
actions (`gather`) and the TD target are not more findings of the same cause."""
import copy

import torch
import torch.nn.functional as F
from torch import nn


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.value = nn.Linear(hidden, 1)
        self.advantage = nn.Linear(hidden, n_actions)

    def forward(self, obs):
        h = self.trunk(obs)
        advantage = self.advantage(h)
        return self.value(h) + advantage - advantage.mean(dim=-1, keepdim=True)


class Agent:
    def __init__(self, obs_dim, n_actions, device, gamma=0.99):
        self.gamma = gamma
        self.q_net = QNetwork(obs_dim, n_actions).to(device)
        self.target_net = QNetwork(obs_dim, n_actions)
        self.target_net.load_state_dict(copy.deepcopy(self.q_net.state_dict()))
        self.optimizer = torch.optim.Adam(self.q_net.parameters(), lr=1e-3)

    def update(self, obs, actions, rewards, next_obs, dones):
        q_taken = self.q_net(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_actions = self.q_net(next_obs).argmax(dim=1, keepdim=True)
            next_q = self.target_net(next_obs).gather(1, next_actions).squeeze(1)
            target = rewards + self.gamma * (1.0 - dones) * next_q
        loss = F.smooth_l1_loss(q_taken, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    agent = Agent(4, 2, device)
    obs = torch.randn(8, 4, device=device)
    actions = torch.randint(0, 2, (8,), device=device)
    rewards = torch.randn(8, device=device)
    next_obs = torch.randn(8, 4, device=device)
    dones = torch.zeros(8, device=device)
    print(agent.update(obs, actions, rewards, next_obs, dones))


if __name__ == "__main__":
    main()
