"""torch.profiler.ExecutionTraceObserver against torch's: the observer's states, the trace
file's layout (schema, process and thread nodes, each node's fields and attributes), the nodes
of a forward, a record_function range and a backward (names, nesting, tensor encodings, the
seq_id joining a forward op to its backward node), compression, and the observer inside a
profile. chainrule's traces hold chainrule's ops: the tests compare what both record."""

import gzip
import json
import warnings

import pytest
import torch
import torch.profiler

import chainrule
import chainrule.profiler

LIBS = {"torch": (torch, torch.profiler), "chainrule": (chainrule, chainrule.profiler)}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def attrs(node) -> dict:
    return {a["name"]: a["value"] for a in node["attrs"]}


def trace_of(name, path, program):
    lib, prof = LIBS[name]
    observer = prof.ExecutionTraceObserver().register_callback(str(path))
    observer.start()
    program(lib, prof)
    observer.stop()
    observer.unregister_callback()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def training_step(lib, prof):
    x = lib.ones(2, 3, requires_grad=True)
    with prof.record_function("## block ##"):
        y = (x * x).sum()
    y.backward()


def test_observer_states(tmp_path):
    def states(name):
        _, prof = LIBS[name]
        observer = prof.ExecutionTraceObserver()
        facts = [observer.is_registered, observer.is_running(), observer.get_output_file_path()]
        observer.start()
        facts.append(observer.is_running())  # not registered: start does nothing
        path = str(tmp_path / f"{name}.json")
        assert observer.register_callback(path) is observer
        facts += [observer.is_registered, observer.get_output_file_path() == path,
                  observer.output_file_path_observer == path, observer.get_resources_dir()]
        observer.start()
        facts.append(observer.is_running())
        observer.stop()
        facts.append(observer.is_running())
        observer.set_extra_resource_collection(True)
        facts.append(observer.get_resources_dir() == str(tmp_path / f"{name}_resources"))
        observer.cleanup()
        facts += [observer.is_registered, observer.is_running(),
                  prof.ExecutionTraceObserver.get_resources_dir_for_et_path(path) is not None,
                  prof.ExecutionTraceObserver.get_resources_dir_for_et_path(
                      str(tmp_path / "none.json"))]
        return facts
    assert states("chainrule") == states("torch")


def test_the_trace_layout(tmp_path):
    def layout(name):
        trace = trace_of(name, tmp_path / f"{name}.json", training_step)
        nodes = trace["nodes"]
        process, thread = nodes[-1], nodes[0]
        return [sorted(trace), trace["schema"], type(trace["pid"]).__name__,
                trace["finish_ts"] >= trace["start_ts"], len(trace["time"]),
                (process["id"], process["name"], process["ctrl_deps"]),
                (thread["name"], thread["ctrl_deps"], attrs(thread)["tid"]),
                sorted(nodes[1]), sorted(nodes[1]["inputs"]),
                [(a["name"], a["type"]) for a in nodes[1]["attrs"]],
                len({n["id"] for n in nodes}) == len(nodes)]
    assert layout("chainrule") == layout("torch")


def recorded(trace) -> dict:
    """What both libraries' traces of training_step say: the ops and ranges, where they sit."""
    nodes = {n["id"]: n for n in trace["nodes"]}
    names = {i: n["name"] for i, n in nodes.items()}

    def first(name, parent=None):
        return next(n for n in trace["nodes"] if n["name"] == name
                    and (parent is None or n["ctrl_deps"] == parent))

    block = first("## block ##")
    mul, total = first("aten::mul", block["id"]), first("aten::sum", block["id"])
    mul_backward, sum_backward = first("MulBackward0"), first("SumBackward0")
    accumulate = first("torch::autograd::AccumulateGrad")
    x = mul["inputs"]["values"][0]
    return {
        "forward under the range": (names[mul["ctrl_deps"]], names[total["ctrl_deps"]]),
        "range": (names[block["ctrl_deps"]], attrs(block)["scope"], block["inputs"]["values"]),
        "mul": (mul["inputs"]["types"], mul["inputs"]["shapes"], mul["inputs"]["strides"],
                x[2:], mul["inputs"]["values"][1] == x, mul["outputs"]["types"],
                mul["outputs"]["shapes"], mul["outputs"]["strides"], attrs(mul)["scope"]),
        "backward nodes": [
            (names[n["ctrl_deps"]], attrs(n)["scope"], attrs(n)["fw_parent"] == n["ctrl_deps"],
             attrs(n)["fw_tid"], n["inputs"]["types"], n["outputs"]["values"])
            for n in (sum_backward, mul_backward, accumulate)],
        "seq_ids join": (attrs(mul)["seq_id"] == attrs(mul_backward)["seq_id"] >= 0,
                         attrs(total)["seq_id"] == attrs(sum_backward)["seq_id"] >= 0,
                         attrs(accumulate)["seq_id"]),
        "a backward rule's ops": [n["name"] for n in trace["nodes"]
                                  if n["ctrl_deps"] == mul_backward["id"]],
        "completion order": [n["id"] for n in trace["nodes"]].index(mul["id"])
        < [n["id"] for n in trace["nodes"]].index(block["id"]),
    }


