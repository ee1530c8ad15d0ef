"""Tests runtime/python/ddscript_nvtx.py without torch (not installed on CI
machines): a stand-in torch records the NVTX calls and plays autograd's part
(node hooks run around the node, on backward)."""
import os
import sys
import types
import unittest

CALLS = []


class Tensor:
    def __init__(self, grad_fn=None):
        self.grad_fn = grad_fn


class Node:
    def __init__(self):
        self.pre, self.post = [], []

    def register_prehook(self, fn):
        self.pre.append(fn)

    def register_hook(self, fn):
        self.post.append(fn)

    def run_backward(self):
        for fn in self.pre:
            assert fn(("grad",)) is None, "a prehook must return None"
        CALLS.append("node ran")
        for fn in self.post:
            assert fn(("gi",), ("go",)) is None, "a hook must return None"


class Handle:
    def __init__(self, hooks, fn):
        self.hooks, self.fn = hooks, fn

    def remove(self):
        self.hooks.remove(self.fn)


class Module:
    def __init__(self, name, children=(), grad=True):
        self.name, self.kids, self.grad = name, list(children), grad
        self.pre_hooks, self.post_hooks, self.nodes = [], [], []

    def children(self):
        return iter(self.kids)

    def named_modules(self, prefix=""):
        yield prefix, self
        for kid in self.kids:
            yield from kid.named_modules(f"{prefix}.{kid.name}" if prefix else kid.name)

    def register_forward_pre_hook(self, fn):
        self.pre_hooks.append(fn)
        return Handle(self.pre_hooks, fn)

    def register_forward_hook(self, fn):
        self.post_hooks.append(fn)
        return Handle(self.post_hooks, fn)

    def __call__(self, x):
        for fn in self.pre_hooks:
            assert fn(self, (x,)) is None
        for kid in self.kids:
            x = kid(x)
        if not self.kids:
            node = Node() if self.grad else None
            self.nodes.append(node)
            x = (Tensor(node), "extra")
        for fn in self.post_hooks:
            assert fn(self, (x,), x) is None
        return x


class Net(Module):
    """The model: its range is named after its class."""


def install_fake_torch():
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.is_grad_enabled = lambda: True
    torch.autograd = types.ModuleType("torch.autograd")
    torch.autograd.graph = types.ModuleType("torch.autograd.graph")
    torch.autograd.graph.Node = Node
    nvtx = types.ModuleType("torch.cuda.nvtx")
    nvtx.range_push = lambda msg: CALLS.append("push " + msg) or 1
    nvtx.range_pop = lambda: CALLS.append("pop") or 0
    torch.cuda = types.ModuleType("torch.cuda")
    torch.cuda.nvtx = nvtx
    for name, mod in [("torch", torch), ("torch.autograd", torch.autograd),
                      ("torch.autograd.graph", torch.autograd.graph),
                      ("torch.cuda", torch.cuda), ("torch.cuda.nvtx", nvtx)]:
        sys.modules[name] = mod


install_fake_torch()
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "runtime", "python"))
import ddscript_nvtx  # noqa: E402


class DdscriptNvtxTest(unittest.TestCase):
    def setUp(self):
        CALLS.clear()

    def test_steps_name_iterations_and_close_ranges(self):
        seen = []
        for item in ddscript_nvtx.steps("ab", start=10):
            CALLS.append("body " + item)
            seen.append(item)
        self.assertEqual(seen, ["a", "b"])
        self.assertEqual(CALLS, ["push ProfilerStep#10", "body a", "pop",
                                 "push ProfilerStep#11", "body b", "pop"])

    def test_breaking_out_closes_the_range(self):
        gen = ddscript_nvtx.steps([1, 2, 3])
        for _ in gen:
            break
        gen.close()
        self.assertEqual(CALLS, ["push ProfilerStep#0", "pop"])

    def test_modules_forward_and_leaf_backward(self):
        fc = Module("fc")
        relu = Module("relu", grad=False)
        model = Net("", [Module("block", [fc]), relu])
        handles = ddscript_nvtx.annotate(model)
        model("x")
        self.assertEqual(CALLS, [
            "push nn.Module: Net", "push nn.Module: block",
            "push nn.Module: block.fc", "pop", "pop",
            "push nn.Module: relu", "pop", "pop"])
        CALLS.clear()
        fc.nodes[0].run_backward()
        self.assertEqual(CALLS, ["push nn.Module: block.fc (backward)",
                                 "node ran", "pop"])
        handles.remove()
        CALLS.clear()
        model("x")
        self.assertEqual(CALLS, [])

    def test_backward_can_be_left_out(self):
        fc = Module("fc")
        ddscript_nvtx.annotate(Net("", [fc]), backward=False)
        Module.__call__(fc, "x")
        fc.nodes[0].run_backward()
        self.assertNotIn("push nn.Module: fc (backward)", CALLS)


if __name__ == "__main__":
    unittest.main()
