"""The Timer on a broadcasting add, three times over:

$ python -m chainrule.utils.benchmark.examples.simple_timeit
"""

from .... import ones
from .. import Timer


def main() -> None:
    timer = Timer(stmt="x + y", globals={"x": ones((4, 8)), "y": ones((1, 8))},
                  label="Broadcasting add (4x8)")
    for run in range(3):
        print(f"Run: {run}\n{'-' * 40}")
        print(f"timeit:\n{timer.timeit(10000)}\n")
        print(f"autorange:\n{timer.blocked_autorange()}\n\n")


if __name__ == "__main__":
    main()
