"""Issue 34: a host read assigned to a name, then used in Python's max().

    launchprof analyze benchmarks/fix-field/peak_item.py --target normalize
"""

import torch


def normalize(x: torch.Tensor) -> torch.Tensor:
    peak = x.abs().amax()
    m = peak.item()
    return x / max(m, 1e-6)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 256, device="cuda")
    for _ in range(60):
        out = normalize(x)
        x = x * 0.9 + out * 0.1
    print(f"final {float(out.abs().sum()):.4f}")


if __name__ == "__main__":
    main()
