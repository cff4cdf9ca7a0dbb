"""chainrule.profiler against torch.profiler on the same program (``m`` is chainrule or torch)."""

import gzip
import json
import threading

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import _modes

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


@pytest.fixture(autouse=True)
def _tools_off():
    yield
    assert _modes.stack.op is None and _modes.stack.node is None


def program(m):
    """Three rounds of mul and sin, an add, a sum and the backward."""
    x = m.tensor(np.ones((4, 3)), requires_grad=True)
    y = x
    for _ in range(3):
        y = (y * 2).sin()
    (y + 1).sum().backward()
    return x


def profiled(m, **options):
    with m.profiler.profile(**options) as prof:
        program(m)
    return prof


def test_counts_as_torch():
    ours = {e.key: e.count for e in profiled(cr).key_averages()}
    theirs = {e.key: e.count for e in profiled(torch).key_averages()}
    # torch also lists its internal dtype conversions and copies; every event chainrule shows,
    # PyTorch shows as often.
    assert {k: theirs.get(k) for k in ours} == ours
    assert ours["aten::mul"] == 9  # 3 forward, 6 in the backward rules
    assert ours["MulBackward0"] == ours["SinBackward0"] == 3
    assert ours["autograd::engine::evaluate_function: SinBackward0"] == 3
    assert ours["torch::autograd::AccumulateGrad"] == 1


def test_input_shapes_as_torch():
    def shapes(m):
        prof = profiled(m, record_shapes=True)
        return {(e.key, str(e.input_shapes)): e.count
                for e in prof.key_averages(group_by_input_shape=True)
                if e.key in ("aten::mul", "aten::sin", "aten::cos", "MulBackward0")}

    assert shapes(cr) == shapes(torch)
    assert shapes(cr)[("aten::mul", "[[4, 3], []]")] == 6


def _layout(table: str) -> list[str]:
    """The rules, the header (up to "# of Calls": torch's shapes are longer) and the footer."""
    lines = table.rstrip("\n").split("\n")
    end = lines[1].index("# of Calls") + len("# of Calls")
    return [line[:end] for line in lines[:3] + [lines[-2]]] + [lines[-1].split(":")[0]]


@pytest.mark.parametrize("by_shape", [False, True])
def test_table_layout_as_torch(by_shape):
    ours = profiled(cr, record_shapes=True).key_averages(group_by_input_shape=by_shape)
    theirs = profiled(torch, record_shapes=True).key_averages(group_by_input_shape=by_shape)
    table = ours.table(sort_by="cpu_time_total", row_limit=5)
    assert _layout(table) == _layout(theirs.table(sort_by="cpu_time_total", row_limit=5))
    header = table.split("\n")[1].split("  ")
    names = [h.strip() for h in header if h.strip()]
    assert names == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                     "# of Calls"] + (["Input Shapes"] if by_shape else [])
    lines = table.rstrip("\n").split("\n")
    assert len(lines) == 3 + 5 + 2 and lines[-1].startswith("Self CPU time total: ")
    totals = [e.cpu_time_total for e in sorted(ours, key=lambda e: -e.cpu_time_total)][:5]
    assert [row.split()[0] for row in lines[3:8]] == [
        e.key.split()[0] for e in sorted(ours, key=lambda e: -e.cpu_time_total)][:5]
    assert totals == sorted(totals, reverse=True)


