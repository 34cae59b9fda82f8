"""The expected verdicts follow from the published lists by NVIDIA's rules."""

import pytest

from expectations import EXPECTED, GPUS, SOURCES, verdict


@pytest.mark.parametrize("env,component", sorted(SOURCES))
def test_expected_verdicts_follow_from_the_lists(env, component):
    arch_list = SOURCES[(env, component)]
    derived = {gpu: verdict(arch_list.sass, arch_list.ptx, cc) for gpu, cc in GPUS.items()}
    assert EXPECTED[env][component] == derived, arch_list.source


def test_rules_on_known_cases():
    # sm_86 SASS runs on 8.9 (same major, higher minor), not on 9.0 or 12.0.
    assert verdict(["sm_86"], [], (8, 9)) == "native"
    assert verdict(["sm_86"], [], (9, 0)) == "no-image"
    # sm_90a only on 9.0; PTX compute_80 JIT-compiles for 12.0.
    assert verdict(["sm_90a"], [], (10, 0)) == "no-image"
    assert verdict(["sm_90a"], ["compute_80"], (12, 0)) == "ptx-jit"
    assert verdict([], [], (9, 0)) == "no-device-code"
