"""GPU datasheets: the GPUs people rent now, each saying which dtypes its tensor cores run natively."""

import pytest

from infercost.errors import InputError
from infercost.pricing import GpuSpec, bundled_gpu_prices, bundled_gpu_specs, gpu_spec, validate_entries
from infercost.pricing.catalog import GPU_NAME_PATTERNS, canonical_gpu_name

SPECS = {spec.gpu: spec for spec in bundled_gpu_specs()}
FP4 = {"mxfp4", "nvfp4"}


def test_every_datasheet_names_its_native_dtypes_and_where_that_comes_from():
    for spec in SPECS.values():
        assert "bfloat16" in spec.native_dtypes and spec.native_dtypes_source.startswith("https://"), spec.gpu


@pytest.mark.parametrize(("gpus", "has", "lacks"), [
    (("H100 SXM", "H100 PCIe", "H200", "GH200", "H20"), {"fp8", "int8"}, FP4),  # Hopper: no FP4
    (("A100 80GB", "A100 40GB", "A100 80GB PCIe", "A100 40GB PCIe"), {"int8"}, {"fp8"} | FP4),  # Ampere: no FP8
    (("L40S", "L4", "RTX 4090"), {"fp8"}, FP4),  # Ada
    (("B200", "GB200", "RTX PRO 6000 Blackwell Server"), {"fp8", "int8", "mxfp6"} | FP4, set()),
    (("B300", "GB300"), {"fp8", "mxfp6"} | FP4, {"int8"}),  # Blackwell Ultra cut INT8 to a trickle
    (("MI300X", "MI325X"), {"fp8", "int8"}, FP4 | {"mxfp6"}),  # CDNA 3
    (("MI355X",), {"fp8", "mxfp6", "mxfp4"}, {"nvfp4"}),  # CDNA 4: OCP MX formats, not NVIDIA's NVFP4
])  # fmt: skip
def test_native_dtypes_follow_the_architecture(gpus, has, lacks):
    for gpu in gpus:
        dtypes = set(SPECS[gpu].native_dtypes)
        assert has <= dtypes and not lacks & dtypes, (gpu, dtypes)


def test_the_gpus_people_rent_now_have_datasheets_and_the_dated_offers_found():
    assert {"MI300X", "MI325X", "MI355X", "B300", "GB300", "H20"} <= set(SPECS)
    offered = {offer.gpu for offer in bundled_gpu_prices() if offer.kind == "on-demand"}
    assert {"MI300X", "MI325X", "B300"} <= offered


@pytest.mark.parametrize(("gpu", "memory_gb", "bf16", "fp8", "fp4"), [
    ("MI300X", 192, 1307.4, 2614.9, None),
    ("MI355X", 288, 2500, 5000, 10000),
    ("B300", 270, 2250, 4500, 14000),
    ("GB300", 279, 2500, 5000, 15000),
    ("H20", 96, 148, 296, None),
])  # fmt: skip
def test_new_datasheets_hold_dense_figures(gpu, memory_gb, bf16, fp8, fp4):
    """Dense, not the sparse figures the vendors print first (twice these)."""
    spec = SPECS[gpu]
    assert (spec.memory_gb, spec.bf16_dense_tflops, spec.fp8_dense_tflops, spec.fp4_dense_tflops) == (
        memory_gb, bf16, fp8, fp4)


GOOD = {"gpu": "X", "memory_gb": 80, "memory_bandwidth_gbps": 3000, "bf16_dense_tflops": 900, "fp8_dense_tflops": 1800,
        "native_dtypes": ["bfloat16", "fp8"], "native_dtypes_source": "https://x", "board_power_w": 700,
        "source": "https://x", "as_of": "2026-11-20"}  # fmt: skip


