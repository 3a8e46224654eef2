"""How every number is computed: the cost semantics, stated once in docs/methodology.md and shown here as it is."""

import streamlit as st

from infercost.docs_cli import DOCS

st.markdown((DOCS / "methodology.md").read_text(encoding="utf-8"))
