"""How every number is computed: the cost semantics, stated once (the README says the same)."""

from importlib import resources

import streamlit as st

st.markdown(resources.files("infercost.ui").joinpath("methodology.md").read_text(encoding="utf-8"))
