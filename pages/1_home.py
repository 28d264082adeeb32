"""Home: what posviz is and a map of the families."""

import streamlit as st

import posviz
from posviz.ui import intro, t

intro("home")

st.subheader(t("home.families"))
columns = st.columns(3)
for i, fam in enumerate(posviz.FAMILIES.values()):
    with columns[i % 3].container(border=True):
        st.page_link(fam.page, label=t(f"family.{fam.key}.name"), icon=":material/arrow_forward:")
        st.caption(t(f"family.{fam.key}.summary"))
        st.caption(f"{t('home.enters', how=t(f'enters.{fam.enters}'))} · {fam.paper}")