def test_what_a_training_step_records(tmp_path):
    ours = recorded(trace_of("chainrule", tmp_path / "ours.json", training_step))
    theirs = recorded(trace_of("torch", tmp_path / "theirs.json", training_step))
    assert ours == theirs
    assert theirs["a backward rule's ops"] == ["aten::mul", "aten::mul"]


def test_views_share_storage_ids(tmp_path):
    def program(lib, prof):
        x = lib.arange(6.0).reshape(2, 3)
        x.t().sum(dim=1, keepdim=True)

    def facts(name):
        trace = trace_of(name, tmp_path / f"{name}.json", program)
        t = next(n for n in trace["nodes"] if n["name"] == "aten::t")
        source, view = t["inputs"]["values"][0], t["outputs"]["values"][0]
        return [source[1] == view[1], source[0] != view[0], view[2:], t["outputs"]["shapes"],
                t["outputs"]["strides"]]
    assert facts("chainrule") == facts("torch")
    # chainrule's op records: the parameters follow the tensors (here dim and keepdim)
    trace = trace_of("chainrule", tmp_path / "params.json", program)
    total = next(n for n in trace["nodes"] if n["name"].startswith("aten::sum"))
    assert total["inputs"]["values"][1:] == [[1], True]
    assert total["inputs"]["types"] == ["Tensor(float)", "GenericList[Int]", "Bool"]


def test_compressed_trace(tmp_path, capsys):
    def run(name):
        trace = trace_of(name, tmp_path / f"{name}.json.gz", training_step)
        printed = capsys.readouterr().out
        return (trace["schema"], printed.startswith("Execution Trace: compressing "),
                printed.rstrip().endswith(f"{name}.json.gz"))
    assert run("chainrule") == run("torch") == ("1.1.1-chakra.0.0.4", True, True)


def test_observer_inside_a_profile(tmp_path):
    def run(name):
        lib, prof = LIBS[name]
        path = str(tmp_path / f"{name}.json")
        observer = prof.ExecutionTraceObserver().register_callback(path)
        with prof.profile(activities=[prof.ProfilerActivity.CPU],
                          execution_trace_observer=observer):
            lib.ones(3).mul(2)
        state = (observer.is_registered, observer.is_running())
        with open(path) as f:
            names = [n["name"] for n in json.load(f)["nodes"]]
        return state, "aten::mul" in names
    assert run("chainrule") == run("torch") == ((False, False), True)


def test_observer_from_the_environment(monkeypatch):
    def run(name):
        _, prof = LIBS[name]
        monkeypatch.delenv("ENABLE_PYTORCH_EXECUTION_TRACE", raising=False)
        absent = prof.ExecutionTraceObserver.build_execution_trace_obs_from_env()
        monkeypatch.setenv("ENABLE_PYTORCH_EXECUTION_TRACE", "1")
        observer = prof.ExecutionTraceObserver.build_execution_trace_obs_from_env()
        try:
            return (absent, observer.is_registered,
                    observer.get_output_file_path().endswith(".et.json"),
                    observer.extra_resources_collection)
        finally:
            observer.unregister_callback()
    assert run("chainrule") == run("torch") == (None, True, True, False)
