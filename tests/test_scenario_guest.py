"""The scenario harness's hang report (tests/scenario_guest.py) on a real guest: a scenario
still running when the report is due lists its tasks with their kernel stacks, and the
parser keeps the report out of the scenario's values."""

from __future__ import annotations

import pytest

from scenario_guest import (BOOT_TIMEOUT, BUSYBOX, HANG_REPORT_S, INIT_PREAMBLE, QEMU, boot,
                            scenario_initramfs)

pytestmark = [
    pytest.mark.skipif(QEMU is None, reason="qemu-system-x86_64 not installed"),
    pytest.mark.skipif(not BUSYBOX.is_file(), reason="busybox-static not installed (/bin/busybox)"),
]

# The report falls due after 2 s here; the scenario outlives it in a sleep, then ends.
EARLY_REPORT_INIT = INIT_PREAMBLE.replace(f"sleep {HANG_REPORT_S}", "sleep 2") + r"""
echo "SCHEDTEST-BEGIN slow"
echo "before=1"
sleep 8
echo "after=1"
echo "SCHEDTEST-END"
poweroff -f
"""


@pytest.mark.timeout(2 * BOOT_TIMEOUT)
def test_a_scenario_past_its_report_time_lists_its_tasks_and_their_stacks(tmp_path):
    from schedlab.guest import kernel as K

    assert f"sleep {HANG_REPORT_S}" in INIT_PREAMBLE
    initramfs = scenario_initramfs(tmp_path, EARLY_REPORT_INIT, {}, {})
    values, _, console = boot(K.build_kernel(progress=lambda s: None), initramfs, "slow")

    assert values == {"before": "1", "after": "1"}, console[-3000:]
    report = [line for line in console.splitlines() if line.startswith("log: hang: ")]
    # The init script's sleep, seen sleeping with a kernel stack under it.
    sleeps = [line for line in report if line.startswith("log: hang: sleep ")
              and " state=S " in line]
    assert sleeps, "\n".join(report)
    assert any("hrtimer_nanosleep" in line or "do_nanosleep" in line for line in report), \
        "\n".join(report)
