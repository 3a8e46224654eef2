"""What the pages say in words: one plain sentence, never a list of slivers (the break-even of issue 24)."""

from infercost.costmodel.breakeven import describe_regions

STEP = 136_500.0  # calls/day one replica carries: the walkthrough's setup won only just below each step


def test_slivers_before_each_replica_step_read_as_one_phrase():
    slivers = [(STEP * k - 700, STEP * k) for k in range(1, 1481)]
    words = describe_regions(slivers)
    assert words == ("cheaper only in 1,480 narrow windows between 136k and 202M calls/day, each just before "
                     "another replica is needed")
    assert "more windows" not in words


def test_a_range_to_plan_on_is_named_and_the_slivers_summed_up_after_it():
    words = describe_regions([(STEP - 700, STEP), (2 * STEP - 700, 2 * STEP), (300_000, 420_000), (5e6, None)])
    assert words == ("cheaper from 300k to 420k and above 5M calls/day, otherwise only in 2 narrow windows between "
                     "136k and 273k calls/day, each just before another replica is needed")
