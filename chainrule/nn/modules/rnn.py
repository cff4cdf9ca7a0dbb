"""Recurrent layers RNN, LSTM, GRU and their single-step cells, written with chainrule ops.

Gate layouts and parameter names follow PyTorch, so state dicts load across: LSTM gates are
(input, forget, cell, output), GRU gates (reset, update, new); layer ``k`` of the reverse
direction has the suffix ``_l{k}_reverse``.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ... import _creation
from ...ops.shape import cat, stack
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


def apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    """``tensor.index_select(dim, permutation)`` (deprecated)."""
    warnings.warn("`apply_permutation` is deprecated, please use `tensor.index_select(dim, "
                  "permutation)` instead", FutureWarning, stacklevel=2)
    return _apply_permutation(tensor, permutation, dim)


# ---- one time step ------------------------------------------------------------------------------
# ``gi`` is the input's projection x Wᵢₕᵀ + bᵢₕ, computed for all steps at once by the layers.


def _hidden_projection(h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    gh = h.matmul(w_hh.T)
    return gh if b_hh is None else gh + b_hh


def _rnn_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, nonlinearity: str):
    pre = gi + _hidden_projection(h, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None = None) -> tuple[Tensor, Tensor]:
    i, f, g, o = (gi + _hidden_projection(h, w_hh, b_hh)).chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else h.matmul(w_hr.T)), c


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = _hidden_projection(h, w_hh, b_hh).chunk(3, -1)
    r, z = (i_r + h_r).sigmoid(), (i_z + h_z).sigmoid()
    candidate = (i_n + r * h_n).tanh()
    return candidate + z * (h - candidate)  # = (1 - z) n + z h


def _input_projection(x: Tensor, w_ih: Tensor, b_ih: Tensor | None) -> Tensor:
    gi = x.matmul(w_ih.T)
    return gi if b_ih is None else gi + b_ih


# ---- layers -------------------------------------------------------------------------------------


class RNNBase(Module):
    """Parameters, checks and the layer/direction loop shared by RNN, LSTM and GRU."""

    _gates = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if mode not in self._gates:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value in (("hidden_size", hidden_size), ("num_layers", num_layers)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = self._gates[mode] * hidden_size
        out_size = proj_size or hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, out_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    weight = _creation.empty(*shape, device=device, dtype=dtype)
                    setattr(self, name + suffix, Parameter(weight))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in PyTorch's grouping."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch code: the weights are separate tensors here."""

    def _weights(self, layer: int, direction: int) -> tuple:
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = lambda name: getattr(self, name + suffix, None)
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ------------------------------------------------------------------------------

    def _state_shapes(self, batch: int) -> list[tuple]:
        """The expected shapes of the initial states (h, and c for the LSTM)."""
        layers = self.num_layers * (2 if self.bidirectional else 1)
        return [(layers, batch, self.proj_size or self.hidden_size)]

    def _prepare(self, input: Tensor, hx):
        """Batched, time-major input and the initial states as a list of 3-D tensors."""
        name = type(self).__name__
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                             "tensor instead")
        batched = input.dim() == 3
        self._check_dtype(input)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        batch = input.shape[1]
        shapes = self._state_shapes(batch)
        states = [hx] if isinstance(hx, Tensor) else hx
        if states is None:
            states = [_creation.zeros(*s, dtype=input.dtype) for s in shapes]
        else:
            states = list(states)
            want = 3 if batched else 2
            for s in states:
                if s.dim() != want:
                    kind = "batched 3-D" if batched else "unbatched 2-D"
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                       f"{s.dim()}-D tensor")
            if not batched:
                states = [s.unsqueeze(1) for s in states]
            for i, (s, shape) in enumerate(zip(states, shapes)):
                if tuple(s.shape) != shape:
                    which = f"hidden[{i}]" if len(shapes) > 1 else "hidden"
                    raise RuntimeError(f"Expected {which} size {shape}, got {list(s.shape)}")
        return input, states, batched

    def _prepare_packed(self, input: PackedSequence, hx, sizes: list[int]):
        """The packed rows and the initial states, permuted into the batch's sorted order."""
        data = input.data
        self.check_input(data, input.batch_sizes)
        if hx is None:
            return data, [_creation.zeros(*s, dtype=data.dtype)
                          for s in self._state_shapes(sizes[0] if sizes else 0)]
        self.check_forward_args(data, hx, input.batch_sizes)
        hx = self.permute_hidden(hx, input.sorted_indices)
        return data, [hx] if isinstance(hx, Tensor) else list(hx)

    # ---- PyTorch's checks, public for subclasses ------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        """Raise unless input has 2 (packed) or 3 dims, input_size features, the weights' dtype."""
        self._check_dtype(input)
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.shape[-1]:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_dtype(self, input: Tensor) -> None:
        weight = getattr(self, self._flat_weights_names[0]).dtype
        if input.dtype != weight:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight}). Convert input: input.to({weight}), or convert model: "
                             f"model.to({input.dtype})")

    def get_expected_hidden_size(self, input: Tensor,
                                 batch_sizes: Tensor | None) -> tuple[int, int, int]:
        """(layers x directions, batch, hidden or projection size)."""
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.shape[0] if self.batch_first else input.shape[1]
        return self._state_shapes(batch)[0]

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Tensor,
                           batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        """hx with its batch (dim 1) reordered by ``permutation`` (None: as it is)."""
        return hx if permutation is None else hx.index_select(1, permutation)

    def _run_direction(self, gi: Tensor, states: list[Tensor], weights: tuple, reverse: bool,
                       sizes: list[int] | None) -> tuple[list[Tensor], list[Tensor]]:
        """Run one layer in one direction over time; gi is the input projection, (T, N, G)
        padded or, packed, the rows of each step one after another with ``sizes`` per step.
        Packed, only a step's first ``sizes[t]`` states advance: the batch is sorted by length."""
        _, w_hh, _, b_hh, w_hr = weights
        steps = gi.unbind(0) if sizes is None else gi.split(sizes)
        outputs = []
        for step in reversed(steps) if reverse else steps:
            n = step.shape[0]
            if n == states[0].shape[0]:
                states = self._step(step, states, w_hh, b_hh, w_hr)
            else:
                new = self._step(step, [s[:n] for s in states], w_hh, b_hh, w_hr)
                states = [cat([a, s[n:]]) for a, s in zip(new, states)]
            outputs.append(states[0][:n])
        if reverse:
            outputs.reverse()
        return outputs, states

    def _run(self, input, hx):
        """The layer's forward on a padded (batched or not) or packed input."""
        packed = isinstance(input, PackedSequence)
        if packed:
            sizes = [int(b) for b in input.batch_sizes.tolist()]
            x, states = self._prepare_packed(input, hx, sizes)
            batched = True
        else:
            sizes = None
            x, states, batched = self._prepare(input, hx)
        join = stack if sizes is None else cat
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0:
                x = F.dropout(x, self.dropout, self.training)
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = self._weights(layer, direction)
                gi = _input_projection(x, weights[0], weights[2])
                out, last = self._run_direction(gi, [s[k] for s in states], weights,
                                                direction == 1, sizes)
                outs.append(join(out, 0))
                for final, s in zip(finals, last):
                    final.append(s)
            x = outs[0] if directions == 1 else cat(outs, -1)
        finals = [stack(f, 0) for f in finals]
        if packed:
            if input.unsorted_indices is not None:
                finals = [f.index_select(1, input.unsorted_indices) for f in finals]
            x = PackedSequence(x, input.batch_sizes, input.sorted_indices,
                               input.unsorted_indices)
        elif not batched:
            x = x.squeeze(1)
            finals = [f.squeeze(1) for f in finals]
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, (finals[0] if len(finals) == 1 else tuple(finals))


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x Wᵢₕᵀ + bᵢₕ + h Wₕₕᵀ + bₕₕ) (or relu), stacked in layers."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._run(input, hx)

    def _step(self, gi, states, w_hh, b_hh, w_hr):
        return [_rnn_step(gi, states[0], w_hh, b_hh, self.nonlinearity)]


