"""Issue 34: an nn.Module target called under torch.inference_mode(); it changes nothing in
place (a false "target changes `input` in place" was reported).

    launchprof analyze benchmarks/fix-field/inference_module.py --target Net.forward
"""

import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(128, 128)
        self.b = torch.nn.Linear(128, 128)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))


def main() -> None:
    torch.manual_seed(0)
    net = Net().cuda().eval()
    total = 0.0
    with torch.inference_mode():
        for _ in range(60):
            x = torch.randn(32, 128, device="cuda")
            total += float(net(x).sum())
    print(f"total {total:.3f}")


if __name__ == "__main__":
    main()
