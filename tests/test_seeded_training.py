"""A seeded PyTorch script, unchanged, prints PyTorch's numbers on chainrule: a small CNN and an
MLP built after ``torch.manual_seed``, a shuffled DataLoader, ten SGD steps with dropout. The
same text runs as a script on each library (``python -m chainrule.as_torch`` for chainrule)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.randn(64, 1, 8, 8)
labels = torch.randint(0, 4, (64,))
features = torch.rand(64, 12)
targets = torch.randn(64, 1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 8, 3)
        self.drop = nn.Dropout2d(0.25)
        self.fc = nn.Linear(8 * 2 * 2, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = self.drop(F.relu(self.conv2(x)))
        x = F.dropout(x.flatten(1), 0.3, training=self.training)
        return self.fc(x)


cnn = CNN()
mlp = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 16), nn.Tanh(),
                    nn.Dropout(0.1), nn.Linear(16, 1))
print("initial", " ".join(f"{p.flatten()[i].item():.9g}" for p in [*cnn.parameters(),
                                                                     *mlp.parameters()]
                          for i in (0, -1)))
optimizer = torch.optim.SGD([*cnn.parameters(), *mlp.parameters()], lr=0.05, momentum=0.9)
loader = DataLoader(TensorDataset(images, labels, features, targets), batch_size=16,
                    shuffle=True)
step = 0
while step < 10:
    for x, y, f, t in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(cnn(x), y) + F.mse_loss(mlp(f), t)
        loss.backward()
        optimizer.step()
        print("step", step, "order", y.tolist(), "loss", f"{loss.item():.9g}")
        step += 1
        if step == 10:
            break
'''


def run(*command: str) -> list[list[str]]:
    done = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                          timeout=600, check=True)
    return [line.split() for line in done.stdout.splitlines()]


def test_seeded_training_prints_torchs_losses(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    theirs = run(str(script))
    ours = run("-m", "chainrule.as_torch", str(script))
    assert len(ours) == len(theirs) == 11
    initial_ours, initial_theirs = ([float(v) for v in line[1:]] for line in (ours[0], theirs[0]))
    assert initial_ours == initial_theirs  # initial weights, bit for bit (ends of each)
    for mine, want in zip(ours[1:], theirs[1:]):
        assert mine[:-1] == want[:-1]  # the step and the shuffled batch
        assert abs(float(mine[-1]) - float(want[-1])) <= 1e-6 * abs(float(want[-1]))
