"""App test-suite of posviz: every page driven through Streamlit's AppTest, with assertions on the data inside
its charts (compared with the posviz core and with closed-form formulas), in both languages and from URLs."""
