"""The paper's own numbers, to stand beside ours (SPEC §4, §9 and the paper's text).

The paper's tables and figures are images; only the values its text states are
here, each with where it is stated. A log's model matches a paper model by name
(``gpt-4o`` but not ``gpt-4o-mini``; ``claude`` + ``sonnet-4.6``; ``qwen3.6``;
``glm-5.1``; ``internvl3-2b`` / ``-8b``).
"""

from __future__ import annotations

import re

PAPER_MODELS: dict[str, re.Pattern[str]] = {
    "GPT-4o": re.compile(r"gpt-4o(?!-mini)", re.IGNORECASE),
    "Claude-Sonnet-4.6": re.compile(r"claude.*sonnet.*4[.-]6", re.IGNORECASE),
    "Qwen3.6-Plus": re.compile(r"qwen-?3\.6", re.IGNORECASE),
    "GLM-5.1": re.compile(r"glm-?5\.1", re.IGNORECASE),
    "InternVL3-2B": re.compile(r"internvl-?3-2b", re.IGNORECASE),
    "InternVL3-8B": re.compile(r"internvl-?3-8b", re.IGNORECASE),
}


def paper_model(label: str) -> str | None:
    """The paper's name of the navigator in ``label`` (the part before any auditor)."""
    navigator = label.split(" (auditor ", 1)[0]
    return next((name for name, pattern in PAPER_MODELS.items() if pattern.search(navigator)), None)


NAVIGATION: dict[tuple[str, str, str], dict[str, float]] = {
    # Table 3 / SPEC §9 (GPT-4o, text, L2, 50 seeds x 5 episodes)
    ("GPT-4o", "L2", "nomemory"): {"success": 0.288, "death": 0.280},
    ("GPT-4o", "L2", "nofilter"): {"success": 0.144, "death": 0.744},
    ("GPT-4o", "L2", "omcd"): {"success": 0.328, "death": 0.316},
}
"""(paper model, regime, strategy) -> success and death rates (text mode)."""

CONTRASTS: dict[tuple[str, str, str, str], str] = {
    # p-values as the paper states them (its method unstated: see P_VALUES)
    # §5.3: OMCD success gains over NoFilter on GPT-4o, "all p<0.001"
    ("GPT-4o", "L1", "omcd", "nofilter"): "+14.4 pp, p<0.001",
    ("GPT-4o", "L2", "omcd", "nofilter"): "+18.4 pp (Table 3), p<0.001",
    ("GPT-4o", "L3", "omcd", "nofilter"): "+24.4 pp, p<0.001",
    # §5.3: Oracle vs NoFilter raises L2/L3 success by 18-24 pp (p<1e-5)
    ("GPT-4o", "L2", "oracle", "nofilter"): "+18 to +24 pp (L2/L3), p<1e-5",
    ("GPT-4o", "L3", "oracle", "nofilter"): "+18 to +24 pp (L2/L3), p<1e-5",
    # §5.3: Oracle vs OMCD, no detectable difference in any regime
    ("GPT-4o", "L1", "oracle", "omcd"): "|diff| <= 2 pp, p>0.2",
    ("GPT-4o", "L2", "oracle", "omcd"): "|diff| <= 2 pp, p>0.2",
    ("GPT-4o", "L3", "oracle", "omcd"): "|diff| <= 2 pp, p>0.2",
}
"""(paper model, regime, strategy A, strategy B) -> the paper's success contrast A - B."""

