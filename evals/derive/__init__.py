"""Evaluation cases derived from the corpus facts, not written by hand.

Each case family (``families/``) turns every row of a committed corpus file into tool calls
whose expected answer is that row's fact, so accuracy is measured against the official data
as a whole rather than the hand-picked golden scenarios. Cases are ordinary scenarios (tagged
``derived`` and ``family:<name>``): the runner, run log, report and gate treat them alike.
"""
