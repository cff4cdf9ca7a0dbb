"""L-BFGS (Nocedal & Wright, Numerical Optimization, algorithms 7.4-7.5), with an optional
strong-Wolfe line search (ibid., algorithms 3.5-3.6, cubic interpolation as in minFunc)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .._creation import zeros
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor
from .optimizer import Optimizer, _abs_max, _step

__all__ = ["LBFGS"]


def _dot(a: Tensor, b: Tensor) -> Tensor:
    return (a * b).sum()


def _cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic with values f and slopes g at x1 and x2, clipped to ``bounds``."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    # Nocedal & Wright, eq. 3.59.
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(x, low), high)
    return (low + high) / 2.0  # the cubic has no minimizer: bisect


def _strong_wolfe(evaluate: Callable, t, d: Tensor, f: float, g: Tensor, gtd: Tensor,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25):
    """A step t along d meeting the strong Wolfe conditions: (loss, grad, t, evaluations)."""
    # evaluate(t) gives the loss and flat gradient at x + t d; f, g, gtd are those at t = 0.
    d_norm = _abs_max(d)
    g = g.clone()
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = _dot(g_new, d)

    def armijo_fails(step, value) -> bool:
        return bool(value > f + c1 * step * gtd)

    # Bracketing phase: grow t until an interval [lo, hi] is known to hold an acceptable step.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if armijo_fails(t, f_new) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [[t, f_new, g_new, gtd_new]]
            done = True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        # Extrapolate: the cubic's minimizer, kept within [t + (t - t_prev) / 100, 10 t].
        t_next = _cubic_minimizer(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                  bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]

    # Zoom phase: shrink the bracket by cubic interpolation until a step is acceptable.
    # low is the end with the lower loss, high the other.
    insufficient_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:
        (t_a, f_a, _, gtd_a), (t_b, f_b, _, gtd_b) = bracket
        if abs(t_b - t_a) * d_norm < tolerance_change:
            break
        t = _cubic_minimizer(t_a, f_a, gtd_a, t_b, f_b, gtd_b)
        # A step too close to an end of the bracket makes little progress: move it inwards
        # (to 10% of the width) if the previous step had the same problem or t left the bracket.
        t_max, t_min = max(t_a, t_b), min(t_a, t_b)
        eps = 0.1 * (t_max - t_min)
        if min(t_max - t, t - t_min) < eps:
            if insufficient_progress or t >= t_max or t <= t_min:
                t = t_max - eps if abs(t - t_max) < abs(t - t_min) else t_min + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False

        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if armijo_fails(t, f_new) or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.clone(), gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new.clone(), gtd_new]

    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters as one flat vector; ``step`` needs a closure."""

    def __init__(self, params: Iterable, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the parameters as one flat vector --------------------------------------------------

    def _gather_flat_grad(self) -> Tensor:
        flat = zeros(sum(p.numel() for p in self._params), dtype=self._params[0].dtype)
        offset = 0
        for p in self._params:
            n = p.numel()
            if p.grad is not None:
                flat[offset:offset + n] = p.grad.reshape(-1)
            offset += n
        return flat

    def _add_grad(self, step_size, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p) * step_size)
            offset += n

    def _directional_evaluate(self, closure: Callable, x: list, t, d: Tensor):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    @_step
    def step(self, closure: Callable):
        """Up to ``max_iter`` L-BFGS iterations; returns the loss before the first."""

        def evaluate_loss():
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # All the state lives under the first parameter, as in PyTorch.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate_loss()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        opt_cond = _abs_max(flat_grad) <= tolerance_grad
        if opt_cond:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                # Update the curvature pairs (y, s), skipping them if y.s is not positive.
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)

                # The two-loop recursion: d = -H grad (Nocedal & Wright, algorithm 7.4).
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q.sub_(old_dirs[i] * al[i])
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r.add_(old_stps[i] * (al[i] - be_i))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # The first step is scaled so that its size is at most lr.
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]

                def evaluate(step, x_init=x_init, d=d):
                    return self._directional_evaluate(evaluate_loss, x_init, step, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(evaluate, t, d, loss,
                                                                  flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = _abs_max(flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                ls_func_evals = 0
                if n_iter != max_iter:
                    loss = float(evaluate_loss())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _abs_max(flat_grad) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _abs_max(d * t) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
