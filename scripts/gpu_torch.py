#!/usr/bin/env python3
"""gpu-test.sh, latency package: PyTorch baselines for one case, printed as
one tab-separated line "eager<TAB>torch.compile<TAB>CUDA graph" (ms per run,
mean of 50 after warm-up; fp32, TF32 off as in Ember).

    gpu_torch.py CASE_DIR

CASE_DIR's name says the model and batch (resnet18_b1, resnet50_b64,
bert_base_b1, ...). Weights are random (latency does not depend on them);
torchvision's resnets when it is installed, else the same architectures
below; the BERT encoder is models/transformers/nets.py, carried along."""
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ITERS = 50


class Block(nn.Module):
    """A resnet basic (two 3x3) or bottleneck (1x1, 3x3, 1x1) block."""

    def __init__(self, cin, width, stride, bottleneck):
        super().__init__()
        cout = width * 4 if bottleneck else width
        convs = ([(cin, width, 1, 1), (width, width, 3, stride),
                  (width, cout, 1, 1)] if bottleneck else
                 [(cin, width, 3, stride), (width, width, 3, 1)])
        layers = []
        for i, (a, b, k, s) in enumerate(convs):
            layers += [nn.Conv2d(a, b, k, s, k // 2, bias=False),
                       nn.BatchNorm2d(b)]
            if i + 1 < len(convs):
                layers.append(nn.ReLU())
        self.body = nn.Sequential(*layers)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride,
                                                bias=False),
                                      nn.BatchNorm2d(cout))
        self.cout = cout

    def forward(self, x):
        return torch.relu(self.body(x) + (self.down(x) if self.down else x))


def resnet(depths, bottleneck):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
              nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, (width, n) in enumerate(zip((64, 128, 256, 512), depths)):
        for j in range(n):
            b = Block(cin, width, 2 if j == 0 and i > 0 else 1, bottleneck)
            layers.append(b)
            cin = b.cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


def model_and_inputs(name):
    base, batch = name.rsplit("_b", 1)
    batch = int(batch)
    if base in ("resnet18", "resnet50"):
        try:
            import torchvision
            m = getattr(torchvision.models, base)()
        except ImportError:
            m = resnet((2, 2, 2, 2), False) if base == "resnet18" else \
                resnet((3, 4, 6, 3), True)
        return m, (torch.randn(batch, 3, 224, 224),)
    if base == "bert_base":
        import nets
        m = nets.BertEncoder(30522, 512, 768, 12, 3072, 12)
        ids = torch.zeros(batch, 128, dtype=torch.int64)
        return m, (ids, torch.zeros(batch, 128, dtype=torch.int64))
    raise SystemExit("gpu_torch: no baseline for " + name)


def timed(fn, args):
    with torch.no_grad():
        for _ in range(5):
            fn(*args)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(ITERS):
            fn(*args)
        torch.cuda.synchronize()
    return "%.3f ms" % ((time.perf_counter() - t) * 1e3 / ITERS)


def graphed(m, args):
    """m replayed from a CUDA graph (static inputs), as Ember's -graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(s):
        for _ in range(3):
            m(*args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g):
        m(*args)
    return lambda *a: g.replay()


def main():
    name = os.path.basename(sys.argv[1].rstrip("/"))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    m, args = model_and_inputs(name)
    m = m.cuda().eval()
    args = tuple(a.cuda() for a in args)
    cells = [timed(m, args)]
    for make in (torch.compile, lambda mod: graphed(mod, args)):
        try:
            cells.append(timed(make(m), args))
        except Exception as e:  # no compiler toolchain, old PyTorch, ...
            cells.append("n/a (%s)" % type(e).__name__)
    print("\t".join(cells))


if __name__ == "__main__":
    main()
