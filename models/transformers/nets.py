"""Plain-torch text transformers for models/transformers/export.py.

A BERT-style encoder (post-LayerNorm blocks, additive padding mask) and a
GPT-2-style decoder (pre-LayerNorm blocks, causal mask). Written from the
architecture descriptions with nothing but Linear, LayerNorm, GELU, Embedding
and a softmax attention, so that the exported ONNX graph shows the plain
operator pattern every exporter writes for these blocks (MatMul by a 2-D
weight, Q.K^T, scale, mask, Softmax, P.V) and no fused or custom operator.
"""
import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    """Multi-head scaled dot-product self-attention.

    mask_bias is added to the scores (0 where a key may be seen, a large
    negative number where not); causal additionally replaces the scores of
    later keys by the lowest float (masked_fill, exported as Where), the way
    GPT-2 implementations write it."""

    def __init__(self, d_model, heads, causal=False, max_len=0):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.causal = causal
        if causal:
            hide = torch.ones(max_len, max_len, dtype=torch.bool).triu(1)
            self.register_buffer("hide", hide.view(1, 1, max_len, max_len))

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask_bias=None):
        b, n, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (
            1.0 / math.sqrt(self.head_dim))
        if mask_bias is not None:
            scores = scores + mask_bias
        if self.causal:
            scores = scores.masked_fill(self.hide[:, :, :n, :n],
                                        torch.finfo(scores.dtype).min)
        p = torch.softmax(scores, dim=-1)
        out = torch.matmul(p, v).transpose(1, 2).reshape(b, n, d)
        return self.proj(out)


class FeedForward(nn.Sequential):
    def __init__(self, d_model, d_ff, approximate):
        super().__init__(nn.Linear(d_model, d_ff),
                         nn.GELU(approximate=approximate),
                         nn.Linear(d_ff, d_model))


class EncoderBlock(nn.Module):
    """BERT's block: LayerNorm after each residual sum, exact (erf) GELU."""

    def __init__(self, d_model, heads, d_ff):
        super().__init__()
        self.attn = SelfAttention(d_model, heads)
        self.norm1 = nn.LayerNorm(d_model, eps=1e-12)
        self.ffn = FeedForward(d_model, d_ff, "none")
        self.norm2 = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, x, mask_bias):
        x = self.norm1(x + self.attn(x, mask_bias))
        return self.norm2(x + self.ffn(x))


class BertEncoder(nn.Module):
    """Token + position embeddings, LayerNorm, `layers` encoder blocks.

    forward(input_ids int64 [B, T], attention_mask int64 [B, T], 1 = token,
    0 = padding) -> last hidden state float32 [B, T, d_model]."""

    def __init__(self, vocab, max_len, d_model, heads, d_ff, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.norm = nn.LayerNorm(d_model, eps=1e-12)
        self.blocks = nn.ModuleList(
            EncoderBlock(d_model, heads, d_ff) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        n = input_ids.shape[1]
        pos = torch.arange(n, dtype=torch.int64).unsqueeze(0)
        x = self.norm(self.tok(input_ids) + self.pos(pos))
        # [B, 1, 1, T]: 0 for tokens, -10000 for padding keys (BERT's value).
        keep = attention_mask[:, None, None, :].to(x.dtype)
        mask_bias = (1.0 - keep) * -10000.0
        for block in self.blocks:
            x = block(x, mask_bias)
        return x


class DecoderBlock(nn.Module):
    """GPT-2's block: LayerNorm before each sublayer, tanh-form GELU."""

    def __init__(self, d_model, heads, d_ff, max_len):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, heads, causal=True,
                                  max_len=max_len)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, "tanh")

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class GptDecoder(nn.Module):
    """Token + position embeddings, `layers` causal blocks, final LayerNorm.

    forward(input_ids int64 [B, T]) -> hidden state float32 [B, T, d_model]
    (no language-model head: the benchmark measures the decoder stack)."""

    def __init__(self, vocab, max_len, d_model, heads, d_ff, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(
            DecoderBlock(d_model, heads, d_ff, max_len)
            for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, input_ids):
        n = input_ids.shape[1]
        pos = torch.arange(n, dtype=torch.int64).unsqueeze(0)
        x = self.tok(input_ids) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)
