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


class RMSNorm(nn.Module):
    """Root-mean-square norm (LLaMA, T5): x / sqrt(mean(x^2) + eps) * w,
    written out so that the export shows Pow, ReduceMean, Add, Sqrt, Div
    and Mul the way exporters below opset 23 write it. The weight starts
    away from one so that a dropped scale shows in the output."""

    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(d_model) + 0.5)
        self.eps = eps

    def forward(self, x):
        ms = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(ms + self.eps) * self.weight


def rotary_tables(n, head_dim, base=10000.0):
    """cos and sin [n, head_dim] of rotary position embeddings (the
    half-split form: the rotated pairs are (i, i + head_dim / 2))."""
    inv = base ** (-torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.outer(torch.arange(n).float(), inv)
    angles = torch.cat([angles, angles], -1)
    return angles.cos(), angles.sin()


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    swapped = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + swapped * sin


class GroupedQueryAttention(nn.Module):
    """LLaMA's causal attention: rotary embeddings on Q and K, kv_heads <
    heads (each K/V head serves heads / kv_heads query heads, expanded
    with the Unsqueeze-Expand-Reshape pattern exporters write), no bias."""

    def __init__(self, d_model, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = d_model // heads
        kv_dim = kv_heads * self.head_dim
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, kv_dim, bias=False)
        self.v = nn.Linear(d_model, kv_dim, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)

    def heads_of(self, t, count):
        b, n, _ = t.shape
        return t.view(b, n, count, self.head_dim).transpose(1, 2)

    def repeat_kv(self, t):
        b, _, n, hd = t.shape
        rep = self.heads // self.kv_heads
        t = t[:, :, None].expand(b, self.kv_heads, rep, n, hd)
        return t.reshape(b, self.heads, n, hd)

    def forward(self, x, cos, sin, mask_bias):
        b, n, d = x.shape
        q = rotate(self.heads_of(self.q(x), self.heads), cos, sin)
        k = rotate(self.heads_of(self.k(x), self.kv_heads), cos, sin)
        v = self.heads_of(self.v(x), self.kv_heads)
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        p = torch.softmax(scores + mask_bias, dim=-1)
        return self.o((p @ v).transpose(1, 2).reshape(b, n, d))


class LlamaBlock(nn.Module):
    """Pre-RMSNorm attention and SwiGLU feed-forward (silu(x W1) * x W3)
    with residual sums."""

    def __init__(self, d_model, heads, kv_heads, d_ff):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.attn = GroupedQueryAttention(d_model, heads, kv_heads)
        self.norm2 = RMSNorm(d_model)
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x, cos, sin, mask_bias):
        x = x + self.attn(self.norm1(x), cos, sin, mask_bias)
        h = self.norm2(x)
        g = self.gate(h)
        return x + self.down(g * torch.sigmoid(g) * self.up(h))


class LlamaDecoder(nn.Module):
    """LLaMA-style decoder with its language-model head tied to the token
    embedding.

    forward(input_ids int64 [B, T]) -> logits float32 [B, T, vocab]."""

    def __init__(self, vocab, d_model, heads, kv_heads, d_ff, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(
            LlamaBlock(d_model, heads, kv_heads, d_ff)
            for _ in range(layers))
        self.norm = RMSNorm(d_model)
        self.head_dim = d_model // heads

    def forward(self, input_ids):
        n = input_ids.shape[1]
        cos, sin = rotary_tables(n, self.head_dim)
        mask_bias = torch.full((n, n), float("-inf")).triu(1)
        x = self.tok(input_ids)
        for block in self.blocks:
            x = block(x, cos, sin, mask_bias)
        return self.norm(x) @ self.tok.weight.t()


def relative_buckets(n, buckets=32, max_distance=128):
    """T5's bidirectional relative-position buckets [n, n]: half the
    buckets per direction, exact below a quarter of them, logarithmic up
    to max_distance."""
    rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    half = buckets // 2
    exact = half // 2
    dist = rel.abs()
    log_ratio = torch.log(dist.float().clamp(min=1) / exact) / math.log(
        max_distance / exact)
    far = (exact + (log_ratio * (half - exact)).long()).clamp(max=half - 1)
    return (rel > 0).long() * half + torch.where(dist < exact, dist, far)


class T5Block(nn.Module):
    """T5's encoder block: RMS norms, unscaled scores plus a shared
    position bias, ReLU feed-forward without biases."""

    def __init__(self, d_model, heads, d_ff):
        super().__init__()
        self.heads, self.head_dim = heads, d_model // heads
        self.norm1 = RMSNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)
        self.norm2 = RMSNorm(d_model)
        self.wi = nn.Linear(d_model, d_ff, bias=False)
        self.wo = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x, bias):
        b, n, d = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        p = torch.softmax(q @ k.transpose(-1, -2) + bias, dim=-1)
        x = x + self.o((p @ v).transpose(1, 2).reshape(b, n, d))
        return x + self.wo(torch.relu(self.wi(self.norm2(x))))


class T5Encoder(nn.Module):
    """T5-style encoder: relative-position bias [1, heads, T, T] from a
    learned bucket table plus the padding mask, computed once and added in
    every block.

    forward(input_ids, attention_mask int64 [B, T]) -> [B, T, d_model]."""

    def __init__(self, vocab, d_model, heads, d_ff, layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.rel = nn.Embedding(32, heads)
        self.blocks = nn.ModuleList(
            T5Block(d_model, heads, d_ff) for _ in range(layers))
        self.norm = RMSNorm(d_model)

    def forward(self, input_ids, attention_mask):
        n = input_ids.shape[1]
        bias = self.rel(relative_buckets(n)).permute(2, 0, 1)[None]
        pad = 1.0 - attention_mask[:, None, None, :].float()
        bias = bias + pad * -1e9
        x = self.tok(input_ids)
        for block in self.blocks:
            x = block(x, bias)
        return self.norm(x)


def gelu(x):
    return nn.functional.gelu(x)


class WhisperEncoder(nn.Module):
    """Whisper-style audio encoder: two 1-D convolutions (the second with
    stride 2) with GELU over a log-mel spectrogram, sinusoidal positions,
    pre-LayerNorm encoder layers (torch's own TransformerEncoderLayer).

    forward(mel float32 [B, mels, frames]) -> [B, frames / 2, d_model]."""

    def __init__(self, mels, frames, d_model, heads, layers):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, d_model, 3, padding=1)
        self.conv2 = nn.Conv1d(d_model, d_model, 3, stride=2, padding=1)
        steps = torch.arange(frames // 2).float()[:, None]
        inv = torch.exp(-math.log(10000.0) / (d_model // 2 - 1) *
                        torch.arange(d_model // 2).float())
        self.register_buffer("pos", torch.cat(
            [(steps * inv).sin(), (steps * inv).cos()], 1))
        # A function of our own (not "gelu" or F.gelu itself) keeps torch
        # off the fused encoder fast path, which has no ONNX export.
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, 0.0,
                                       gelu, batch_first=True,
                                       norm_first=True)
            for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)

    def forward(self, mel):
        x = nn.functional.gelu(self.conv1(mel))
        x = nn.functional.gelu(self.conv2(x)).permute(0, 2, 1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)
