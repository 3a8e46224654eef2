"""``throughput`` as a person reads it: every load's per-user speed beside the aggregate (DESIGN: always together)."""

NIM_8B = "published:nim-trtllm-llama-3-8b-instruct-1xh100-fp8-200in-1000out"
SHAPE = ("--input-tokens", "200", "--output-tokens", "1000", "--concurrency", "1,250")


def test_the_human_view_shows_what_one_user_gets_beside_the_aggregate(cli):
    # Regression: the table gave output tokens/s of the whole replica and TPOT only, so reading "14,000 tokens/s"
    # as one user's speed took arithmetic the README's tour left to the reader.
    points = cli("throughput", NIM_8B, *SHAPE, "--json").json()["points"]
    shown = cli("throughput", NIM_8B, *SHAPE).stdout.splitlines()
    header = next(line.split() for line in shown if line.startswith("concurrency"))
    rows = [line.split() for line in shown if line.split()[:1] in (["1"], ["250"])]
    column = header.index("user_tokens_per_s")
    for point, row in zip(points, rows, strict=True):
        assert float(row[column].replace(",", "")) == float(f"{1000 / point['mean_tpot_ms']:.4g}")
    assert float(rows[1][column]) < float(rows[0][column])  # 250 users each get less than one user alone


def test_a_roofline_setup_without_a_dtype_is_priced_in_the_checkpoints_own(cli):
    """gpt-oss-120b ships in MXFP4 only, yet roofline:gpt-oss-120b@1xH100 was priced in bfloat16 (234 GB) and refused
    for want of memory; `models show` already took the checkpoint's own dtype. Naming one still decides."""
    shape = ("--input-tokens", "1000", "--output-tokens", "100", "--concurrency", "1", "--json")
    own = cli("throughput", "roofline:gpt-oss-120b@1xH100", *shape)
    assert own.code == 0 and own.json()["dtype"] == "mxfp4"
    asked = cli("throughput", "roofline:gpt-oss-120b@1xH100:bf16", *shape)
    assert asked.code == 2 and "bfloat16" in asked.stderr and "gpus" in asked.stderr
    assert cli("throughput", "roofline:llama-3.1-8b@1xH100", *shape).json()["dtype"] == "bfloat16"
