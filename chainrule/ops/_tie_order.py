"""Which of equal elements PyTorch's CPU kernels return: kthvalue's quickselect and topk's
libstdc++ selection and sorting, run on one slice's values.

Without ties the result of either is the unique order statistic; these run only for slices with
repeated values (and topk's unsorted results), where the position of each comparison and swap
decides which index comes out.
"""

from __future__ import annotations

from collections.abc import Callable

from .._backend import xp


def _greater(a: float, b: float) -> bool:
    """a > b, with NaN above every number (PyTorch's ``gt_or_nan``)."""
    return (a != a and b == b) or a > b  # noqa: PLR0124  (a != a: NaN)


def _less(a: float, b: float) -> bool:
    """a < b, with NaN above every number."""
    return (a == a and b != b) or a < b  # noqa: PLR0124


def kthvalue_index(values: list, k: int) -> int:
    """The index of the k-th smallest (0-based) value PyTorch's kthvalue reports: Sedgewick's
    quickselect with a median-of-three pivot, swapping values and indices together."""
    a = list(values)
    idx = list(range(len(a)))

    def swap(i: int, j: int) -> None:
        a[i], a[j] = a[j], a[i]
        idx[i], idx[j] = idx[j], idx[i]

    low, high = 0, len(a) - 1
    while high > low:
        if high == low + 1:
            if _greater(a[low], a[high]):
                swap(low, high)
            break
        swap((low + high) >> 1, low + 1)
        if _greater(a[low + 1], a[high]):
            swap(low + 1, high)
        if _greater(a[low], a[high]):
            swap(low, high)
        if _greater(a[low + 1], a[low]):
            swap(low + 1, low)
        i, j = low + 1, high
        pivot = a[low]
        while True:
            i += 1
            while _greater(pivot, a[i]):
                i += 1
            j -= 1
            while _greater(a[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    return idx[k]


class _Slice:
    """libstdc++'s nth_element, sort and partial_sort on (value, index) pairs compared by value
    with ``before`` (the algorithms as GCC's standard library runs them, step for step)."""

    def __init__(self, values: list, before: Callable[[float, float], bool]) -> None:
        self.a = [(v, i) for i, v in enumerate(values)]
        self.before = before

    def _c(self, i: int, j: int) -> bool:
        return self.before(self.a[i][0], self.a[j][0])

    def _swap(self, i: int, j: int) -> None:
        self.a[i], self.a[j] = self.a[j], self.a[i]

    def _median_to_first(self, result: int, a: int, b: int, c: int) -> None:
        if self._c(a, b):
            pick = b if self._c(b, c) else c if self._c(a, c) else a
        else:
            pick = a if self._c(a, c) else c if self._c(b, c) else b
        self._swap(result, pick)

    def _partition(self, first: int, last: int) -> int:
        """Hoare partition of [first + 1, last) around the median of three moved to first."""
        self._median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
        pivot, first = first, first + 1
        while True:
            while self._c(first, pivot):
                first += 1
            last -= 1
            while self._c(pivot, last):
                last -= 1
            if not first < last:
                return first
            self._swap(first, last)
            first += 1

    def _linear_insert(self, last: int) -> None:
        value = self.a[last]
        while self.before(value[0], self.a[last - 1][0]):
            self.a[last] = self.a[last - 1]
            last -= 1
        self.a[last] = value

    def _insertion_sort(self, first: int, last: int) -> None:
        for i in range(first + 1, last):
            if self._c(i, first):
                value = self.a[i]
                self.a[first + 1:i + 1] = self.a[first:i]
                self.a[first] = value
            else:
                self._linear_insert(i)

    def _adjust_heap(self, first: int, hole: int, length: int, value: tuple) -> None:
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if self._c(first + child, first + child - 1):
                child -= 1
            self.a[first + hole] = self.a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            self.a[first + hole] = self.a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and self.before(self.a[first + parent][0], value[0]):
            self.a[first + hole] = self.a[first + parent]
            hole, parent = parent, (parent - 1) // 2
        self.a[first + hole] = value

    def _pop_heap(self, first: int, last: int, result: int) -> None:
        value = self.a[result]
        self.a[result] = self.a[first]
        self._adjust_heap(first, 0, last - first, value)

    def _heap_select(self, first: int, middle: int, last: int) -> None:
        length = middle - first
        if length >= 2:
            for parent in range((length - 2) // 2, -1, -1):
                self._adjust_heap(first, parent, length, self.a[first + parent])
        for i in range(middle, last):
            if self._c(i, first):
                self._pop_heap(first, middle, i)

    def partial_sort(self, first: int, middle: int, last: int) -> None:
        self._heap_select(first, middle, last)
        while middle - first > 1:
            middle -= 1
            self._pop_heap(first, middle, middle)

    def nth_element(self, first: int, nth: int, last: int) -> None:
        if first == last or nth == last:
            return
        depth = 2 * ((last - first).bit_length() - 1)
        while last - first > 3:
            if depth == 0:
                self._heap_select(first, nth + 1, last)
                self._swap(first, nth)
                return
            depth -= 1
            cut = self._partition(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self._insertion_sort(first, last)

    def _introsort(self, first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self._partition(first, last)
            self._introsort(cut, last, depth)
            last = cut

    def sort(self, first: int, last: int) -> None:
        if first == last:
            return
        self._introsort(first, last, 2 * ((last - first).bit_length() - 1))
        if last - first > 16:
            self._insertion_sort(first, first + 16)
            for i in range(first + 16, last):
                self._linear_insert(i)
        else:
            self._insertion_sort(first, last)


def topk_indices(values: list, k: int, largest: bool, sorted: bool) -> list[int]:  # noqa: A002
    """The indices PyTorch's CPU topk returns for one slice: a partial sort when k * 64 <= n,
    else nth_element, then (if ``sorted``) a sort of the first k - 1."""
    n = len(values)
    s = _Slice(values, _greater if largest else _less)
    if k * 64 <= n:
        s.partial_sort(0, k, n)
    elif k:
        s.nth_element(0, k - 1, n)
        if sorted:
            s.sort(0, k - 1)
    return [i for _, i in s.a[:k]]


def needs_order(rows, k: int, sorted: bool):  # noqa: A002
    """Per row of a 2-d array: whether the row's result depends on the kernels' order (a value
    held twice, NaNs being equal, or an unsorted topk that nth_element arranges)."""
    n = rows.shape[1]
    if not sorted and k > 1 and k * 64 > n:
        return xp.ones(rows.shape[0], dtype=bool)
    s = xp.sort(rows, axis=1)
    same = s[:, 1:] == s[:, :-1]
    if rows.dtype.kind not in "biu":
        nan = xp.isnan(s)
        same |= nan[:, 1:] & nan[:, :-1]
    return same.any(axis=1)
