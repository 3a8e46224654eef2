"""The fingerprint says what ran the measurement, and nothing about who ran it."""

import json
import platform
import socket

from infercost.runner.hardware import cpu_model, fingerprint, gpu_limits, gpu_power_watts


def test_fingerprint_has_the_machine_and_the_software():
    facts = fingerprint()
    assert facts["cpu_cores_logical"] >= 1 and facts["memory_bytes"] > 0
    assert facts["cpu"] == cpu_model() and facts["cpu"]
    assert facts["python"] == platform.python_version()
    assert facts["torch"] and facts["transformers"]
    assert isinstance(facts["gpus"], list)
    json.dumps(facts)  # stored as JSON as it is


def test_fingerprint_holds_no_hostname():
    assert socket.gethostname() not in json.dumps(fingerprint())


def test_power_reading_is_a_number_or_absent():
    watts = gpu_power_watts()
    assert watts is None or watts >= 0


def test_gpu_limits_come_from_the_catalog_for_a_known_gpu():
    facts = {"gpus": [{"name": "NVIDIA H100 80GB HBM3"}]}
    limits = gpu_limits(facts)
    assert limits is not None and limits.gpu == "H100 SXM" and limits.memory_bandwidth_gbps == 3350


def test_gpu_limits_are_absent_without_a_known_gpu():
    assert gpu_limits({"gpus": []}) is None
    assert gpu_limits({"gpus": [{"name": "Mystery Accelerator 9000"}]}) is None