class LSTM(RNNBase):
    """Long short-term memory; forward takes and returns (h, c) states."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)

    def _state_shapes(self, batch: int) -> list[tuple]:
        layers = self.num_layers * (2 if self.bidirectional else 1)
        return [(layers, batch, self.proj_size or self.hidden_size),
                (layers, batch, self.hidden_size)]

    def get_expected_cell_size(self, input: Tensor,
                               batch_sizes: Tensor | None) -> tuple[int, int, int]:
        """(layers x directions, batch, hidden size): the shape of c."""
        layers, batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return (layers, batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: tuple[Tensor, Tensor],
                           batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: tuple[Tensor, Tensor],
                       permutation: Tensor | None) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        return self._run(input, hx)

    def _step(self, gi, states, w_hh, b_hh, w_hr):
        return list(_lstm_step(gi, states[0], states[1], w_hh, b_hh, w_hr))


class GRU(RNNBase):
    """Gated recurrent unit, stacked in layers."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._run(input, hx)

    def _step(self, gi, states, w_hh, b_hh, w_hr):
        return [_gru_step(gi, states[0], w_hh, b_hh)]


# ---- cells --------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """weight_ih, weight_hh (and biases) of one recurrent step, drawn from U(-1/√H, 1/√H)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = num_chunks * hidden_size
        factory = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(_creation.empty(gate_size, input_size, **factory))
        self.weight_hh = Parameter(_creation.empty(gate_size, hidden_size, **factory))
        if bias:
            self.bias_ih = Parameter(_creation.empty(gate_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(gate_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input: Tensor, hx, n_states: int):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
            states = [zeros] * n_states
        else:
            states = [hx] if isinstance(hx, Tensor) else list(hx)
            for s in states:
                if s.dim() != (2 if batched else 1):
                    raise RuntimeError(f"{type(self).__name__}: Expected hidden to be "
                                       f"{2 if batched else 1}D, got {s.dim()}D instead")
            if not batched:
                states = [s.unsqueeze(0) for s in states]
        gi = _input_projection(input, self.weight_ih, self.bias_ih)
        return gi, states, batched


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x Wᵢₕᵀ + bᵢₕ + h Wₕₕᵀ + bₕₕ) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        gi, (h,), batched = self._prepare(input, hx, 1)
        h = _rnn_step(gi, h, self.weight_hh, self.bias_hh, self.nonlinearity)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; takes and returns (h, c)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx=None) -> tuple[Tensor, Tensor]:
        gi, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(gi, h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        gi, (h,), batched = self._prepare(input, hx, 1)
        h = _gru_step(gi, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
