"""infercost's web app: only the list of pages; everything else lives in infercost/."""

import streamlit as st

from infercost.errors import InputError
from infercost.scenarios import apply_query_params, form_in_url
from infercost.store import describe
from infercost.ui.format import show_every_tag
from infercost.ui.state import WORKLOAD_DEFAULTS, keep_widget_state, profile_document

st.set_page_config(page_title="infercost", page_icon=":material/payments:", layout="wide")
keep_widget_state(st.session_state)
try:  # a shared scenario link fills the form once
    apply_query_params(st.session_state, st.query_params, WORKLOAD_DEFAULTS)
except InputError as error:
    st.error(f"The link's {error.field}: {error.reason}")
pages = [
    st.Page("infercost/ui/pages/bill.py", title="Workload and bill", icon=":material/receipt_long:", default=True),
    st.Page("infercost/ui/pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("infercost/ui/pages/scenarios.py", title="Scenarios", icon=":material/bookmarks:"),
    st.Page("infercost/ui/pages/prices.py", title="Prices", icon=":material/sell:"),
    st.Page("infercost/ui/pages/models.py", title="Models", icon=":material/memory:"),
    st.Page("infercost/ui/pages/tokens.py", title="Tokens", icon=":material/token:"),
    st.Page("infercost/ui/pages/benchmark.py", title="Benchmark", icon=":material/speed:"),
    st.Page("infercost/ui/pages/batch.py", title="Batch jobs", icon=":material/dynamic_feed:"),
    st.Page("infercost/ui/pages/methodology.py", title="Methodology", icon=":material/functions:"),
]
show_every_tag()  # on every page: Compare's setups picker cut its fifth tag on a phone
st.sidebar.caption(f"Store: {describe()}")  # which database this app reads and writes (never its password)


def keep_form_in_url() -> None:
    """The address bar carries the form, so a reload or a bookmark opens it as it was left."""
    if not all(key in st.session_state for key in WORKLOAD_DEFAULTS):  # no page has set the form up yet
        return
    try:
        query = form_in_url(st.session_state, profile_document(st.session_state), st.query_params)
    except InputError:
        query = None  # a value the URL cannot carry (the form shows its own error): the address keeps the last one
    if query is not None:
        st.query_params.from_dict(query)


page = st.navigation(pages)
keep_form_in_url()  # before the page: one that ends early (st.stop(), as Scenarios does below two saved) never
page.run()  # returns here, and a page switch had cleared the address (a reload there lost the form)
keep_form_in_url()  # and after it, for what the page itself changed in this run
