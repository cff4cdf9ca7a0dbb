"""AdaptiveLogSoftmaxWithLoss: the efficient softmax of Grave et al. (2016) for many classes,
with frequent classes in a head and rarer ones in smaller tail clusters."""

from __future__ import annotations

from collections import namedtuple

from ..._backend import xp
from ..._creation import tensor as _tensor
from ..._creation import zeros
from ...ops.shape import cat
from ...tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of the targets under a head softmax over the shortlist and the
    clusters, times each cluster's own softmax; returns (output, loss)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for to_hidden, to_output in self.tail:
            to_hidden.reset_parameters()
            to_output.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = (target_ if batched else target_.unsqueeze(0)).numpy()
        output = zeros(len(target), dtype=input.dtype)
        # The head's entry for each row: its class if in the shortlist, else its cluster's.
        head_index = xp.zeros(len(target), dtype=xp.int64)
        used = 0
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            rows = xp.nonzero((target >= low) & (target < high))[0]
            if rows.size == 0:
                continue
            used += rows.size
            if i == 0:
                head_index[rows] = target[rows]
                continue
            head_index[rows] = self.shortlist_size + i - 1
            picked = _tensor(rows)
            cluster = F.log_softmax(self.tail[i - 1](input.index_select(0, picked)), dim=1)
            local = cluster.gather(1, _tensor(target[rows] - low).unsqueeze(1)).squeeze(1)
            output = output.index_copy(0, picked, local)
        if used != len(target):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values "
                               f"in range [{target.min()}, {target.max()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output = output + head.gather(1, _tensor(head_index).unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class, (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the head's choice when it is in the shortlist)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = (output >= self.shortlist_size).numpy()
        if outside.any():
            rows = _tensor(xp.nonzero(outside)[0])
            full = self._get_full_log_prob(input.index_select(0, rows),
                                           head_output.index_select(0, rows))
            output = output.index_copy(0, rows, full.argmax(dim=1))
        return output