STEPS: dict[tuple[str, str, str], float] = {
    # Table 6 / Fig. 6 / §5.4 / SPEC §9 (L2, text): mean steps by outcome
    ("GPT-4o", "nofilter", "death"): 8.5,
    ("GPT-4o", "nofilter", "success"): 14.5,
    ("Claude-Sonnet-4.6", "nofilter", "death"): 7.8,
    ("Claude-Sonnet-4.6", "nofilter", "success"): 14.6,
    ("Claude-Sonnet-4.6", "nomemory", "death"): 16.1,
    ("Claude-Sonnet-4.6", "nomemory", "success"): 14.8,
    ("Claude-Sonnet-4.6", "omcd", "success"): 15.0,
    ("Qwen3.6-Plus", "nofilter", "death"): 6.8,
    ("Qwen3.6-Plus", "omcd", "death"): 3.1,
}
"""(paper model, strategy, outcome) -> mean steps (L2, text)."""
STEPS_REGIME = "L2"

DETECTION_F1: dict[tuple[str, str], float] = {
    # §5.2: vision F1 averaged over regimes; InternVL3 text F1 "about"
    ("Qwen3.6-Plus", "vision"): 0.887,
    ("GLM-5.1", "vision"): 0.067,
    ("InternVL3-2B", "text"): 0.22,
    ("InternVL3-8B", "text"): 0.31,
}
"""(paper model, modality) -> mean F1 over L1-L3."""

VISION_DELTA: dict[str, float] = {
    # §5.2: vision - text F1, averaged over regimes
    "Qwen3.6-Plus": -0.011,
    "Claude-Sonnet-4.6": -0.134,
    "GPT-4o": -0.598,
    "GLM-5.1": -0.830,
}

FLAG_RATES: dict[tuple[str, str], float] = {
    # Fig. 4 (vision, L1+L2 pooled): SAFE_hole = deadly stale, SAFE_safe = correct safe
    ("Claude-Sonnet-4.6", "SAFE_hole"): 0.925,
    ("Claude-Sonnet-4.6", "SAFE_safe"): 0.014,
    ("GLM-5.1", "SAFE_hole"): 0.045,
    ("GLM-5.1", "SAFE_safe"): 0.050,
}

THAW_FREEZE: dict[tuple[str, str, str], float] = {
    # Fig. 8 / App. H.2 (Claude, vision, L2): thaw N=436, freeze N=121
    ("Claude-Sonnet-4.6", "L2", "thaw"): 0.945,
    ("Claude-Sonnet-4.6", "L2", "freeze"): 0.636,
}

CORRELATION = "GPT-4o text: Pearson r in [+0.005, +0.060], all p > 0.67; |Spearman rho| <= 0.05 (App. H.3)"

P_VALUES = (
    "The paper's p-values (column *paper*) are quoted as it states them, not recomputed: it does not say how "
    "it computed them. scipy's `wilcoxon` default, the usual call in a Python harness such as the paper's, "
    "falls back to the normal approximation whenever paired differences tie or are zero (before scipy 1.15 "
    "at any number of pairs, from 1.15 on above 13, so at the paper's 50 seeds in any release), and per-seed "
    "rates over 5 episodes nearly always tie; the approximation errs either way (5 of 15 pairs +1, none "
    "-1: 0.025 against the exact 0.0625), so a small p of the paper may not hold exactly. Ours are exact."
)
"""Beside every table that quotes the paper's p-values (§5.2, §5.3)."""
CORRELATION_P_VALUES = (
    "The paper does not say how it computed these p-values either (scipy's `pearsonr` assumes bivariate "
    "normality, `spearmanr` uses a t approximation); ours are permutation p-values."
)

BATCH_DELTA: dict[int, float] = {
    # App. E (GPT-4o, L1, text): F1(B) - F1(B=10); B=10 itself is about 0.911 (App. D)
    1: +0.027,
    10: 0.0,
    20: -0.036,
}
BATCH_F1_B10 = 0.911

STALE_RATIO: dict[str, tuple[float, float, float, float]] = {
    # SPEC §4 / App. A: mean, std, min, max over the 50 default seeds
    "L1": (0.094, 0.011, 0.078, 0.109),
    "L2": (0.141, 0.014, 0.109, 0.172),
    "L3": (0.143, 0.028, 0.078, 0.219),
}
