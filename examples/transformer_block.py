"""A small pre-norm transformer block, the model compile tests and benchmarks use.

    python examples/transformer_block.py            # one compiled forward+backward on openreg

Dropout is left out, so eager and compiled runs compute the same thing.
"""

import torch
from torch import nn
from torch.nn import functional


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, sequence, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(dim, dim=-1)
        q, k, v = (t.view(batch, sequence, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
        attended = functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(batch, sequence, dim)
        x = x + self.out(attended)
        return x + self.mlp(self.norm2(x))


def build_block(dim: int = 64, heads: int = 4, hidden: int = 256, seed: int = 0) -> nn.Module:
    """The block, initialised from `seed` on the CPU so every device starts equal."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TransformerBlock(dim, heads, hidden)


def make_batch(batch: int = 8, sequence: int = 32, dim: int = 64, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, sequence, dim, generator=torch.Generator().manual_seed(seed))


def forward_backward(block: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    """Forward and backward of a squared-output loss; returns the loss (on the device)."""
    loss = block(batch).pow(2).mean()
    loss.backward()
    return loss.detach()


if __name__ == "__main__":
    block = torch.compile(build_block().to("openreg"))
    print("loss", forward_backward(block, make_batch().to("openreg")).item())
