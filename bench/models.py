"""Real models for the training-step benchmarks, written here so nothing is downloaded.

Each builder returns, for a device, step(): one training step (zero_grad,
forward, loss, backward, optimizer step) on a fixed batch. Weights and data are
drawn on the CPU from fixed seeds and then moved, so every device trains the
same numbers. With capturable=True the step can be recorded in a graph
(step_bound.py): Adam and AdamW keep their step counts on the device; SGD
always can be.

The sizes follow issue 17: small enough that the per-op cost shows, since a
model dominated by one large matmul measures the CPU's GEMM, not the device.
"""

import torch
from torch import nn
from torch.nn import functional as F


def _seeded(seed):
    return torch.Generator().manual_seed(seed)


class DecoderBlock(nn.Module):
    """A GPT-2 block: pre-LayerNorm causal self-attention and a GELU MLP."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm_attention = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.projection = nn.Linear(width, width)
        self.norm_mlp = nn.LayerNorm(width)
        self.expand = nn.Linear(width, 4 * width)
        self.contract = nn.Linear(4 * width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm_attention(x)).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.projection(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.contract(F.gelu(self.expand(self.norm_mlp(x)), approximate="tanh"))


class Gpt2StyleDecoder(nn.Module):
    """Token and position embeddings, decoder blocks, the output head tied to the token embedding."""

    def __init__(self, vocabulary=4096, width=128, layers=2, heads=4, context=64):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(DecoderBlock(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary, bias=False)
        self.head.weight = self.tokens.weight

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tokens(tokens) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a residual connection."""

    def __init__(self, channels_in, channels_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.shortcut = nn.Identity()
        if stride != 1 or channels_in != channels_out:
            self.shortcut = nn.Sequential(nn.Conv2d(channels_in, channels_out, 1, stride, bias=False),
                                          nn.BatchNorm2d(channels_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


def small_resnet(classes=10):
    """A CIFAR-style ResNet: a stem and three stages of two basic blocks (16, 32, 64 channels)."""
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    channels = 16
    for width, stride in ((16, 1), (32, 2), (64, 2)):
        layers += [BasicBlock(channels, width, stride), BasicBlock(width, width, 1)]
        channels = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes)]
    return nn.Sequential(*layers)


class LstmLanguageModel(nn.Module):
    """Embedding, a two-layer LSTM, a linear read-out: the classic word-level language model."""

    def __init__(self, vocabulary=2000, width=128, hidden=256, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.lstm = nn.LSTM(width, hidden, layers, batch_first=True)
        self.readout = nn.Linear(hidden, vocabulary)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.readout(out)


def _language_model_step(model, optimizer, tokens, clip=None):
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def step():
        optimizer.zero_grad(set_to_none=True)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()

    return step


def gpt2_style(device, capturable=False):
    """2 layers, width 128, 4 heads, sequence 64, batch 8, AdamW."""
    torch.manual_seed(0)
    model = Gpt2StyleDecoder().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=capturable)
    tokens = torch.randint(0, 4096, (8, 65), generator=_seeded(1)).to(device)
    return _language_model_step(model, optimizer, tokens)


def resnet(device, capturable=False):
    """3x32x32 images, batch 32, SGD with momentum."""
    torch.manual_seed(0)
    model = small_resnet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(32, 3, 32, 32, generator=_seeded(1)).to(device)
    labels = torch.randint(0, 10, (32,), generator=_seeded(2)).to(device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()

    return step


def lstm_language_model(device, capturable=False):
    """Sequence 35, batch 20, SGD with gradient clipping."""
    torch.manual_seed(0)
    model = LstmLanguageModel().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    tokens = torch.randint(0, 2000, (20, 36), generator=_seeded(1)).to(device)
    return _language_model_step(model, optimizer, tokens, clip=0.25)


def mlp_adam(device, capturable=False):
    """MLP 32->256->4, batch 256, Adam: the step issue 17 measured CPU work with."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 4)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), capturable=capturable)
    x = torch.randn(256, 32, generator=_seeded(1)).to(device)
    y = torch.randn(256, 4, generator=_seeded(2)).to(device)

    def step():
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()

    return step


MODELS = {
    "small MLP with Adam": mlp_adam,
    "GPT-2-style decoder, 2 layers, d 128, seq 64, batch 8": gpt2_style,
    "small ResNet, 3x32x32, batch 32": resnet,
    "LSTM language model, 2 layers, seq 35, batch 20": lstm_language_model,
}


def model_named(fragment):
    """The first name in MODELS that contains `fragment`, for the tools' --model; a ValueError naming every model
    if none does."""
    for name in MODELS:
        if fragment in name:
            return name
    raise ValueError(f"no model name contains {fragment!r}; the models are: {', '.join(MODELS)}")


# Calls per timing: about 50 ms of CPU work each.
CALLS = {"small MLP with Adam": 100}
DEFAULT_CALLS = 10
