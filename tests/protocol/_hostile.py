"""Hypothesis strategies for the readers' property tests: any JSON a model might write,
and text drawn mostly from the characters an answer's structure is made of."""

from __future__ import annotations

from hypothesis import strategies as st


def json_values(text_size: int = 20, key_size: int = 12) -> st.SearchStrategy[object]:
    """Any JSON value, nested up to 30 leaves: what a hostile or confused model returns."""
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=text_size),
        lambda children: (
            st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=key_size), children, max_size=5)
        ),
        max_leaves=30,
    )


def answer_text(alphabet: str) -> st.SearchStrategy[str]:
    """Any text, or text of ``alphabet`` (brackets, quotes and the words of an answer), up
    to 300 characters: near misses of every form a reader accepts."""
    return st.one_of(st.text(max_size=400), st.text(alphabet=st.sampled_from(list(alphabet)), max_size=300))
