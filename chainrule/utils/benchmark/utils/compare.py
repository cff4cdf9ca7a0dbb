"""Compare: the medians of many measurements as tables, one per label: a row per statement (or
sub-label), grouped by thread count and env, a column per description."""

from __future__ import annotations

import collections
import enum

import numpy as np

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value: float) -> int:
    return int(np.ceil(np.float32(common._log10_f32(value))))


class _Column:
    """How one column prints its numbers: the same width and decimals for every row."""

    def __init__(self, grouped_results: list[tuple], time_scale: float, time_unit: str,
                 trim_significant_figures: bool, highlight_warnings: bool) -> None:
        self._grouped_results = grouped_results
        flat = [m for group in grouped_results for m in group]
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings and any(m.has_warnings for m in flat if m)
        digits = [(_leading_digits(m.median / time_scale), m) for m in flat if m]
        unit_digits = max(d for d, _ in digits)
        decimals = (min(max(m.significant_figures - d, 0) for d, m in digits)
                    if self._trim else 1)
        width = unit_digits + decimals + (1 if decimals else 0)
        self._template = f"{{:>{width}.{decimals}f}}{{:>{7 if self._highlight else 0}}}"

    def get_results_for(self, group: int) -> tuple:
        return self._grouped_results[group]

    def num_to_str(self, value: float | None, estimated_sigfigs: int,
                   spread: float | None) -> str:
        if value is None:  # a blank as wide as a number
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim:
            value = common.trim_sigfig(value, estimated_sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self._highlight and spread is not None else ""
        return self._template.format(value, note)


class _Row:
    """One statement's measurements across the columns."""

    def __init__(self, results: list, row_group: int, render_env: bool, env_str_len: int,
                 time_scale: float, colorize: Colorize, num_threads: int | None) -> None:
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._num_threads = num_threads  # set on the first row of a thread count
        self._columns: tuple[_Column, ...] = ()

    def as_column_strings(self) -> list[str]:
        first = next(m for m in self._results if m is not None)
        env = (f"({first.env})" if self._render_env else "").ljust(self._env_str_len + 4)
        out = ["  " + env + first.as_row_name]
        for m, column in zip(self._results, self._columns):
            if m is None:
                out.append(column.num_to_str(None, 1, None))
            else:
                out.append(column.num_to_str(m.median / self._time_scale, m.significant_figures,
                                             m.iqr / m.median if m.has_warnings else None))
        return out

    @staticmethod
    def color_segment(segment: str, value: float, best_value: float) -> str:
        if value <= best_value * 1.01 or value <= best_value + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best_value * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width: int) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(self, column_strings: list[str], col_widths: list[int]):
        if self._colorize == Colorize.ROWWISE:
            best = [min(m.median for m in self._results if m is not None)] * len(self._results)
        elif self._colorize == Colorize.COLUMNWISE:
            best = [min((m.median for m in c.get_results_for(self._row_group) if m is not None),
                        default=None) for c in self._columns]
        else:
            best = [None] * len(self._results)
        out = [column_strings[0].ljust(col_widths[0])]
        for text, width, m, b in zip(column_strings[1:], col_widths[1:], self._results, best):
            text = text.center(width)
            if self._colorize != Colorize.NONE and m is not None and b is not None:
                text = self.color_segment(text, m.median, b)
            out.append(text)
        return out


class Table:
    """The table of the measurements sharing one label."""

    def __init__(self, results: list, colorize: Colorize, trim_significant_figures: bool,
                 highlight_warnings: bool) -> None:
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = common.select_unit(min(r.median for r in results))
        self.row_keys = common.ordered_unique(self.row_fn(r) for r in results)
        self.row_keys.sort(key=lambda k: k[:2])  # by threads and env; statements keep order
        self.column_keys = common.ordered_unique(self.col_fn(r) for r in results)
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m) -> tuple:
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m) -> str | None:
        return m.description

    def populate_rows_and_columns(self) -> tuple[tuple[_Row, ...], tuple[_Column, ...]]:
        row_of = {k: i for i, k in enumerate(self.row_keys)}
        col_of = {k: j for j, k in enumerate(self.column_keys)}
        grid: list[list] = [[None] * len(self.column_keys) for _ in self.row_keys]
        for r in self.results:
            grid[row_of[self.row_fn(r)]][col_of[self.col_fn(r)]] = r
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if render_env else 0
        rows, groups = [], []
        prior_threads, prior_env = -1, ""
        for (threads, env, _), cells in zip(self.row_keys, grid):
            new_group = threads != prior_threads
            if new_group:
                prior_threads, prior_env = threads, ""
                groups.append([])
            rows.append(_Row(cells, len(groups) - 1, render_env and env != prior_env, env_len,
                             self.time_scale, self._colorize, threads if new_group else None))
            groups[-1].append(cells)
            prior_env = env
        columns = tuple(
            _Column([tuple(cells[j] for cells in g) for g in groups], self.time_scale,
                    self.time_unit, self._trim, self._highlight)
            for j in range(len(self.column_keys)))
        for row in rows:
            row._columns = columns
        return tuple(rows), columns

    def render(self) -> str:
        cells = [[""] + self.column_keys] + [r.as_column_strings() for r in self.rows]
        n = max(len(c) for c in cells)
        for c in cells:
            c.extend([""] * (n - len(c)))
        widths = [max(len(s) for s in column) for column in zip(*cells)]
        lines = ["  |  ".join(s.center(w) for s, w in zip(cells[0], widths))]
        overall = len(lines[0])
        for texts, row in zip(cells[1:], self.rows):
            lines.extend(row.row_separator(overall))
            lines.append("  |  ".join(row.finalize_column_strings(texts, widths)))
        warned = self._highlight and any(r.has_warnings for r in self.results)
        note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if warned else "")
        title = (" " + (self.label or "") + " ").center(overall - 2, "-")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\nTimes are in "
                f"{common.unit_to_english(self.time_unit)}s ({self.time_unit}).\n" + note)


class Compare:
    """Prints the results of many measurements as tables (``print(compare)`` or
    ``compare.print()``)."""

    def __init__(self, results: list) -> None:
        self._results: list = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add measurements (each must be a ``Measurement``)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print only the digits each measurement's spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Color each time by how it compares with the best of its column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark measurements with a high variance."""
        self._highlight_warnings = True

    def print(self) -> None:
        """Print the tables."""
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [Table(group, self._colorize, self._trim_significant_figures,
                      self._highlight_warnings).render() for group in by_label.values()]
