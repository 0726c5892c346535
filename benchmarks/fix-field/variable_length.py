"""Issue 34: variable-length input (12 sequence lengths) reduced with a plain mean over the
sequence: padding to a bucket changes the mean until a masked mean is written.

    launchprof analyze benchmarks/fix-field/variable_length.py --target encode
"""

import torch

W = None


def encode(x: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(x @ W)
    h = torch.relu(h @ W)
    return h.mean(dim=1)


def main() -> None:
    global W
    torch.manual_seed(0)
    W = torch.randn(64, 64, device="cuda") / 8
    lengths = [17, 23, 31, 40, 47, 55, 64, 71, 80, 96, 111, 128]
    total = torch.zeros((), device="cuda")
    for i in range(96):
        x = torch.randn(8, lengths[i % len(lengths)], 64, device="cuda")
        total += encode(x).sum()
    print(f"total {float(total):.3f}")


if __name__ == "__main__":
    main()