def test_times_nest():
    prof = profiled(cr)
    events = prof.events()
    for e in events:
        assert e.cpu_time_total >= 0 and e.self_cpu_time_total >= -1e-9
        assert e.self_cpu_time_total == pytest.approx(
            e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
        for c in e.cpu_children:
            assert c.cpu_parent is e and e.start_us <= c.start_us <= c.end_us <= e.end_us
    node = next(e for e in events if e.name == "SinBackward0")
    assert node.cpu_parent.name == "autograd::engine::evaluate_function: SinBackward0"
    assert sorted(c.name for c in node.cpu_children) == ["aten::cos", "aten::mul"]
    total = events.key_averages().self_cpu_time_total
    assert total == pytest.approx(sum(e.self_cpu_time_total for e in events))


@BOTH
def test_record_function(m):
    @m.profiler.record_function("decorated")
    def step(x):
        return x * 3

    x = m.ones(2)
    with m.profiler.profile() as prof:
        with m.profiler.record_function("block"):
            step(x)
            step(x)
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["block"] == 1 and counts["decorated"] == 2
    block = next(e for e in prof.events() if e.name == "block")
    assert [c.name for c in block.cpu_children] == ["decorated", "decorated"]
    with m.profiler.record_function("outside a profile"):
        step(x)
    assert m.autograd.profiler.record_function is m.profiler.record_function


def test_chrome_trace(tmp_path):
    prof = profiled(cr, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == len(prof.events())
    for e in complete:
        assert {"name", "ts", "dur", "pid", "tid", "cat"} <= e.keys() and e["dur"] >= 0
    names = [e["name"] for e in complete]
    assert names.count("aten::mul") == 9 and "autograd::engine::evaluate_function: SinBackward0" \
        in names
    mul = next(e for e in complete if e["name"] == "aten::mul")
    assert mul["args"]["Input Dims"] == [[4, 3], []]
    assert {e["name"] for e in trace["traceEvents"] if e["ph"] == "M"} >= {"process_name",
                                                                           "thread_name"}
    gz = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(gz))
    assert json.loads(gzip.decompress(gz.read_bytes()))["traceEvents"] == trace["traceEvents"]


def test_memory_and_stack_columns(tmp_path):
    x = cr.ones(4, 3)
    with cr.profiler.profile(profile_memory=True, with_stack=True) as prof:
        y = x * 2  # the line the Source Location names
        y.add_(1)
    table = prof.key_averages(group_by_stack_n=3).table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "Source Location" in table
    assert "Source Location" not in prof.key_averages().table()
    mul = next(e for e in prof.events() if e.name == "aten::mul")
    assert mul.self_cpu_memory_usage == 4 * 3 * 4
    assert next(e for e in prof.events() if e.name == "aten::add_").self_cpu_memory_usage == 0
    assert mul.stack[0].startswith(__file__ + "(") and mul.stack[0].endswith(
        "test_memory_and_stack_columns")
    stacks = tmp_path / "stacks.txt"
    prof.export_stacks(str(stacks))
    assert stacks.read_text().count("\n") == 2


def test_stack_of_a_backward_op_starts_at_the_users_backward_call():
    x = cr.ones(4, 3, requires_grad=True)
    with cr.profiler.profile(with_stack=True) as prof:
        y = (x * x).sum()
        y.backward()  # the line the backward's ops name
    mul = [e for e in prof.events() if e.name == "aten::mul"]
    assert len(mul) == 3  # x * x, and MulBackward0's two products
    for event in mul[1:]:
        assert event.stack[0].startswith(__file__ + "(") and event.stack[0].endswith(
            "test_stack_of_a_backward_op_starts_at_the_users_backward_call"), event.stack


def test_only_the_profiling_thread_is_recorded():
    x = cr.ones(3, requires_grad=True)
    done = threading.Event()
    go = threading.Event()

    def other():
        go.wait()
        (x * 5).sum().backward()
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with cr.profiler.profile() as prof:
        go.set()
        done.wait()
        x * 2
    t.join()
    assert [e.name for e in prof.events()] == ["aten::mul"]


def test_nested_profiles_raise():
    with cr.profiler.profile(), pytest.raises(RuntimeError, match="already enabled"):
        with cr.profiler.profile():
            pass


@BOTH
@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")
def test_schedule_and_on_trace_ready(m):
    sched = m.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    assert [sched(i).name for i in range(10)] == [
        "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "WARMUP", "RECORD",
        "RECORD_AND_SAVE", "NONE", "NONE"]
    traces = []

    def ready(prof):
        traces.append(sorted({e.key for e in prof.key_averages()
                              if e.key.startswith("ProfilerStep")}))

    x = m.ones(2)
    with m.profiler.profile(schedule=sched, on_trace_ready=ready) as prof:
        for _ in range(9):
            x * 2
            prof.step()
    assert traces == [["ProfilerStep*"], ["ProfilerStep*"]]
    steps = [e for e in prof.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#6", "ProfilerStep#7"]


def test_legacy_autograd_profiler():
    with cr.autograd.profiler.profile(record_shapes=True) as prof:
        program(cr)
    assert "aten::mul" in prof.table() and "aten::mul" in str(prof)
    assert prof.self_cpu_time_total == pytest.approx(prof.function_events.self_cpu_time_total)
    assert {e.key: e.count for e in prof.key_averages()}["aten::sin"] == 3
    with cr.autograd.profiler.profile(enabled=False) as prof:
        program(cr)
    assert len(prof.function_events) == 0


def test_activities_and_options_accepted():
    assert [a.name for a in cr.profiler.ProfilerActivity] == list(
        torch.profiler.ProfilerActivity.__members__)
    with cr.profiler.profile(activities=[cr.profiler.ProfilerActivity.CPU,
                                         cr.profiler.ProfilerActivity.CUDA],
                             with_flops=True, with_modules=True, acc_events=True) as prof:
        program(cr)
    assert prof.key_averages().table(sort_by="cuda_time_total", row_limit=3).count("\n") == 8
