"""The Scenarios page's compare picker follows the saved list (a stale default hid the comparison)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "infercost/ui/pages/scenarios.py")


def save(at: AppTest, name: str) -> None:
    at.text_input(key="name").set_value(name)
    at.button(key="save_scenario").click().run()
    assert not at.exception


def test_a_second_saved_scenario_is_compared_with_the_first():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    save(at, "first")
    save(at, "second")
    assert sorted(at.multiselect(key="compare_names").value) == ["first", "second"]
    assert not any("Pick two or more" in info.value for info in at.info)


def test_a_deleted_scenario_leaves_the_picker():
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    for name in ("a", "b", "c"):
        save(at, name)
    at.selectbox(key="scenario_selected").set_value("a").run()
    at.button(key="delete_scenario").click().run()
    assert not at.exception
    assert "a" not in at.multiselect(key="compare_names").value
    assert len(at.multiselect(key="compare_names").value) == 2