@pytest.mark.parametrize(("change", "names"), [
    ({"native_dtypes": ["bfloat16"]}, "fp8 in native_dtypes and fp8_dense_tflops go together"),
    ({"native_dtypes": ["bfloat16", "fp8", "nvfp4"]}, "an FP4 format"),
    ({"fp8_dense_tflops": None}, "fp8 in native_dtypes"),
    ({"native_dtypes": ["float16", "fp8"]}, "must include bfloat16"),
    ({"native_dtypes": ["bfloat16", "fp8", "fp8"]}, "twice"),
    ({"native_dtypes": ["bfloat16", "fp8", "fp4"]}, r"entries\[0\]\.native_dtypes"),  # not a dtype name
    ({"native_dtypes": []}, r"entries\[0\]\.native_dtypes"),
])  # fmt: skip
def test_a_datasheet_whose_dtypes_and_peaks_disagree_is_refused(change, names):
    with pytest.raises(InputError, match=names):
        validate_entries([GOOD | change], GpuSpec, name="gpu_specs.json")


def test_a_datasheet_without_native_dtypes_is_refused():
    entry = {k: v for k, v in GOOD.items() if k != "native_dtypes"}
    with pytest.raises(InputError, match=r"entries\[0\]\.native_dtypes"):
        validate_entries([entry], GpuSpec, name="gpu_specs.json")


@pytest.mark.parametrize("name, expected", [
    ("NVIDIA H200", "H200"), ("NVIDIA GH200 480GB", "GH200"), ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA A100-SXM4-40GB", "A100 40GB"), ("NVIDIA A100-SXM4-80GB",
    "A100 80GB"), ("NVIDIA L40S", "L40S"), ("NVIDIA L4", "L4"), ("NVIDIA A10G", "A10G"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("NVIDIA GB200", "GB200"), ("NVIDIA GB300", "GB300"), ("NVIDIA B300 SXM6 AC", "B300"), ("NVIDIA B200", "B200"),
    ("NVIDIA H20", "H20"), ("NVIDIA H200 NVL", "H200"), ("AMD Instinct MI300X", "MI300X"),
    ("AMD Instinct MI300X VF", "MI300X"), ("AMD Instinct MI325X", "MI325X"), ("AMD Instinct MI355X", "MI355X"),
    ("NVIDIA L20", "L20"), ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Server"),
])
def test_driver_names_map_to_catalog_names(name, expected):
    assert canonical_gpu_name(name) == expected


def test_no_pattern_is_shadowed_by_an_earlier_one():
    """First match wins over substrings, so "h20" before "h200" would call every H200 an H20: each pattern's own
    text must come back as its own name."""
    for patterns, name in GPU_NAME_PATTERNS:
        assert canonical_gpu_name(" ".join(patterns)) == name, patterns


def test_every_datasheet_gpu_is_reachable_from_a_driver_name():
    assert {spec.gpu for spec in bundled_gpu_specs()} <= {name for _, name in GPU_NAME_PATTERNS}


def test_unknown_gpu_has_no_name():
    assert canonical_gpu_name("Some Future Accelerator") is None


@pytest.mark.parametrize(("written", "expected"), [
    ("H100", "H100 SXM"), ("h100-sxm", "H100 SXM"), ("H100_SXM", "H100 SXM"), ("h100 pcie", "H100 PCIe"),
    ("A100", "A100 80GB"), ("a100-40gb", "A100 40GB"), ("mi300x", "MI300X"), ("RTX4090", "RTX 4090"),
    ("NVIDIA H200", "H200"), ("gb200 nvl72", "GB200"), ("b200", "B200"),
])  # fmt: skip
def test_a_gpu_is_found_as_people_write_it(written, expected):
    assert gpu_spec(written).gpu == expected


def test_a_gpu_without_a_datasheet_is_refused_naming_the_known_ones():
    with pytest.raises(InputError) as raised:
        gpu_spec("L40")  # a name the driver patterns know, with no datasheet bundled
    assert raised.value.field == "gpu" and "H100 SXM" in str(raised.value)
