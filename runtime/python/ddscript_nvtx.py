"""NVTX ranges that let ddscript read a PyTorch training run recorded with
`ddscript record` (its CUPTI collector), without the PyTorch profiler.

Optional: it needs only torch. Two things, both plain NVTX ranges:

- iterations: ``ProfilerStep#N`` ranges, the name ddscript (and the PyTorch
  profiler) use for training iterations. The collector counts them for
  ``ddscript record --skip N --iterations K``; ``ddscript replay`` reports
  them.
- layers: ``nn.Module: NAME`` around every module's forward, and
  ``nn.Module: NAME (backward)`` around the backward of every leaf module,
  so that kernels map to the layers that launched them.

Usage::

    import ddscript_nvtx

    ddscript_nvtx.annotate(model)            # once, after building the model
    for batch in ddscript_nvtx.steps(loader):  # ProfilerStep#0, #1, ...
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()

or, where the loop is not a for loop over an iterable::

    with ddscript_nvtx.step(n):
        ...

and run it with ``ddscript record -o run.cupti --skip 10 --iterations 5 --
python train.py``. Without the collector (NVTX_INJECTION64_PATH unset) the
ranges cost next to nothing.

Each iteration begins once its batch has been fetched: data loading falls
between iterations. Backward ranges come from hooks on the autograd node
that computes a leaf module's output (PyTorch 2.0 or newer; module backward
hooks are not used because they break in-place operations such as
``ReLU(inplace=True)``).
"""

import contextlib
import warnings

import torch
from torch.cuda import nvtx

__all__ = ["annotate", "step", "steps"]

ITERATION_PREFIX = "ProfilerStep#"
MODULE_PREFIX = "nn.Module: "
BACKWARD_SUFFIX = " (backward)"


@contextlib.contextmanager
def step(number):
    """A ``ProfilerStep#number`` range around one training iteration."""
    nvtx.range_push(f"{ITERATION_PREFIX}{number}")
    try:
        yield
    finally:
        nvtx.range_pop()


def steps(iterable, start=0):
    """Yields the items of ``iterable``, each inside a ``ProfilerStep#N``
    range (N counts from ``start``) that lasts until the next item is asked
    for."""
    number = start
    for item in iterable:
        with step(number):
            yield item
        number += 1


def _first_tensor(value):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            t = _first_tensor(v)
            if t is not None:
                return t
    if isinstance(value, dict):
        for v in value.values():
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


class _Handles:
    """What annotate() registered; remove() takes it all off again."""

    def __init__(self):
        self.handles = []

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles.clear()


def annotate(model, backward=True):
    """Adds ``nn.Module: NAME`` ranges around the forward of every module of
    ``model`` (NAME is the module's qualified name; the model itself is
    named after its class) and, with ``backward``, ``nn.Module: NAME
    (backward)`` ranges around the backward of its leaf modules. Returns a
    handle whose remove() undoes it."""
    handles = _Handles()
    can_backward = backward and hasattr(torch.autograd.graph, "Node") and \
        hasattr(torch.autograd.graph.Node, "register_prehook")
    if backward and not can_backward:
        warnings.warn("ddscript_nvtx: backward ranges need PyTorch 2.0 or "
                      "newer; marking forward ranges only")

    for name, module in model.named_modules():
        label = MODULE_PREFIX + (name or type(module).__name__)
        leaf = next(module.children(), None) is None

        def pre(mod, args, label=label):
            nvtx.range_push(label)

        def post(mod, args, output, label=label, leaf=leaf):
            nvtx.range_pop()
            if not (can_backward and leaf and torch.is_grad_enabled()):
                return None
            out = _first_tensor(output)
            node = out.grad_fn if out is not None else None
            if node is None:
                return None
            # The node that computes this module's output runs first in its
            # backward; its hooks run on the autograd thread around it. They
            # must return None (anything else would replace the gradients).
            def begin(grad_outputs, label=label):
                nvtx.range_push(label + BACKWARD_SUFFIX)

            def end(grad_inputs, grad_outputs):
                nvtx.range_pop()

            node.register_prehook(begin)
            node.register_hook(end)
            return None

        handles.handles.append(module.register_forward_pre_hook(pre))
        handles.handles.append(module.register_forward_hook(post))
    return handles
