"""ftrace's function graph output parsed into nested calls (schedlab.analysis.function_graph),
and study 3's micro-schedules read from them (lee.micro_schedule_parts), on the lines of a
real QEMU run (tests/data/function_graph/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedlab.analysis import function_graph, lee

TRACE = Path(__file__).parent / "data" / "function_graph" / "qemu-region-unify.txt"


@pytest.fixture(scope="module")
def parsed():
    return function_graph.parse(TRACE.read_text())


def test_calls_nest_and_a_call_that_migrates_returns_on_another_cpu(parsed):
    calls, _ = parsed
    first = calls[calls["function"] == "handle_mm_fault"].iloc[0]
    assert (first["cpu"], first["exit_cpu"], first["duration_us"]) == (2, 0, 3370.538)
    assert first["start"] == 8.879783 and first["end"] == 8.883142
    nested = function_graph.inside(calls, int(first.name))
    assert nested["function"].tolist() == ["sched_region_fault", "migrate_task_to",
                                           "change_protection", "change_protection",
                                           "change_protection", "flush_tlb_mm_range",
                                           "on_each_cpu_cond_mask", "flush_tlb_func"]
    # children: only the direct ones; depths follow the nesting
    region = nested.index[0]
    assert function_graph.children(calls, region)["function"].tolist() == [
        "migrate_task_to", "change_protection", "change_protection", "change_protection",
        "flush_tlb_mm_range"]
    assert nested["depth"].tolist() == [1, 2, 2, 2, 2, 2, 3, 4]


def test_a_return_printed_after_its_leaf_replaces_the_leafs_duration(parsed):
    # 9.144180 on CPU 2 "migrate_task_to();" 4924.397 us, then "} /* migrate_task_to */"
    # 2579.237 us on CPU 0: the return on the CPU it arrived at is the call's.
    calls, _ = parsed
    move = calls[(calls["function"] == "migrate_task_to") & (calls["start"] == 9.144180)]
    assert move[["exit_cpu", "duration_us"]].values.tolist() == [[0, 2579.237]]
    assert calls.loc[move["parent"].iloc[0], "function"] == "sched_region_fault"


def test_a_call_without_its_return_has_no_row_and_its_caller_keeps_its_own(parsed):
    # 9.012178: migrate_task_to's return is missing (it sorted before its call)
    calls, _ = parsed
    assert not ((calls["function"] == "migrate_task_to") & (calls["start"] == 9.012178)).any()
    fault = calls[(calls["function"] == "sched_region_fault") & (calls["start"] == 9.012158)]
    assert fault["duration_us"].tolist() == [7747.225]
    assert function_graph.children(calls, fault.index[0])["function"].tolist() == [
        "change_protection"] * 3 + ["flush_tlb_mm_range"]


def test_events_and_marks_are_comments(parsed):
    _, comments = parsed
    assert comments["text"].iloc[0] == "schedlab-roi-begin job=memlat rep=1"
    assert comments["text"].iloc[-1] == "schedlab-roi-end job=memlat rep=1"
    micro = comments[comments["text"].str.startswith("sched_region_micro_schedule")]
    assert len(micro) == 5 and set(micro["comm"]) == {"memlat"}


def test_micro_schedule_parts_split_each_move_fault(parsed):
    parts = lee.micro_schedule_parts(*parsed)
    # the faults whose migrate_task_to returned in the trace
    assert parts["start"].tolist() == [8.879824, 8.940945, 9.076660, 9.144165]
    first = parts.iloc[0]
    assert first["fault_us"] == 3370.538
    assert first["linux_fault_us"] == pytest.approx(3370.538 - 3315.376)
    assert first["migrate_us"] == 2914.913
    assert first["protect_us"] == pytest.approx(22.834 + 40.901 + 19.029)
    assert first["flush_us"] == 35.623 and first["ipi_us"] == 27.571
    assert first["regions_us"] == pytest.approx(3315.376 - 2914.913 - 82.764 - 35.623)
    assert (first["protect_calls"], first["flush_calls"]) == (3, 1)


def test_a_trace_without_marks_is_read_whole_and_garbage_is_skipped():
    text = "\n".join(line for line in TRACE.read_text().splitlines()
                     if "schedlab-roi" not in line) + "\nnot a trace line\n"
    calls, comments = function_graph.parse(text)
    assert len(lee.micro_schedule_parts(calls, comments)) == 4
    empty_calls, empty_comments = function_graph.parse("")
    assert empty_calls.empty and list(empty_calls.columns) == function_graph.CALL_COLUMNS
    assert lee.micro_schedule_parts(empty_calls, empty_comments).empty
